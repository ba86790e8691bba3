"""version-alignment: a loop whose load and store addresses are computed from integers the kernel itself loads
(pointers and leading dimensions read from device arrays: a grouped GEMM, a mixture of experts) runs in two
versions, chosen at run time: one where every such integer is a multiple of 16, and the loop as written.

The launcher specialises a kernel's integer and pointer arguments on divisibility by 16, which is what lets the
axis analysis prove addresses aligned, so that copies move 16 bytes at once (and asynchronously, on GPUs that
copy into shared memory in the background). Integers loaded by the kernel get no such specialisation: their
addresses stay element by element. This pass gives them the same specialisation in the kernel::

    if (x & 15) == 0 and (y & 15) == 0 ...:      # x, y: the loaded integers the loop's addresses are built from
        x', y' = hint(x, divisibility=16), ...    # what the branch knows
        <the ops before the loop computed from x, y>, recomputed from x', y'
        <the loop>, reading them
    else:
        <the loop>, as written

GPU pipelines run it before the cleanups (which share what the two versions compute alike).
"""
from __future__ import annotations

from ..ir import ops as O
from ..ir.builder import Builder
from ..ir.core import BlockArgument, OpResult
from .base import Pass

ALIGN = 16  # what the launcher's specialisation promises for arguments


def _memory_ops(loop):
    return [op for op in loop.walk() if isinstance(op, (O.LoadOp, O.StoreOp)) and op.operands[0].type.is_tile]


def loaded_leaves(loop) -> list:
    """The integer scalars loaded outside ``loop`` that the addresses of its tile loads and stores are computed
    from (through pure ops, and through the values the loop carries: their inits and advances)."""
    leaves, seen = [], set()
    stack = [op.operands[0] for op in _memory_ops(loop)]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op
            if isinstance(owner, O.ForOp) and loop.is_ancestor_of(owner) and v.index > 0:
                stack += [owner.inits[v.index - 1], owner.body.terminator.operands[v.index - 1]]
            continue
        op = v.op
        if isinstance(op, O.LoadOp) and not v.type.is_tile and v.type.is_int and not loop.is_ancestor_of(op):
            leaves.append(v)
        elif op.is_pure and not op.regions:
            stack += list(op.operands)
    return sorted(leaves, key=lambda v: _position(v.op))


def _position(op):
    path = []
    while op.parent is not None:
        path.append(op.parent.ops.index(op))
        op = op.parent_op
        if op is None:
            break
    return path[::-1]


def version(loop) -> bool:
    leaves = [v for v in loaded_leaves(loop) if v.op.parent is loop.parent]
    if not leaves:
        return False
    block = loop.parent
    b = Builder()
    b.set_insertion_point_before(loop)
    b.loc = loop.loc
    cond = None
    for v in leaves:
        ok = b.op(O.CmpOp, b.op(O.AndOp, v, b.constant(ALIGN - 1, v.type)), b.constant(0, v.type), predicate="eq")
        cond = ok if cond is None else b.op(O.AndOp, cond, ok)
    ver = b.if_(cond, [r.type for r in loop.results])
    for old, new in zip(loop.results, ver.results):
        old.replace_all_uses_with(new)
    tb = Builder(ver.regions[0].block)
    tb.loc = loop.loc
    mapping = {v: tb.create(O.HintOp, [v], [v.type], {"divisibility": (ALIGN,)}).result for v in leaves}
    start = min(block.ops.index(v.op) for v in leaves)
    for op in block.ops[start:block.ops.index(ver)]:
        if op.is_pure and not op.regions and any(o in mapping for o in op.operands):
            tb.insert(op.clone(mapping))
    fast = loop.clone(mapping)
    tb.insert(fast)
    tb.yield_(*fast.results)
    loop.detach()
    eb = ver.regions[1].block
    eb.append(loop)
    Builder(eb).yield_(*loop.results)
    return True


class VersionAlignment(Pass):
    name = "version-alignment"

    def run(self, module):
        changed = False
        done = set()
        for op in list(module.walk(post_order=True)):
            if not isinstance(op, O.ForOp) or op.parent is None or id(op) in done:
                continue
            if any(isinstance(p, O.IfOp) and id(p) in done for p in _ancestors(op)):
                continue  # inside a version made here already
            if version(op):
                done.add(id(op.parent_op))
                done.add(id(op))
                changed = True
        return changed


def _ancestors(op):
    p = op.parent_op
    while p is not None:
        yield p
        p = p.parent_op


__all__ = ["VersionAlignment", "loaded_leaves", "version"]
