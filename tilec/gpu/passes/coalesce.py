"""Coalesce: choose blocked layouts under which global accesses are 16-byte vectors, consecutive across lanes.

For each load/store/atomic on a pointer tile, the axis analysis says which dimension is contiguous and how
aligned it is; the ideal layout puts that dimension first in ``order`` and gives each thread as many contiguous
elements as alignment, contiguity and 16 bytes allow. Per current blocked layout, the accesses' ideals are the
candidates; the one under which the accesses cost least (bytes per vector width, times the copies a layout
wider than a tile leaves in lanes or warps) replaces that layout in every type of the function: since all
related layouts (slices, dot operands) derive from it, the replacement keeps the IR consistent without
inserting any conversion. An access that the chosen layout still serves worse than its own ideal is wrapped in
conversions to its ideal layout.

A load of 8-bit values that becomes a dot operand while its contiguous dimension is not the dot's k dimension
(int8/fp8 ``A @ B`` with B stored n-contiguous, ``tl.trans`` of an 8-bit tile) is transposed on its way into
shared memory: every matrix unit reads 8-bit operands k-contiguous. Its ideal layout also gives each thread
four consecutive k, so the write into shared memory stores 4-byte words rather than single bytes, and the
cost counts those shared stores.
"""
from __future__ import annotations

from collections import defaultdict

from ...ir import ops as O
from .. import ops as G
from ..register_runs import register_run
from ..layouts import BlockedLayout, DotOperandLayout, SliceLayout, default_blocked
from .axis_info import AxisAnalysis, vector_width
from .common import Pass, convert_before, pointee_bytes, retype_behind_convert, tile_values
from ...targets.options import Options

MEMORY_OPS = (O.LoadOp, O.StoreOp, O.AtomicRMWOp, O.AtomicCASOp)


#: the run of consecutive k a thread of an 8-bit transposed dot operand holds: one 4-byte shared store
K_RUN_BYTES = 4


