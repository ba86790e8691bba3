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
from tilec.gpu.layouts import GATHER_SELECT_MAX, BlockedLayout, MmaLayout, gather_registers

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
    """Whenever ``gather_registers`` answers, each thread's pick is a source register of that thread holding the
    element at the destination's coordinate with the axis replaced; it answers whenever that is possible: every
    thread holds what it needs and a result register chooses among at most ``GATHER_SELECT_MAX`` registers."""
    rank = src.rank
    shape = tuple(data.draw(st.sampled_from([1, 2, 4, 8, 16])) for _ in range(rank))
    axis = data.draw(st.integers(0, rank - 1))
    dst_layout = data.draw(st.one_of(st.just(src), blocked_layouts(rank=rank)))
    ishape = list(shape)
    ishape[axis] = data.draw(st.sampled_from([1, 2, 4, 16]))
    s_ll, d_ll = src.to_linear(shape), dst_layout.to_linear(tuple(ishape))
    g = gather_registers(s_ll, d_ll, axis)
    n = shape[axis]
    if src.num_warps != dst_layout.num_warps:
        assert g is None
        return
    possible = True
    chosen = [set() for _ in range(d_ll.num_regs)]  # the source registers each result register reads, all threads
    for lane in range(32):
        for w in range(src.num_warps):
            own = {}
            for r in range(s_ll.num_regs):
                own.setdefault(s_ll.coord(r, lane, w), r)
            for r in range(d_ll.num_regs):
                c = d_ll.coord(r, lane, w)
                for k in range(n):
                    want = c[:axis] + (k,) + c[axis + 1:]
                    if g is not None:
                        assert s_ll.coord(g.source_register(r, k, lane, w), lane, w) == want
                    possible = possible and want in own
                    if want in own:
                        chosen[r].add(own[want])
    if possible and max(map(len, chosen)) <= GATHER_SELECT_MAX:
        assert g is not None
    if g is not None:
        assert g.candidates == max(map(len, chosen)) <= GATHER_SELECT_MAX


def test_a_source_every_thread_holds_whole_is_read_from_registers():
    """A (2, 1) source that every thread holds in two registers, gathered into a layout whose warps split the
    rows: warp 1 reads register 1 where warp 0 reads register 0."""
    src = BlockedLayout((1, 1), (1, 32), (1, 4), (0, 1)).to_linear((2, 1))
    dst = BlockedLayout((1, 1), (1, 32), (2, 2), (0, 1)).to_linear((2, 16))
    g = gather_registers(src, dst, 1)
    assert g is not None and g.thread_dependent and g.candidates == 2
    assert [g.source_register(0, 0, 0, w) for w in range(4)] == [0, 1, 0, 1]


#: a gather from a 2x4 source that every thread holds whole (``SRC``) by a 2x256 index whose warps split the rows
#: (``DST``): each thread's lane and warp bits join the register choice (the final gir of ``gather2d_kernel``
#: given as a stage file, so that the layouts are these)
SRC = "#blocked<spt = [1, 4], tpw = [1, 32], wpc = [1, 4], order = [1, 0]>"
DST = "#blocked<spt = [1, 4], tpw = [1, 32], wpc = [2, 2], order = [1, 0]>"
SMALL_SOURCE_GIR = """module {
  func @gather2d_kernel(%X: ptr<f32>, %I: ptr<i32>, %Z: ptr<f32>) {kernel = true, arg_divisibility = [16, 16, 16], \
num_warps = 4, shared = 0} {
    %r0 = arange {start = 0, end = 2} : tile<2xi32, #slice<dim = 1, parent = SRC>>
    %r1 = expand_dims %r0 {axis = 1} : tile<2x1xi32, SRC>
    %c4 = constant {value = 4} : tile<2x1xi32, SRC>
    %r2 = mul %r1, %c4 : tile<2x1xi32, SRC>
    %c0 = arange {start = 0, end = 4} : tile<4xi32, #slice<dim = 0, parent = SRC>>
    %c1 = expand_dims %c0 {axis = 0} : tile<1x4xi32, SRC>
    %r3 = broadcast %r2 : tile<2x4xi32, SRC>
    %c2 = broadcast %c1 : tile<2x4xi32, SRC>
    %xo = add %r3, %c2 : tile<2x4xi32, SRC>
    %xp = splat %X : tile<2x4xptr<f32>, SRC>
    %xa = addptr %xp, %xo : tile<2x4xptr<f32>, SRC>
    %x = load %xa : tile<2x4xf32, SRC>
    %s0 = arange {start = 0, end = 2} : tile<2xi32, #slice<dim = 1, parent = DST>>
    %s1 = expand_dims %s0 {axis = 1} : tile<2x1xi32, DST>
    %c256 = constant {value = 256} : tile<2x1xi32, DST>
    %s2 = mul %s1, %c256 : tile<2x1xi32, DST>
    %t0 = arange {start = 0, end = 256} : tile<256xi32, #slice<dim = 0, parent = DST>>
    %t1 = expand_dims %t0 {axis = 0} : tile<1x256xi32, DST>
    %s3 = broadcast %s2 : tile<2x256xi32, DST>
    %t2 = broadcast %t1 : tile<2x256xi32, DST>
    %io = add %s3, %t2 : tile<2x256xi32, DST>
    %ip = splat %I : tile<2x256xptr<i32>, DST>
    %ia = addptr %ip, %io : tile<2x256xptr<i32>, DST>
    %idx = load %ia : tile<2x256xi32, DST>
    %g = gather %x, %idx {axis = 1} : tile<2x256xf32, DST>
    %zp = splat %Z : tile<2x256xptr<f32>, DST>
    %za = addptr %zp, %io : tile<2x256xptr<f32>, DST>
    store %za, %g
    return
  }
}
""".replace("SRC", SRC).replace("DST", DST)


def _small_source_kernel(arch, tmp_path):
    from gpu_jit_kernels import gather2d_kernel
    path = tmp_path / "small_source.gir"
    path.write_text(SMALL_SOURCE_GIR)
    x, idx, z = np.zeros((2, 4), np.float32), np.zeros((2, 256), np.int32), np.zeros((2, 256), np.float32)
    return compile_case(gather2d_kernel, [x, idx, z], arch, {"ir_override": str(path)}, M=2, N=4, P=2, Q=256, AX=1)


@pytest.mark.parametrize("arch", ARCHS)
def test_a_source_every_thread_holds_whole_compiles_to_selects(arch, tmp_path):
    k = _small_source_kernel(arch, tmp_path)
    assert any(line.strip().startswith("%x = load") and line.endswith(SRC + ">") for line in k.asm["gir"].splitlines())
    assert k.metadata["shared"] == 0 and "bar.sync" not in k.asm["ptx"] and "selp." in k.asm["ptx"]
    if HAVE_PTXAS:
        assert k.metadata["spill_stores"] == 0


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
def test_a_source_every_thread_holds_whole_matches_numpy_on_the_device(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    idx = rng.integers(0, 4, (2, 256)).astype(np.int32)
    k = _small_source_kernel(device_arch(), tmp_path)
    dev = to_device([x, idx, np.zeros((2, 256), np.float32)])
    k.run((1,), dev)
    np.testing.assert_array_equal(dev[2].numpy(), np.take_along_axis(x, idx.astype(np.int64), 1))


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
