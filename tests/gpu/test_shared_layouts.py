"""Shared-memory placements for matrix units: every placement is a bijection onto its buffer, keeps 16-byte
units whole, reads the eight rows of an 8x8 matrix load (and the copies' 16-byte writes) from eight different
bank groups, and matches the hardware's 128/64/32-byte swizzle (address bits 4-6 XOR bits 7-9) that
warpgroup descriptors assume; the text form round-trips."""
import itertools

import pytest
from hypothesis import given, settings, strategies as st

from tilec.gpu.layouts import SharedLayout, parse_layout, shared_for_operand

SHAPES = [(128, 64), (64, 128), (64, 64), (32, 32), (16, 256), (128, 16), (64, 32), (256, 128)]


def _offsets(lay, shape):
    return {c: lay.offset(c, shape) for c in itertools.product(range(shape[0]), range(shape[1]))}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("order", [(1, 0), (0, 1)])
@pytest.mark.parametrize("eb", [2, 4, 1])
def test_bijection_and_whole_units(shape, order, eb):
    lay = shared_for_operand(shape, order, eb)
    offs = _offsets(lay, shape)
    assert sorted(offs.values()) == list(range(shape[0] * shape[1]))
    fast = order[0]
    for c, o in offs.items():  # each vec-element unit stays contiguous and aligned
        if c[fast] % lay.vec == 0:
            for j in range(lay.vec):
                d = list(c)
                d[fast] += j
                assert offs[tuple(d)] == o + j and o % lay.vec == 0


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("order", [(1, 0), (0, 1)])
def test_eight_rows_hit_eight_bank_groups(shape, order):
    """An 8x8 matrix load (16-bit) reads eight consecutive rows at one 16-byte column: with the swizzle those
    are eight distinct 16-byte groups of the 128-byte bank line, for every row start and column."""
    eb = 2
    lay = shared_for_operand(shape, order, eb)
    fast, slow = order
    if shape[fast] * eb < 16 * 8 // 8 or shape[slow] < 8:
        pytest.skip("tile narrower than one matrix")
    for r0 in range(0, shape[slow], 8):
        for c0 in range(0, shape[fast], 8):
            groups = set()
            for r in range(r0, r0 + 8):
                coord = [0, 0]
                coord[slow], coord[fast] = r, c0
                groups.add((lay.offset(tuple(coord), shape) * eb // 16) % 8)
            assert len(groups) == 8, (r0, c0, groups)


@pytest.mark.parametrize("width_bytes,mode", [(128, 3), (64, 2), (32, 1)])
def test_matches_the_hardware_swizzle(width_bytes, mode):
    """Byte address of (row, col) in a 1024-aligned buffer = the unswizzled address with bits [4, 4+mode) XORed
    by bits [7, 7+mode): the 128/64/32-byte swizzle of warpgroup descriptors and bulk tensor copies."""
    eb = 2
    cols = width_bytes // eb
    shape = (64, cols)
    lay = shared_for_operand(shape, (1, 0), eb)
    for r in range(64):
        for c in range(cols):
            plain = (r * cols + c) * eb
            swz = plain ^ (((plain >> 7) & ((1 << mode) - 1)) << 4)
            assert lay.offset((r, c), shape) * eb == swz


def test_wide_rows_are_cut_into_128_byte_blocks():
    lay = shared_for_operand((64, 128), (1, 0), 2)
    assert lay.cols == 64 and lay.block_cols((64, 128)) == 64
    assert lay.offset((0, 64), (64, 128)) == 64 * 64  # the second block follows the whole first one
    assert parse_layout(str(lay)) == lay


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.sampled_from([(1, 0), (0, 1)]),
       st.sampled_from([0, 8, 16, 32, 64]))
def test_text_round_trips(v, p, m, order, cols):
    lay = SharedLayout(1 << v, 1 << p, 1 << m, order, cols)
    assert parse_layout(str(lay)) == lay


def _blocked(shape, spt_log, tpw_log, reg_order, warps):
    """A blocked layout of a 2-d tile as the register tests draw them, as a linear layout."""
    from tilec.gpu.blocked_layouts import BlockedLayout
    fast = reg_order[0]
    spt = [1, 1]
    spt[fast] = min(1 << spt_log, shape[fast])
    tpw = [1, 1]
    tpw[fast] = min(1 << tpw_log, max(1, shape[fast] // spt[fast]))
    tpw[1 - fast] = 32 // tpw[fast]
    wpc = [1, 1]
    wpc[1 - fast] = warps
    return BlockedLayout(tuple(spt), tuple(tpw), tuple(wpc), reg_order).to_linear(shape)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(SHAPES), st.sampled_from([(1, 0), (0, 1)]), st.sampled_from([1, 2, 4]),
       st.integers(0, 3), st.integers(0, 5), st.sampled_from([(1, 0), (0, 1)]), st.sampled_from([1, 2, 4, 8]))
def test_register_constants_are_exact_where_given(shape, order, eb, spt_log, tpw_log, reg_order, warps):
    """Where the lowering places a thread's registers as its own offset plus constants, that is every element's
    offset, for every lane and warp (checked element by element against the placement)."""
    from tilec.gpu.lowering.shared import register_constants
    lay = shared_for_operand(shape, order, eb)
    ll = _blocked(shape, spt_log, tpw_log, reg_order, warps)
    consts = register_constants(lay, shape, ll)
    if consts is None:
        return
    for warp in range(warps):
        for lane in range(32):
            base = lay.offset(ll.coord(0, lane, warp), shape)
            for r, c in enumerate(consts):
                assert lay.offset(ll.coord(r, lane, warp), shape) == base + c


def test_copies_of_an_operand_tile_share_one_address():
    """A [64, 128] fp16 tile copied by 8 warps (16 rows per pass, 4 passes): the passes are 16 rows apart, which
    the swizzle leaves alone, so they are constant offsets from the thread's own (as ``base + 0x800 * i``)."""
    from tilec.gpu.blocked_layouts import BlockedLayout
    from tilec.gpu.lowering.shared import register_constants
    shape = (64, 128)
    lay = shared_for_operand(shape, (1, 0), 2)
    ll = BlockedLayout((1, 8), (2, 16), (8, 1), (1, 0)).to_linear(shape)
    consts = register_constants(lay, shape, ll)
    assert consts is not None and sorted(set(consts[::8])) == [0, 16 * 64, 32 * 64, 48 * 64]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(SHAPES), st.sampled_from([(1, 0), (0, 1)]), st.sampled_from([1, 2, 4]),
       st.integers(0, 3), st.integers(0, 5), st.sampled_from([(1, 0), (0, 1)]), st.sampled_from([1, 2, 4, 8]))
def test_register_split_is_exact(shape, order, eb, spt_log, tpw_log, reg_order, warps):
    """Every element's offset is its thread's offset XOR the register's XOR part plus its constant, for every
    lane, warp and register (checked against the placement), including layouts whose registers step into the
    swizzle's phase (where the constants alone do not describe them)."""
    from tilec.gpu.lowering.shared import register_split
    lay = shared_for_operand(shape, order, eb)
    ll = _blocked(shape, spt_log, tpw_log, reg_order, warps)
    split = register_split(lay, shape, ll)
    assert split is not None  # power-of-two shapes
    for warp in range(warps):
        for lane in range(32):
            base = lay.offset(ll.coord(0, lane, warp), shape)
            for r, (x, c) in enumerate(split):
                assert lay.offset(ll.coord(r, lane, warp), shape) == (base ^ x) + c


def test_grouped_gemm_fallback_copies_need_two_bases():
    """Element copies of a [128, 64] fp16 tile, one element per thread per row (tpw [1, 32], 8 warps): a thread's
    32 registers are its own offset XOR one of two values (columns 0-31 and 32-63 differ in the swizzle's chunk
    bit), plus constants."""
    from tilec.gpu.blocked_layouts import BlockedLayout
    from tilec.gpu.lowering.shared import register_constants, register_split
    shape = (128, 64)
    lay = shared_for_operand(shape, (1, 0), 2)
    ll = BlockedLayout((1, 1), (1, 32), (8, 1), (1, 0)).to_linear(shape)
    assert register_constants(lay, shape, ll) is None
    assert len({x for x, _ in register_split(lay, shape, ll)}) == 2


@pytest.mark.parametrize("eb", [1, 2, 4])
@pytest.mark.parametrize("order", [(1, 0), (0, 1)])
@pytest.mark.parametrize("shape", [(64, 64), (128, 64), (32, 256), (16, 128)])
def test_the_lowerings_offsets_are_the_placements(shape, order, eb):
    """``shared_offsets`` (the i32 arithmetic the lowering emits) gives ``SharedLayout.offset`` for every element:
    the address constants of :func:`register_split` come from the latter, the thread's base from the former.
    Checked by running the emitted arithmetic on the host (llvmlite JIT)."""
    import ctypes
    from types import SimpleNamespace
    import llvmlite.binding as llvm
    from llvmlite import ir
    from tilec.gpu.lowering.shared import shared_offsets
    lay = shared_for_operand(shape, order, eb)
    mod = ir.Module()
    i32 = ir.IntType(32)
    fn = ir.Function(mod, ir.FunctionType(i32, [i32, i32]), "off")
    b = ir.IRBuilder(fn.append_basic_block())
    b.ret(shared_offsets(SimpleNamespace(b=b), lay, shape, [tuple(fn.args)])[0])
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)), tm)
    engine.finalize_object()
    off = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)(engine.get_function_address("off"))
    for r in range(shape[0]):
        for c in range(shape[1]):
            assert off(r, c) == lay.offset((r, c), shape)
