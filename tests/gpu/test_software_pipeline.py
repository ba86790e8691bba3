"""software-pipeline on tir built by the frontend: what the pass writes (stage rings, prologue, wait/barrier,
copies ahead, epilogue) checked op by op, for the kernel's num_stages and a loop's own tl.range(num_stages=),
and the loops it must leave alone."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.gpu.pipeline import run_gpu_passes
from tilec.gpu.passes.verify_gir import verify_gir
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir
from tilec.ir.types import SharedBufferType
from tilec.targets.cuda.target import CudaTarget
from tilec.targets.options import Options

from test_gpu_passes import tir


@tilec.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
       STAGES: tl.constexpr, OTHER: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in tl.range(0, K, BK, num_stages=STAGES):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(k0 + rk)[None, :] < K, other=OTHER)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=(k0 + rk)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _gir(stages=None, kernel_stages=3, other=0.0, arch=80, dtype=np.float16):
    a = np.zeros((64, 64), dtype)
    c = np.zeros((64, 64), np.float32)
    m = tir(mm, (a, a, c, 64, 64, 64), BM=64, BN=64, BK=32, STAGES=stages, OTHER=other)
    run_gpu_passes(m, CudaTarget(arch), Options(num_stages=kernel_stages))
    verify_gir(m)
    return m


def _names(ops):
    return [op.name for op in ops]


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_rings_prologue_body_and_epilogue(stages):
    m = _gir(kernel_stages=stages)
    f = m.funcs[0]
    top = list(f.body.ops)
    loop = next(op for op in top if op.name == "for")
    allocs = [op for op in top if op.name == "local_alloc"]
    assert len(allocs) == 2
    for op, shape in zip(allocs, [(64, 32), (32, 64)]):
        t = op.result.type
        assert isinstance(t, SharedBufferType) and t.num_buffers == stages and t.tile_shape == shape
        assert t.layout.vec == 8 and t.layout.order == (1, 0)
    before = top[:top.index(loop)]
    # the prologue: stages - 1 iterations of two copies, each load its own commit group
    assert _names(before).count("async_copy") == 2 * (stages - 1)
    assert _names(before).count("async_commit") == 2 * (stages - 1)
    body = _names(loop.body.ops)
    # both loads are first needed by the dot: one wait for the later group, then a barrier
    w = body.index("async_wait")
    assert body[w + 1] == "barrier" and body.count("async_wait") == 1
    wait = loop.body.ops[w]
    assert wait.attrs["group"] == 1 and wait.attrs["pending"] == 2 * (stages - 1) - 2
    assert body.count("local_load") == 2 and "load" not in body
    assert body.count("async_copy") == 2 and body.count("async_commit") == 2
    assert body.index("barrier") < body.index("async_copy") < body.index("local_load") < body.index("dot")
    loads = [op for op in loop.body.ops if op.name == "local_load"]
    assert [op.result.type.layout.op_idx for op in loads] == [0, 1]  # straight into the mma operand layouts
    after = _names(top[top.index(loop) + 1:])
    assert after[:4] == ["async_wait", "barrier", "local_dealloc", "local_dealloc"]
    assert top[top.index(loop) + 1].attrs["pending"] == 0
    # the accumulator and two stage counters (addresses here come from the induction variable alone)
    assert len(loop.iter_args) == 1 + 2


def test_allocation_keeps_rings_apart_and_text_round_trips():
    m = _gir()
    f = m.funcs[0]
    allocs = [op for op in f.walk() if op.name == "local_alloc"]
    spans = sorted((op.attrs["smem_offset"], op.attrs["smem_offset"] + 3 * 64 * 32 * 2) for op in allocs)
    assert spans[0][1] <= spans[1][0]
    assert f.attrs["shared"] >= spans[1][1]
    text = print_ir(m)
    assert "smem<3x64x32xf16, #shared<" in text
    assert print_ir(parse_module(text)) == text


def test_loop_num_stages_overrides_the_kernels():
    m = _gir(stages=4, kernel_stages=2)
    allocs = [op for op in m.walk() if op.name == "local_alloc"]
    assert {op.result.type.num_buffers for op in allocs} == {4}


@pytest.mark.parametrize("arch,warps,stages", [(90, 4, 2), (90, 8, 4), (80, 4, 4), (80, 8, 4)])
def test_rings_shrink_where_that_lets_a_second_block_share_the_multiprocessor(arch, warps, stages):
    """128x256x64 fp16 operands take 48 KB a stage. Four stages of them fit one block of an sm_90 (227 KB) but
    not two; with 4 warps a second block fits by registers, so two stages (96 KB) are kept. With 8 warps a second
    block is not certain to fit, and sm_80's 81 KB for two blocks is less than two stages: the stages then stay as
    asked (the compile refuses a kernel past the block limit afterwards, naming num_stages)."""
    a = np.zeros((64, 64), np.float16)
    c = np.zeros((64, 64), np.float32)
    m = tir(mm, (a, a, c, 64, 64, 64), BM=128, BN=256, BK=64, STAGES=None, OTHER=0.0)
    run_gpu_passes(m, CudaTarget(arch), Options(num_stages=4, num_warps=warps))
    verify_gir(m)
    allocs = [op for op in m.walk() if op.name == "local_alloc"]
    assert {op.result.type.num_buffers for op in allocs} == {stages}


@pytest.mark.parametrize("why", ["one stage", "nonzero other", "no tensor cores"])
def test_loops_left_alone(why):
    kw = {"one stage": dict(kernel_stages=1), "nonzero other": dict(other=1.0),
          "no tensor cores": dict(arch=70)}[why]
    m = _gir(**kw)
    names = _names(m.walk())
    if why == "nonzero other":  # only the A load keeps its plain load (staged from registers); B is pipelined
        assert names.count("local_load") == 2 and names.count("load") == 1 and names.count("async_copy") == 3
    elif why == "one stage":  # both operands staged from registers, loaded synchronously: no ring, no copies
        allocs = [op for op in m.walk() if op.name == "local_alloc"]
        assert len(allocs) == 2 and all(op.src is not None and op.result.type.num_buffers == 1 for op in allocs)
        assert "async_copy" not in names and names.count("load") == 2
    else:  # the FMA path: nothing in shared memory
        assert "local_alloc" not in names and "async_copy" not in names and names.count("load") == 2
