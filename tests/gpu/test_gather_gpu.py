"""``gather`` (and ``flip``, a gather) on the GPU path: compiled as one op, it takes seconds where the old
compare-and-pick reduction (an ``n x n`` intermediate) took minutes for 1024 elements and spilled.

Without a GPU: compile times, what the kernels use (shared memory through one staging buffer, or none when the
gathered axis lies in each thread's registers), ptxas accepting them, and the register choice checked against
the linear layouts' own coordinates for random layouts. With ``-m gpu``: results against numpy (the cases in
``gpu_cases.py`` run in ``test_run.py`` too)."""
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpu_cases import CASES
from gpu_helpers import ARCHS, HAVE_PTXAS, case_runtime_args, compile_case, device_arch, to_device
from test_layouts import blocked_layouts
from tilec.gpu.layouts import GATHER_SELECT_MAX, MmaLayout, gather_registers

GATHERS = ("flip_1024", "gather_rows", "gather_cols", "gather_in_registers")


def _compile(name, arch, **options):
    kernel, make, _ = CASES[name]
    args, constexprs, *_ = make(np.random.default_rng(0))
    t = time.perf_counter()
    k = compile_case(kernel, args, arch, options, **constexprs)
    return k, time.perf_counter() - t


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", GATHERS)
def test_compiles_in_seconds_to_one_staged_read(name, arch):
    k, seconds = _compile(name, arch)
    assert seconds < 20, f"{name} took {seconds:.1f} s to compile for sm_{arch}"
    gir = k.asm["gir"]
    assert gir.count(" = gather ") == 1 and " = reduce " not in gir
    if HAVE_PTXAS:
        assert k.asm["cubin"][:4] == b"\x7fELF" and k.metadata["spill_stores"] == 0
    if name == "gather_in_registers":
        assert k.metadata["shared"] == 0 and "selp." in k.asm["ptx"] and "bar.sync" not in k.asm["ptx"]
    else:  # the source tile once in shared memory (fp32 4 bytes, fp16 2), one barrier
        kernel, make, _ = CASES[name]
        args, constexprs, *_ = make(np.random.default_rng(0))
        assert k.metadata["shared"] == args[0][0].nbytes
        assert k.asm["ptx"].count("bar.sync") == 1 and "ld.shared" in k.asm["ptx"]


def test_flip_reads_reversed_vectors_from_shared_memory():
    """Per thread, the flipped elements are consecutive in shared memory: LLVM turns them into vector loads."""
    k, _ = _compile("flip_1024", 90)
    ptx = k.asm["ptx"]
    assert "ld.shared.v4.b32" in ptx and "st.shared.v4.b32" in ptx and "ld.global.v4.b32" in ptx


def test_eight_warps_and_any_layout_the_passes_hand_it():
    for name in ("gather_rows", "gather_cols"):
        k, _ = _compile(name, 90, num_warps=8)
        assert "num_warps = 8" in k.asm["gir"]


@settings(max_examples=60, deadline=None)
@given(src=blocked_layouts(), data=st.data())
def test_register_choice_matches_the_layouts_coordinates(src, data):
    """Whenever ``gather_registers`` answers, each pick is the source register of the same thread holding the
    element at the destination's coordinate with the axis replaced; it answers whenever that is possible."""
    rank = src.rank
    shape = tuple(data.draw(st.sampled_from([1, 2, 4, 8, 16])) for _ in range(rank))
    axis = data.draw(st.integers(0, rank - 1))
    dst_layout = data.draw(st.one_of(st.just(src), blocked_layouts(rank=rank)))
    ishape = list(shape)
    ishape[axis] = data.draw(st.sampled_from([1, 2, 4, 16]))
    s_ll, d_ll = src.to_linear(shape), dst_layout.to_linear(tuple(ishape))
    picks = gather_registers(s_ll, d_ll, axis)
    n = shape[axis]
    nwarps = max(src.num_warps, dst_layout.num_warps)
    held = {}
    for lane in range(32):
        for w in range(nwarps):
            held[(lane, w)] = {s_ll.coord(r, lane, w % src.num_warps): r for r in range(s_ll.num_regs)}
    if src.num_warps != dst_layout.num_warps:
        assert picks is None
        return
    possible = n <= GATHER_SELECT_MAX
    for (lane, w), own in held.items():
        for r in range(d_ll.num_regs):
            c = d_ll.coord(r, lane, w)
            for k in range(n):
                want = c[:axis] + (k,) + c[axis + 1:]
                if picks is not None:
                    assert s_ll.coord(picks[r][k], lane, w) == want
                possible = possible and want in own
    if possible:
        assert picks is not None


def test_registers_of_a_matrix_unit_layout():
    """A dot's accumulator layout holds pairs of columns per thread: a gather along columns of width 2 stays in
    registers; along rows it cannot."""
    ll = MmaLayout((4, 1)).to_linear((64, 2))
    assert gather_registers(ll, ll, 1) is not None and gather_registers(ll, ll, 0) is None


@pytest.mark.gpu
@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("name", GATHERS)
def test_gathers_match_numpy_on_the_device(name, num_warps):
    kernel, make, _ = CASES[name]
    args, constexprs, grid, outs, ref = make(np.random.default_rng(7))
    k = compile_case(kernel, args, device_arch(), {"num_warps": num_warps}, **constexprs)
    dev = to_device(args)
    k.run(grid, case_runtime_args(kernel, dev))
    for i, want in zip(outs, ref(args)):
        np.testing.assert_array_equal(dev[i].numpy(), want)


@pytest.mark.gpu
def test_torch_bf16_flip_through_jit():
    torch = pytest.importorskip("torch")
    import tilec
    from gpu_jit_kernels import flip_rows_kernel
    x = torch.randn(5, 1024, device="cuda").to(torch.bfloat16)
    z = torch.empty_like(x)
    flip_rows_kernel[(5,)](x, z, N=1024, target=tilec.Target("cuda", device_arch(), 32))
    torch.cuda.synchronize()
    assert torch.equal(z, torch.flip(x, [1]))
