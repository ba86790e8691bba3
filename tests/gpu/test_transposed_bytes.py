"""8-bit tensor-core operands stored the other way round (int8/fp8 ``A @ B`` with B n-contiguous, ``tl.trans``
of a k-major A) are transposed on their way into shared memory, since every matrix unit reads 8-bit operands
k-contiguous. Coalesce gives such a load four consecutive k per thread, the loop carries it as 32-bit words,
and the write into shared memory transposes 4x4 byte blocks into words: no byte stores. Checked on the PTX
(assembled by ptxas where it is on PATH); the results are checked on a GPU in ``test_operand_spellings.py``."""
import re

import pytest
from hypothesis import given, settings, strategies as st

import tilec
import tilec.language as tl
from tilec.gpu.layouts import default_blocked
from tilec.gpu.register_runs import register_run, run_groups

from test_stage_operands import _mm


@pytest.mark.parametrize("dt,acc", [("i8", "i32"), ("fp8e4nv", "fp32")])
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, True)])
def test_transposed_8bit_operands_are_stored_as_words(dt, acc, trans_a, trans_b):
    ck = _mm(90, trans_a=trans_a, trans_b=trans_b, dt=dt, acc_dt=acc, bk=128)
    ptx, gir = ck.asm["ptx"], ck.asm["gir"]
    assert "local_store" in gir  # the transposed operand goes through registers
    assert re.search(r"= load .*tile<128x128x(i8|f8E4M3FN)[^\n]*spt = \[4, 16\]", gir), "4 k per thread"
    assert not re.search(r"st\.shared\.(b8|u8|s8)", ptx)
    assert "prmt.b32" in ptx
    if "cubin" in ck.asm:
        assert ck.metadata["spill_stores"] == 0 and ck.metadata["num_regs"] <= 168


def test_k_major_8bit_operands_keep_their_copies():
    """Operands already k-contiguous are copied as stored: no transposing store, one k per thread."""
    ck = _mm(90, trans_b=True, dt="i8", acc_dt="i32", bk=128)
    assert "local_store" not in ck.asm["gir"] and "spt = [4, 16]" not in ck.asm["gir"]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_register_runs_partition_the_registers_into_consecutive_runs(data):
    shape = (data.draw(st.sampled_from([8, 16, 64])), data.draw(st.sampled_from([4, 16, 128])))
    spt = (data.draw(st.sampled_from([1, 2, 4])), data.draw(st.sampled_from([1, 4, 16])))
    order = data.draw(st.sampled_from([(1, 0), (0, 1)]))
    spt = tuple(min(s, n) for s, n in zip(spt, shape))
    ll = default_blocked(shape, data.draw(st.sampled_from([1, 4])), 32, spt, order).to_linear(shape)
    dim = data.draw(st.sampled_from([0, 1]))
    bits, n = register_run(ll, dim)
    assert n == 1 << len(bits)
    groups = run_groups(ll, bits)
    regs = sorted(r for g in groups for r in g)
    assert regs == list(range(1 << len(ll.reg)))
    for g in groups:
        coords = [ll.coord(r, 0, 0) for r in g]
        assert all(c[dim] == coords[0][dim] + i for i, c in enumerate(coords))
        assert all(c[1 - dim] == coords[0][1 - dim] for c in coords)



@tilec.jit
def wrapped_matmul(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn, BM: tl.constexpr,
                   BN: tl.constexpr, BK: tl.constexpr):
    """Rows and columns wrapped modulo M and N (no masks), K stepped by tl.range."""
    pid = tl.program_id(0)
    pid_m = pid % tl.cdiv(M, BM)
    pid_n = pid // tl.cdiv(M, BM)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    pa = a_ptr + rm[:, None] * s_am + rk[None, :] * s_ak
    pb = b_ptr + rk[:, None] * s_bk + rn[None, :] * s_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in tl.range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(pa), tl.load(pb), acc=acc)
        pa += BK * s_ak
        pb += BK * s_bk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + s_cm * cm[:, None] + s_cn * cn[None, :], acc)


def test_four_k_layout_never_costs_a_pointer_conversion():
    """A 128x256 B tile and a 128x128 A tile share one blocked layout: B's four-k ideal (its lanes arranged for
    256 columns) would leave A's tile with copies and a 128 KB conversion of its pointers, so B does without it
    and the kernel keeps within shared memory (it needed 278,528 bytes)."""
    sig = ["*fp8e4nv:16", "*fp8e4nv:16", "*fp32:16", "i32:16", "i32:16", "i32:16", "i32:16", "i32:1", "i32:16",
           "i32:1", "i32:16", "i32:1"]
    src = tilec.ASTSource(wrapped_matmul, ",".join(sig), constexprs=dict(BM=128, BN=256, BK=128))
    ck = tilec.compile(src, tilec.Target("cuda", 90, 32), {"num_warps": 8, "num_stages": 3})
    assert ck.metadata["shared"] <= 160 * 1024
    assert not re.search(r"convert_layout %\w+ : tile<128x128xptr", ck.asm["gir"])
