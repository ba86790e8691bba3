"""Basic-block shapes that the CPU and GPU lowerings both build with llvmlite.

- :func:`guarded`: a value computed only where a condition holds. Work that must not happen where its mask is false
  (a masked load, store or atomic) is branched around rather than selected, so it never touches memory there; a
  phi merges it with what the other lanes (or iterations) get.
- :func:`enter_loop`: the current block left for a new loop's blocks, the builder at the loop's head, where each
  lowering then places its phis (the block left is what they enter from); :func:`merged`: such a phi.
"""
from __future__ import annotations


def guarded(b, cond, fn, otherwise):
    """``fn()`` where ``cond`` holds (always when it is None), ``otherwise`` (a value of the same type) elsewhere;
    with ``otherwise`` None, ``fn`` is only for its effect and nothing is returned."""
    if cond is None:
        return fn()
    start = b.block
    with b.if_then(cond):
        v = fn()
        inner = b.block
    if otherwise is None:
        return None
    return merged(b, (v, inner), (otherwise, start))


def merged(b, *incoming):
    """A phi of ``(value, block it comes from)`` pairs, of the first value's type."""
    phi = b.phi(incoming[0][0].type)
    for v, block in incoming:
        phi.add_incoming(v, block)
    return phi


def enter_loop(b, *names):
    """Branch from the current block to a new loop: a block per name, the first the loop's head, where the builder
    is left. Returns (the block branched from, the blocks)."""
    pre = b.block
    blocks = [b.append_basic_block(name) for name in names]
    b.branch(blocks[0])
    b.position_at_end(blocks[0])
    return pre, blocks
