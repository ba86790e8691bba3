"""The GPU passes on tir built by the frontend: layouts everywhere, coalescing, conversions removed, shared
memory and barriers; the gir they produce verifies and prints/parses back."""
import numpy as np
import pytest

import tilec
from tilec.frontend.codegen import generate
from tilec.ir import ops as O
from tilec.gpu.layouts import BlockedLayout, SliceLayout
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir
from tilec.gpu.passes.allocate_shared import allocate
from tilec.gpu.passes.axis_info import AxisAnalysis
from tilec.gpu.passes.verify_gir import GIRError, check_layouts, verify_gir
from tilec.passes.manager import PassManager, tir_pipeline
from tilec.gpu.pipeline import run_gpu_passes
from tilec.targets.cuda.target import CudaTarget
from tilec.targets.options import Options

import gpu_jit_kernels as J
from gpu_cases import CASES


def tir(kernel, args, **constexprs):
    values = kernel._bind(tuple(args), constexprs)
    _, _, src = kernel.specialize(values)
    m = generate(src, {})
    PassManager("k").run(m, tir_pipeline())
    return m


def gir(kernel, args, num_warps=4, **constexprs):
    m = tir(kernel, args, **constexprs)
    run_gpu_passes(m, CudaTarget(80), Options(num_warps=num_warps))
    return m


def case_gir(name, num_warps=4):
    kernel, make, _ = CASES[name]
    args, cx, *_ = make(np.random.default_rng(0))
    if not isinstance(kernel, tilec.JITFunction):
        m = kernel()
        run_gpu_passes(m, CudaTarget(80), Options(num_warps=num_warps))
        return m
    return gir(kernel, args, num_warps, **cx)


def ops_named(m, name):
    return [op for op in m.walk() if op.name == name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_tile_has_a_layout_and_gir_round_trips(name):
    m = case_gir(name)
    verify_gir(m)
    for op in m.walk():
        for v in op.results:
            if v.type.is_tile:
                assert v.type.layout is not None, f"{op.name} result has no layout"
    text = print_ir(m)
    assert print_ir(parse_module(text)) == text


def test_coalesce_gives_four_f32_per_thread_when_aligned():
    x = np.zeros(4096, np.float32)
    m = gir(J.add_kernel, [x, x, x, 4096], BLOCK=1024)
    (load, _) = ops_named(m, "load")
    assert load.result.type.layout == BlockedLayout((4,), (32,), (4,), (0,))


def test_coalesce_gives_eight_f16_per_thread_when_aligned():
    x = np.zeros(4096, np.float16)
    m = gir(J.add_kernel, [x, x, x, 4096], BLOCK=1024)
    assert ops_named(m, "load")[0].result.type.layout.size_per_thread == (8,)


def test_unaligned_rows_stay_one_element_per_thread():
    kernel, make, _ = CASES["softmax2d"]  # stride 100 is not a multiple of 16
    args, cx, *_ = make(np.random.default_rng(0))
    args[4] = 100 + 1
    m = gir(kernel, args, **cx)
    assert ops_named(m, "load")[0].result.type.layout.size_per_thread == (1, 1)


def test_aligned_rows_vectorise_along_the_row():
    x = np.zeros((64, 128), np.float32)
    m = gir(J.softmax2d_kernel, [x, x, 64, 128, 128], ROWS=16, BLOCK=128)
    lay = ops_named(m, "load")[0].result.type.layout
    assert lay.size_per_thread == (1, 4) and lay.order == (1, 0)


def test_row_reductions_need_no_layout_conversion():
    m = case_gir("softmax2d")
    assert not ops_named(m, "convert_layout")
    for r in ops_named(m, "reduce"):
        assert isinstance(r.result.type.layout, SliceLayout)


def test_remove_layout_conversions_rematerialises_arange():
    """col_sum stores a slice-layout accumulator through pointers made from a fresh arange: the arange is
    rebuilt in the slice layout instead of converting the accumulator through shared memory."""
    m = case_gir("col_sum")
    converts = ops_named(m, "convert_layout")
    assert all(not isinstance(c.src.op, O.ArangeOp) for c in converts if hasattr(c.src, "op"))


def test_shared_memory_and_barriers_for_back_to_back_reductions():
    m = case_gir("softmax")
    f = m.funcs[0]
    reduces = ops_named(m, "reduce")
    assert [r.attrs["smem_offset"] for r in reduces] == [0, 0]  # lifetimes do not overlap: space is reused
    assert f.attrs["shared"] == 4 * 4
    body = f.body.ops
    assert body.index(reduces[0]) < [i for i, op in enumerate(body) if op.name == "barrier"][0] \
        < body.index(reduces[1])


def test_barrier_at_loop_back_edge():
    m = case_gir("col_sum", num_warps=8)
    loop = ops_named(m, "for")[0]
    users = [op for op in loop.body.ops if "smem_offset" in op.attrs]
    if users:
        assert any(op.name == "barrier" for op in loop.body.ops)


def test_allocator_reuses_space_only_for_disjoint_lifetimes():
    offs, total = allocate([("a", 100, 0, 5), ("b", 50, 3, 8), ("c", 64, 6, 9), ("d", 32, 10, 10)])
    assert offs["a"] == 0 and offs["b"] >= 100 and offs["d"] == 0
    assert offs["c"] == 0 or offs["c"] >= offs["b"] + 50
    assert total == max(offs[k] + s for k, s in (("a", 100), ("b", 50), ("c", 64), ("d", 32)))


def test_axis_analysis_facts():
    x = np.zeros(4096, np.float32)
    m = tir(J.add_kernel, [x, x, x, 4096], BLOCK=1024)
    an = AxisAnalysis(m.funcs[0])
    load = ops_named(m, "load")[0]
    info = an.info(load.ptr)
    assert info.contiguity == (1024,) and info.divisibility == (16,)
    assert an.info(load.mask).constancy == (16,)  # n % 16 == 0: runs of 16 compare alike
    m2 = tir(J.add_kernel, [x, x, x, 4097], BLOCK=1024)
    assert AxisAnalysis(m2.funcs[0]).info(ops_named(m2, "load")[0].mask).constancy == (1,)


def test_dump_ir_names_gpu_passes(monkeypatch, capsys):
    monkeypatch.setenv("TILEC_DUMP_IR", "1")
    x = np.zeros(64, np.float32)
    m = tir(J.add_kernel, [x, x, x, 64], BLOCK=64)
    run_gpu_passes(m, CudaTarget(80), kernel_name="add_kernel")
    err = capsys.readouterr().err
    for name in ("convert-to-gir", "coalesce", "remove-layout-conversions", "allocate-shared", "insert-barriers"):
        assert f"IR after {name}" in err


def test_gir_verifier_catches_mixed_layouts():
    m = case_gir("softmax2d")
    add = next(op for op in m.walk() if op.name == "sub" and op.result.type.is_tile)
    other = BlockedLayout((1, 1), (32, 1), (1, 4), (0, 1))
    add.result.type = add.result.type.with_layout(other)
    with pytest.raises(GIRError, match="mixes layouts"):
        check_layouts(m)


def test_debug_mode_verifies_gir(monkeypatch):
    monkeypatch.setenv("TILEC_DEBUG", "1")
    case_gir("matmul_f16")