def _pow2_floor(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def ideal_layout(ptr, info, num_warps: int, warp_size: int, k_dim=None) -> BlockedLayout:
    """The layout under which an access on ``ptr`` is as wide and as coalesced as the pointer allows; ``k_dim``:
    the dimension that becomes a dot's k where the load is a transposed 8-bit dot operand (see the module)."""
    shape = ptr.type.shape
    rank = len(shape)
    order = tuple(sorted(range(rank), key=lambda d: (-info.contiguity[d], -d)))
    d0 = order[0]
    eb = pointee_bytes(ptr.type)
    per_thread = max(1, ptr.type.numel // (num_warps * warp_size))
    p = _pow2_floor(min(info.contiguity[d0], max(1, info.divisibility[d0] // eb), max(1, 16 // eb), per_thread))
    spt = [p if d == d0 else 1 for d in range(rank)]
    if k_dim is not None and k_dim != d0:
        spt[k_dim] = _pow2_floor(max(1, min(K_RUN_BYTES // eb, shape[k_dim], per_thread // p)))
    return default_blocked(shape, num_warps, warp_size, tuple(spt), order)


def transposed_operand_k(load):
    """The dimension of ``load``'s tile that becomes a dot's k, where the tile (8-bit) reaches a dot operand
    only through layout conversions and transposes, and its contiguous dimension is another one; else None."""
    t = load.result.type
    if not t.is_tile or t.rank != 2 or pointee_bytes(load.ptr.type) != 1:
        return None
    v, perm = load.result, (0, 1)
    while len(v.uses) == 1:
        user, idx = v.uses[0]
        if isinstance(user, O.TransOp):
            perm = tuple(perm[d] for d in user.attrs["order"])
        elif isinstance(user, O.DotOp) and idx in (0, 1):
            return perm[1 - idx]  # a's k is its dimension 1, b's its dimension 0
        elif not isinstance(user, G.ConvertLayoutOp):
            return None
        v = user.result
    return None


def replace_layout(func, old, new):
    """Rewrite every type in ``func`` whose layout is ``old`` or derives from it."""
    def sub(lay):
        if lay == old:
            return new
        if isinstance(lay, SliceLayout):
            p = sub(lay.parent)
            return SliceLayout(lay.dim, p) if p is not lay.parent else lay
        if isinstance(lay, DotOperandLayout):
            p = sub(lay.parent)
            return DotOperandLayout(lay.op_idx, p) if p is not lay.parent else lay
        return lay
    for v in tile_values(func):
        lay = v.type.layout
        n = sub(lay)
        if n is not lay:
            v.type = v.type.with_layout(n)


#: how many times more an access inside a loop is assumed to run than one outside it, per loop level
LOOP_WEIGHT = 8


def _repeats(op) -> int:
    """A weight for how often ``op`` runs: accesses in loops (a matmul's loads) outweigh the ones after them
    (its epilogue's store) when one layout must serve both."""
    n, p = 1, op.parent_op
    while p is not None and not isinstance(p, O.FuncOp):
        if isinstance(p, (O.ForOp, O.WhileOp)):
            n *= LOOP_WEIGHT
        p = p.parent_op
    return n


class Coalesce(Pass):
    name = "coalesce"

    def __init__(self, num_warps: int = Options.num_warps, warp_size: int = 32):
        self.num_warps, self.warp_size = num_warps, warp_size

    def run(self, module):
        for f in module.funcs:
            self.func(f)

    def _accesses(self, f, an):
        out = []
        nw = f.attrs.get("num_warps", self.num_warps)  # the kernel's own, like accelerate-dot
        for op in f.walk():
            if isinstance(op, MEMORY_OPS) and op.ptr.type.is_tile and isinstance(op.ptr.type.layout, BlockedLayout):
                k = transposed_operand_k(op) if isinstance(op, O.LoadOp) else None
                ideal = ideal_layout(op.ptr, an.info(op.ptr), nw, self.warp_size, k)
                if k is not None:
                    self._k_dims[op] = k
                    self._plain[op] = ideal_layout(op.ptr, an.info(op.ptr), nw, self.warp_size)
                out.append((op, ideal))
        return out

    def _cost(self, group, an, layout):
        """Memory instructions the accesses take under ``layout``, counting copies (lanes or warps that a
        smaller tile leaves holding the same elements) as extra work, and twice where a thread's consecutive
        elements run past one vector: each instruction then fills only part of every 32-byte sector it
        touches (a 64-byte run per thread stored 16 bytes at a time writes every sector twice)."""
        total = 0
        for op, _ in group:
            t = op.ptr.type
            ll = layout.to_linear(t.shape)
            copies = 1 << (bin(ll.free_mask("lane")).count("1") + bin(ll.free_mask("warp")).count("1"))
            width = self._width(op, an, layout)
            fast = next((d for d, x in enumerate(ll.reg[0]) if x), None) if ll.reg else None
            split = 2 if fast is not None and ll.contiguous_regs(fast) > width else 1
            total += t.numel * pointee_bytes(t) * copies * split / width * _repeats(op)
            k = self._k_dims.get(op)
            if k is not None:  # the shared stores that transpose it: one per run of consecutive k in a thread
                total += t.numel / register_run(ll, k)[1] * _repeats(op)
        return total

    def _width(self, op, an, layout):
        ll = layout.to_linear(op.ptr.type.shape)
        mask = getattr(op, "mask", None)
        return vector_width(ll, an.info(op.ptr), an.info(mask) if mask is not None else None,
                            pointee_bytes(op.ptr.type))

    def _best(self, group, an, candidates):
        candidates = list(dict.fromkeys(candidates))
        return min(candidates, key=lambda lay: (self._cost(group, an, lay), -candidates.index(lay)))

    def _served_badly(self, group, an, layout) -> int:
        """How many of the group's accesses ``layout`` serves worse than their own ideal (each would get
        conversions of its own)."""
        return sum(self._cost([(op, ideal)], an, ideal) < self._cost([(op, ideal)], an, layout)
                   for op, ideal in self._plain_ideals(group))

    def _plain_ideals(self, group):
        """The accesses with their ideals leaving out the four-k refinement: shared stores saved are not worth
        converting a pointer tile for, so only these ideals may earn an access conversions of its own."""
        return [(op, self._plain.get(op, ideal)) for op, ideal in group]

    def _winner(self, group, an):
        """The layout the group's tiles take. A transposed 8-bit operand's four-k ideal (module docstring)
        competes with the others, but where it would leave more accesses needing conversions of their own
        than the best layout without it (a tile of another shape that the operand's thread arrangement
        covers with copies), the operand does without."""
        winner = self._best(group, an, [ideal for _, ideal in group])
        if not any(op in self._plain for op, _ in group):
            return winner
        plain = self._best(group, an, [self._plain.get(op, ideal) for op, ideal in group])
        if self._served_badly(group, an, winner) > self._served_badly(group, an, plain):
            return plain
        return winner

    def func(self, f):
        self._k_dims, self._plain = {}, {}
        an = AxisAnalysis(f)
        accesses = self._accesses(f, an)
        groups = defaultdict(list)
        for op, ideal in accesses:
            groups[op.ptr.type.layout].append((op, ideal))
        for cur, group in groups.items():
            # the candidate under which the group's accesses cost least: memory instructions, counting
            # copies (lanes or warps that a smaller tile leaves holding the same elements) as extra work
            winner = self._winner(group, an)
            if winner != cur:
                replace_layout(f, cur, winner)
        # accesses the shared layout serves badly get their own layout, with conversions around them
        for op, ideal in self._plain_ideals(accesses):
            cur = op.ptr.type.layout
            if ideal == cur or self._cost([(op, ideal)], an, ideal) >= self._cost([(op, ideal)], an, cur):
                continue
            for i, o in enumerate(op.operands):
                if o.type.is_tile:
                    convert_before(op, i, ideal)
            for r in op.results:
                retype_behind_convert(r, ideal, op)
