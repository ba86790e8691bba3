"""An 8-bit matrix-unit accumulator's registers handed to the next dot as its A operand, by lane shuffles.

A chained dot (attention's ``p @ v`` with ``p`` cast to fp8 or int8) takes its A operand from the registers the
previous dot computed. With 16-bit elements the two layouts coincide and nothing moves. With 8-bit ones they do
not: per warp, an accumulator row's 16 columns k0..k0+15 sit in lane t (of a lane group g = lane / 4) as columns
2t, 2t+1 and 8+2t, 9+2t, while the A operand wants 4t..4t+3 in one 32-bit register (``MmaOperandLayout``
``k_width`` 4). Rather than a round trip through shared memory (stores, a barrier, loads), lanes trade words
of codes. Per 16-column block and pair of rows m, m+8, each lane packs two words, one per 8-column block, each
holding its pairs of both rows. A lane wants, of one block only (the first for t < 2), the pairs of lanes 2t mod 4
and 2t+1 mod 4 of its group, and each lane is wanted by one lane of each kind: so lanes 0 and 3 send their
first-block word in the first shuffle and the other in the second, lanes 1 and 2 the other way round, and each
lane reads its two sources in the order that gets it the words of its block (then a byte permute per register,
``GpuTarget.byte_permute``). One shuffle per operand register, no shared memory, no barrier.

The result's element registers are sliced from the assembled words, and fp8 ones remember their code (see
``types.round_fp8_all``), so an instruction that takes four 8-bit elements per register finds the word again
(:func:`packed_word`) instead of packing four bytes.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..layout_conversions import byte_operand_shuffle
from .types import FP8, I8, I32, decoded_with_code, from_memory, memory_bytes, to_memory
from .values import ll_of


def _c(v):
    return ir.Constant(I32, v)


def applies(src_t, dst_t) -> bool:
    """Whether ``convert_layout`` from ``src_t`` to ``dst_t`` is done here (see the module)."""
    return (src_t.is_tile and dst_t.is_tile and src_t.layout is not None and dst_t.layout is not None and
            byte_operand_shuffle(ll_of(src_t), ll_of(dst_t), memory_bytes(src_t)))


def exchange(L, src_t, dst_t, values):
    """The registers of ``dst_t`` from ``values`` (the registers of ``src_t``), see the module."""
    b = L.b
    et = src_t.element
    s_idx = {c: i for i, c in enumerate(ll_of(src_t).reg_coords())}
    d_coords = ll_of(dst_t).reg_coords()
    d_idx = {c: i for i, c in enumerate(d_coords)}
    group = b.and_(L.lane, _c(~3 & 31))
    t = b.and_(L.lane, _c(3))
    # lanes 0 and 3 of a group send their first word first (and read lane 2t first), lanes 1 and 2 the other
    outer = b.icmp_unsigned("==", b.and_(b.xor(t, b.lshr(t, _c(1))), _c(1)), _c(0))
    p = b.or_(group, b.and_(b.shl(t, _c(1)), _c(3)))  # lane 2t mod 4 of this group
    q = b.or_(p, _c(1))
    src1, src2 = b.select(outer, p, q), b.select(outer, q, p)
    # the halves of row m (bytes 0, 1 of each word) and of row m + 8 (bytes 2, 3), lane 2t's first
    row_m, row_m8 = b.select(outer, _c(0x5410), _c(0x1054)), b.select(outer, _c(0x7632), _c(0x3276))
    codes = {}

    def code(c):
        if c not in codes:
            codes[c] = to_memory(b, src_t, values[s_idx[c]])
        return codes[c]

    out = [None] * len(d_coords)
    for (m, k) in d_coords:
        if k % 16 or m & 8 or out[d_idx[(m, k)]] is not None:
            continue
        # per 8-column block, this lane's pairs of rows m and m + 8 (columns 2t, 2t + 1 of the block)
        first = packed_word(b, [code((m, k)), code((m, k + 1)), code((m + 8, k)), code((m + 8, k + 1))])
        second = packed_word(b, [code((m, k + 8)), code((m, k + 9)), code((m + 8, k + 8)), code((m + 8, k + 9))])
        y1 = L.target.shuffle_idx(b, b.select(outer, first, second), src1)
        y2 = L.target.shuffle_idx(b, b.select(outer, second, first), src2)
        # both words come from the block this lane wants: the one from lane 2t holds its columns 4t, 4t + 1
        words = {m: L.target.byte_permute(b, y1, y2, row_m), m + 8: L.target.byte_permute(b, y1, y2, row_m8)}
        for row, mine in words.items():  # bytes: columns k + 4t .. k + 4t + 3 of row ``row`` + g
            for i in range(4):
                byte = b.trunc(b.lshr(mine, _c(8 * i)) if i else mine, I8)
                out[d_idx[(row, k + i)]] = decoded_with_code(b, et, byte) if et.name in FP8 else \
                    from_memory(b, src_t, byte)
    return out


def packed_word(b, codes):
    """The i32 whose bytes are the four i8 ``codes`` (lowest first). Codes sliced in order from one wider value (as
    :func:`exchange` leaves them, or a conversion instruction's pair) give that value back rather than being
    packed byte by byte."""
    word = _sliced_from(codes)
    if word is not None:
        return word
    halves = []
    for pair in (codes[:2], codes[2:]):
        h = _sliced_from(pair)
        halves.append(b.zext(h, I32) if h is not None else
                      b.or_(b.zext(pair[0], I32), b.shl(b.zext(pair[1], I32), _c(8))))
    return b.or_(halves[0], b.shl(halves[1], _c(16)))


def _sliced_from(codes):
    """The value whose bytes ``codes`` are, in order from the lowest, when each is ``trunc(lshr(value, 8 i))``
    of one value exactly their width together (None otherwise)."""
    word = None
    for i, c in enumerate(codes):
        if not (isinstance(c, ir.Instruction) and c.opname == "trunc"):
            return None
        src = c.operands[0]
        if i:
            if not (isinstance(src, ir.Instruction) and src.opname == "lshr" and
                    isinstance(src.operands[1], ir.Constant) and src.operands[1].constant == 8 * i):
                return None
            src = src.operands[0]
        if word is None:
            word = src
        elif src is not word:
            return None
    ok = word is not None and isinstance(word.type, ir.IntType) and word.type.width == 8 * len(codes)
    return word if ok else None
