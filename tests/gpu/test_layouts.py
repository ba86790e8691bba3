"""Layouts: every encoding's linear layout covers its tile exactly, text round-trips, types intern."""
import itertools

import pytest
from hypothesis import given, settings, strategies as st

from tilec.gpu.layouts import (BlockedLayout, DotOperandLayout, LinearLayout, SharedLayout, SliceLayout,
                              default_blocked, parse_layout)
from tilec.ir.parser import parse_type
from tilec.ir.types import TileType, f32

pow2 = lambda lo, hi: st.integers(lo, hi).map(lambda k: 1 << k)  # noqa: E731


def _split(total_log2, parts, draw):
    """``parts`` powers of two whose product is 2**total_log2."""
    cuts = sorted(draw(st.lists(st.integers(0, total_log2), min_size=parts - 1, max_size=parts - 1)))
    bounds = [0] + cuts + [total_log2]
    return tuple(1 << (b - a) for a, b in zip(bounds, bounds[1:]))


@st.composite
def blocked_layouts(draw, rank=None):
    rank = rank or draw(st.integers(1, 3))
    spt = tuple(draw(pow2(0, 2)) for _ in range(rank))
    tpw = _split(5, rank, draw)
    wpc = _split(draw(st.integers(0, 3)), rank, draw)
    order = tuple(draw(st.permutations(range(rank))))
    return BlockedLayout(spt, tpw, wpc, order)


def _all_coords(ll: LinearLayout, nwarps):
    out = {}
    for r in range(ll.num_regs):
        for lane in range(32):
            for w in range(nwarps):
                out.setdefault(ll.coord(r, lane, w), set()).add((r, lane, w))
    return out


@settings(max_examples=40)
@given(blocked_layouts(), st.data())
def test_blocked_covers_every_element(layout, data):
    shape = tuple(data.draw(pow2(0, 6 if layout.rank < 3 else 4)) for _ in range(layout.rank))
    ll = layout.to_linear(shape)
    coords = _all_coords(ll, layout.num_warps)
    assert set(coords) == set(itertools.product(*[range(s) for s in shape]))
    # registers are never wasted on copies: each thread holds distinct elements
    for lane, w in [(0, 0), (31, layout.num_warps - 1)]:
        held = [ll.coord(r, lane, w) for r in range(ll.num_regs)]
        assert len(set(held)) == len(held)


@given(blocked_layouts(rank=2), st.data())
def test_slice_is_parent_without_the_dimension(layout, data):
    shape = (data.draw(pow2(0, 6)), data.draw(pow2(0, 6)))
    for dim in (0, 1):
        sl = SliceLayout(dim, layout)
        sub = shape[1 - dim]
        ll = sl.to_linear((sub,))
        parent = layout.to_linear(tuple(1 if d == dim else s for d, s in enumerate(shape)))
        for lane in range(32):
            for w in range(layout.num_warps):
                for r in range(ll.num_regs):
                    pc = parent.coord(r, lane, w)
                    assert ll.coord(r, lane, w) == (pc[1 - dim],)


@given(blocked_layouts())
def test_text_round_trip_and_interning(layout):
    assert parse_layout(str(layout)) == layout
    for lay in (layout, SliceLayout(0, layout) if layout.rank > 1 else layout,
                DotOperandLayout(1, layout) if layout.rank == 2 else layout):
        t = TileType((4,) * lay.rank, f32, lay)
        assert parse_type(str(t)) is t
        assert hash(lay) == hash(parse_layout(str(lay)))


def test_shared_layout_text_and_swizzle_is_a_permutation():
    s = SharedLayout(4, 1, 8, (1, 0))
    assert parse_layout(str(s)) == s
    shape = (16, 32)
    offs = {s.offset((i, j), shape) for i in range(16) for j in range(32)}
    assert offs == set(range(16 * 32))


def test_default_blocked_shapes():
    assert default_blocked((1024,), 4) == BlockedLayout((1,), (32,), (4,), (0,))
    b = default_blocked((64, 128), 4, size_per_thread=(1, 4))
    assert b == BlockedLayout((1, 4), (1, 32), (4, 1), (1, 0))
    small = default_blocked((16,), 4)  # fewer elements than threads: the rest broadcast
    ll = small.to_linear((16,))
    assert ll.free_mask("lane") == 0b10000 and ll.free_mask("warp") == 0b11


def test_contiguous_registers_give_vector_width():
    ll = BlockedLayout((1, 4), (1, 32), (4, 1), (1, 0)).to_linear((64, 128))
    assert ll.contiguous_regs(1) == 4 and ll.contiguous_regs(0) == 1


def test_dot_operand_holds_whole_k_per_thread():
    parent = default_blocked((32, 32), 4)
    a = DotOperandLayout(0, parent).to_linear((32, 16))
    for lane in (0, 5):
        ks = {a.coord(r, lane, 0)[1] for r in range(a.num_regs)}
        assert ks == set(range(16))


@pytest.mark.parametrize("text", ["#blocked<spt = [1]>", "#nope<x = 1>", "#blocked<spt = [3], tpw = [32], "
                                  "wpc = [4], order = [0]> extra"])
def test_bad_layout_text(text):
    with pytest.raises(ValueError):
        lay = parse_layout(text)
        lay.to_linear((4,))


@settings(max_examples=40)
@given(blocked_layouts(), st.data())
def test_reshape_image_holds_the_same_elements(layout, data):
    """A reshape's ``#linear`` result layout: every (register, lane, warp) holds the element it held before the
    reshape (so the reshape moves no data), the text round-trips, and over the same shape with a dimension
    shrunk to 1 (a reduction's parent) a thread holds that dimension's coordinate 0 with copies across it."""
    from tilec.gpu.layouts import LinearEncoding, reshape_coords
    shape = tuple(data.draw(pow2(0, 5 if layout.rank < 3 else 3)) for _ in range(layout.rank))
    n = 1
    for s in shape:
        n *= s
    cut = data.draw(st.integers(0, n.bit_length() - 1))
    new = (n >> cut, 1 << cut)
    src = layout.to_linear(shape)
    enc = LinearEncoding.image(src, new, reshape_coords(shape, new))
    dst = enc.to_linear(new)
    move = reshape_coords(shape, new)
    for lane in (0, 5, 31):
        for w in range(layout.num_warps):
            for r in range(src.num_regs):
                assert dst.coord(r, lane, w) == move(src.coord(r, lane, w))
    assert parse_layout(str(enc)) == enc
    small = enc.to_linear((new[0], 1))
    assert {small.coord(r, lane, w)[1] for r in range(small.num_regs) for lane in range(32)
            for w in range(layout.num_warps)} == {0}


def test_reshape_into_the_image_needs_no_shared_memory():
    from tilec.gpu.layouts import LinearEncoding, register_moves, reshape_coords
    src = BlockedLayout((2,), (32,), (4,), (0,)).to_linear((1024,))
    new = (128, 2, 4)
    dst = LinearEncoding.image(src, new, reshape_coords((1024,), new)).to_linear(new)
    assert register_moves(src, dst, reshape_coords(new, (1024,))) is not None
    other = BlockedLayout((1, 1, 1), (8, 2, 2), (4, 1, 1), (2, 1, 0)).to_linear(new)
    assert register_moves(src, other, reshape_coords(new, (1024,))) is None
