"""Counted loops and loop nests over a tile's index space, emitted as LLVM basic blocks with phis.

The innermost dimension advances by the vector width ``w``; a size-1 dimension gets no loop at all. Loops are
bottom-tested because tile dimensions are never empty.
"""
from __future__ import annotations

from ...codegen import llvm_types as LT


def counted_loop(b, n: int, step: int, inits, body, name="t"):
    """``for iv in range(0, n, step)`` carrying ``inits``; ``body(iv, carried) -> new carried``."""
    if n <= step:
        return body(LT.const(LT.I32, 0), list(inits))
    pre = b.block
    loop = b.append_basic_block(f"{name}.loop")
    done = b.append_basic_block(f"{name}.end")
    b.branch(loop)
    b.position_at_end(loop)
    iv = b.phi(LT.I32, name=f"{name}.i")
    iv.add_incoming(LT.const(LT.I32, 0), pre)
    phis = []
    for v in inits:
        p = b.phi(v.type)
        p.add_incoming(v, pre)
        phis.append(p)
    new = body(iv, phis)
    nxt = b.add(iv, LT.const(LT.I32, step))
    latch = b.block
    iv.add_incoming(nxt, latch)
    for p, v in zip(phis, new):
        p.add_incoming(v, latch)
    b.cbranch(b.icmp_signed("<", nxt, LT.const(LT.I32, n)), loop, done)
    b.position_at_end(done)
    return new


def nest(b, shape, w, body, dims=None, idx=None):
    """Loops over ``shape`` (innermost by ``w``) calling ``body(idx)`` with one i32 index per dimension."""
    dims = list(range(len(shape))) if dims is None else dims
    idx = [LT.const(LT.I32, 0)] * len(shape) if idx is None else idx
    if not dims:
        body(list(idx))
        return
    d, rest = dims[0], dims[1:]
    step = w if d == len(shape) - 1 else 1

    def inner(iv, _):
        j = list(idx)
        j[d] = iv
        nest(b, shape, w, body, rest, j)
        return []
    if shape[d] == 1:
        nest(b, shape, w, body, rest, idx)
    else:
        counted_loop(b, shape[d], step, [], inner, name=f"d{d}")


def pick_width(n: int, vmax: int = 16) -> int:
    """The vector width for an innermost extent ``n``: the largest power of two dividing ``n`` (so that no lane
    is ever out of the tile), at most ``vmax``."""
    w = 1
    while w < vmax and n % (2 * w) == 0:
        w *= 2
    return w
