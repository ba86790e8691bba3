"""How much straight-line code a kernel unrolls into, checked before it is lowered.

Every tile op becomes about one instruction per register of its layout in each thread (a reduction one per
source register, an FMA-path dot one per accumulator register and step of K). Past a point that code is what
takes the time and memory: LLVM's schedulers, its straight-line strength reduction and register
allocation are superlinear in a basic block's size, and a tile past the register file spills. Such a kernel is
refused here, before any of that, with a located error naming the op and what to change (smaller tiles, more
warps) instead of running for minutes and gigabytes. The limits sit where compiles measured about a minute of
CPU time on the development machine (``docs/performance.md``, compile time against tile size).
"""
from __future__ import annotations

from ...errors import at_op
from ...ir import ops as O
from ..layouts import MatrixUnitOperandLayout

#: values of one tile per thread: 4096 32-bit values are 16 KB a thread, eight times the largest register file
MAX_TILE_VALUES = 4096
#: values all the kernel's ops produce per thread: about the instructions of its unrolled code
MAX_KERNEL_VALUES = 1 << 17


def _regs(t) -> int:
    return t.layout.to_linear(t.shape).num_regs if t.is_tile and t.layout is not None else 1


def values(op) -> int:
    """Per thread, the values ``op`` computes (about its instructions once lowered)."""
    if isinstance(op, (O.ReduceOp, O.ScanOp)):
        return sum(_regs(o.type) for o in op.operands)
    if isinstance(op, O.DotOp) and not isinstance(op.a.type.layout, MatrixUnitOperandLayout):
        return _regs(op.acc.type) * op.a.type.shape[-1]  # the FMA path: a multiply-add per register and k
    return sum(_regs(r.type) for r in op.results)


def check(func, num_warps: int, warp_size: int) -> None:
    """Raise a located CompilationError when ``func`` (gir) would unroll past the limits."""
    total, heaviest, most = 0, None, 0
    for op in func.walk():
        for r in op.results:
            n = _regs(r.type)
            if n > MAX_TILE_VALUES:
                raise at_op(op, f"{r.type.with_layout(None)} holds {n} values in each of the {num_warps * warp_size} threads "
                                f"({num_warps} warps of {warp_size}), more than the {MAX_TILE_VALUES} a GPU "
                                f"thread can be compiled for: use a smaller tile or more warps (num_warps)")
        n = values(op)
        total += n
        if n > most:
            heaviest, most = op, n
    if total > MAX_KERNEL_VALUES:
        what = heaviest.results[0].type.with_layout(None) if heaviest.results else heaviest.name
        raise at_op(heaviest, f"this kernel unrolls into {total} values per thread ({num_warps} warps of "
                              f"{warp_size} lanes), more than the {MAX_KERNEL_VALUES} that compile in about a "
                              f"minute; its largest op here makes {most} ({what}): use smaller tiles or more "
                              f"warps (num_warps)")
