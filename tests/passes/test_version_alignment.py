"""version-alignment: a loop whose addresses come from integers the kernel loads runs in a second version where
those integers are multiples of 16 (what the launcher's specialisation gives arguments). Checked: the same
results as the loop as written (evaluator, random data, aligned and unaligned loaded strides), that the aligned
version's copies are 16 bytes wide and asynchronous on sm_90 while the other keeps element copies, and that
loops whose addresses come only from arguments are left alone."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tilec
import tilec.language as tl
from tilec.frontend.codegen import generate
from tilec.ir.evaluator import run_kernel
from tilec.passes.manager import PassManager, tir_pipeline
from tilec.passes.version_alignment import VersionAlignment, loaded_leaves


@tilec.jit
def strided_sum(x_ptr, ld_ptr, out_ptr, rows, n_k, BM: tl.constexpr, BK: tl.constexpr):
    """out[m, :] = sum over k blocks of x[m, k * BK : (k + 1) * BK], with x's leading dimension read from memory;
    the sum also goes back over x's first block (an epilogue addressed through the loaded stride too)."""
    ld = tl.load(ld_ptr)
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    ptrs = x_ptr + rm[:, None] * ld + rk[None, :]
    acc = tl.zeros((BM, BK), dtype=tl.float32)
    for k in range(n_k):
        acc += tl.load(ptrs, mask=rm[:, None] < rows, other=0.0)
        ptrs += BK
    tl.store(out_ptr + rm[:, None] * BK + rk[None, :], acc, mask=rm[:, None] < rows)
    tl.store(x_ptr + rm[:, None] * ld + rk[None, :], acc, mask=rm[:, None] < rows)


@tilec.jit
def argument_strides(x_ptr, out_ptr, ld, n_k, BM: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BK), dtype=tl.float32)
    for k in range(n_k):
        acc += tl.load(x_ptr + rm[:, None] * ld + k * BK + rk[None, :])
    tl.store(out_ptr + rm[:, None] * BK + rk[None, :], acc)


def _module(kernel, args, constexprs):
    values = kernel._bind(args, constexprs)
    _, _, src = kernel.specialize(values)
    m = generate(src, {})
    PassManager("k").run(m, tir_pipeline())
    return m


def _strided_module():
    x = np.zeros(8, np.float32)
    return _module(strided_sum, (x, np.zeros(1, np.int32), x, 5, 3), dict(BM=8, BK=4))


def test_the_loaded_stride_is_the_leaf_and_the_loop_gets_two_versions():
    m = _strided_module()
    loop = next(op for op in m.funcs[0].walk() if op.name == "for")
    assert [v.op.name for v in loaded_leaves(loop)] == ["load"]
    assert VersionAlignment().run(m)
    version = next(op for op in m.funcs[0].body.ops if op.name == "if")
    fast, slow = (r.block.ops for r in version.regions)
    assert any(op.name == "hint" for op in fast) and [op.name for op in fast].count("for") == 1
    assert [op.name for op in slow].count("for") == 1
    assert [op.name for op in fast].count("store") == [op.name for op in slow].count("store") == 2  # epilogues
    assert not VersionAlignment().run(_module(argument_strides, (np.zeros(8, np.float32),) * 2 + (16, 2),
                                              dict(BM=8, BK=4)))


@settings(max_examples=20, deadline=None)
@given(ld=st.sampled_from([16, 32, 20, 17, 48]), rows=st.integers(1, 8), n_k=st.integers(0, 4),
       seed=st.integers(0, 2 ** 16))
def test_both_versions_compute_what_the_loop_does(ld, rows, n_k, seed):
    x = np.random.default_rng(seed).standard_normal(8 * ld + 4 * n_k + 4).astype(np.float32)
    outs = []
    for versioned in (False, True):
        m = _strided_module()
        if versioned:
            VersionAlignment().run(m)
        out = np.full(8 * 4, np.nan, np.float32)
        xs = x.copy()
        run_kernel(m, "strided_sum", [xs, np.array([ld], np.int32), out, rows, n_k], (1,))
        outs.append(out)
        outs.append(xs)
    np.testing.assert_array_equal(outs[0], outs[2])
    np.testing.assert_array_equal(outs[1], outs[3])
    assert np.isfinite(outs[2][:rows * 4]).all()


@tilec.jit
def grouped(a_ptrs, b_ptrs, c_ptrs, lds, n_k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    g = tl.program_id(1)
    a_ptr = tl.load(a_ptrs + g).to(tl.pointer_type(tl.float16))
    b_ptr = tl.load(b_ptrs + g).to(tl.pointer_type(tl.float16))
    c_ptr = tl.load(c_ptrs + g).to(tl.pointer_type(tl.float32))
    lda, ldb = tl.load(lds + 2 * g), tl.load(lds + 2 * g + 1)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * lda + rk[None, :]
    b = b_ptr + rk[:, None] * ldb + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(n_k):
        acc = tl.dot(tl.load(a), tl.load(b), acc)
        a += BK
        b += BK * ldb
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("arch", [90, 80])
def test_grouped_pointers_get_16_byte_asynchronous_copies_in_the_aligned_version(arch):
    src = tilec.ASTSource(grouped, "*i64:16,*i64:16,*i64:16,*i32:16,i32", constexprs=dict(BM=64, BN=64, BK=32))
    k = tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": 4, "num_stages": 3})
    assert k.asm["gir"].count("for %") == 2
    ptx = k.asm["ptx"]
    assert re.search(r"cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], 16", ptx)  # the aligned version
    assert re.search(r"ld\.global(\.nc)?\.b16|ld\.global(\.nc)?\.u16", ptx)  # the loop as written


@tilec.jit
def expert_weights(x_ptr, w_ptr, ids_ptr, out_ptr, stride_e, K, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
    """A mixture of experts' weight lookup: the loaded expert index scales a stride."""
    e = tl.load(ids_ptr + tl.program_id(0))
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(x_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(w_ptr + e * stride_e + (k + rk)[:, None] * BN + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("stride", ["i32:16", "i32"])
def test_a_version_only_where_the_axis_analysis_says_it_gains(stride):
    """With the stride specialised to a multiple of 16, ``e * stride_e`` keeps the weights' rows aligned whatever
    the loaded index: no second version. Without it, the index's alignment is what the fast version needs."""
    src = tilec.ASTSource(expert_weights, f"*fp16:16,*fp16:16,*i32:16,*fp32:16,{stride},i32:16",
                          constexprs=dict(BM=64, BN=64, BK=32))
    k = tilec.compile(src, tilec.Target("cuda", 90, 32), {"num_warps": 4, "num_stages": 3})
    assert k.asm["gir"].count("for %") == (1 if stride.endswith(":16") else 2)
