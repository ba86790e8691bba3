"""version-alignment: a loop whose load and store addresses are computed from integers the kernel itself loads
(pointers and leading dimensions read from device arrays: a grouped GEMM, a mixture of experts) runs, with the
rest of its block, in two versions chosen at run time: one where every such integer is a multiple of 16, and the
code as written.

The launcher specialises a kernel's integer and pointer arguments on divisibility by 16, which is what lets the
axis analysis prove addresses aligned, so that copies move 16 bytes at once (and asynchronously, on GPUs that
copy into shared memory in the background). Integers loaded by the kernel get no such specialisation: their
addresses stay element by element. This pass gives them the same specialisation in the kernel::

    x = load ...; y = load ...                   # the loaded integers the loop's addresses are built from
    if (x & 15) == 0 and (y & 15) == 0 ...:
        x', y' = hint(x, divisibility=16), ...    # what the branch knows
        <the rest of the block: the loop and what follows it>, reading x', y'
    else:
        <the rest of the block>, as written

GPU pipelines run it before the cleanups (which share what the two versions compute alike).
"""
from __future__ import annotations

from ..ir import ops as O
from ..ir.builder import Builder
from ..ir.core import BlockArgument
from .base import Pass
from .utils import values_used_from_outside

ALIGN = 16  # what the launcher's specialisation promises for arguments


def _memory_ops(loop):
    return [op for op in loop.walk() if isinstance(op, (O.LoadOp, O.StoreOp)) and op.operands[0].type.is_tile]


def loaded_leaves(loop) -> list:
    """The integer scalars loaded outside ``loop`` that the addresses of its tile loads and stores are computed
    from (through pure ops, and through the values the loop carries: their inits and advances)."""
    return _leaves(_memory_ops(loop), loop.is_ancestor_of)


def _leaves(memory_ops, inside) -> list:
    """The integer scalars loaded by ops for which ``inside`` is false that the tile addresses of
    ``memory_ops`` are computed from."""
    leaves, seen = [], set()
    stack = [op.operands[0] for op in memory_ops]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op
            if isinstance(owner, O.ForOp) and inside(owner) and v.index > 0:
                stack += [owner.inits[v.index - 1], owner.body.terminator.operands[v.index - 1]]
            continue
        op = v.op
        if isinstance(op, O.LoadOp) and not v.type.is_tile and v.type.is_int and not v.type.is_bool \
                and not inside(op):
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


def _helps(analysis, built) -> bool:
    """Whether some access built from loaded leaves (``built``) runs along a dimension (contiguity > 1) whose
    start the axis analysis does not know 16-byte aligned: only then can the aligned version copy more at once.
    (An expert index scaling a specialised stride, say, leaves its addresses aligned whatever the index.)"""
    analysis = analysis() if analysis is not None else None
    if analysis is None:
        return True
    for m in built:
        info = analysis.info(m.operands[0])
        if any(c > 1 and d < ALIGN for c, d in zip(info.contiguity, info.divisibility)):
            return True
    return False


def version(loop, analysis=None) -> bool:
    """Version the rest of ``loop``'s block from just after the last loaded leaf of its accesses and of those
    after it (an epilogue storing through the same loaded pointers gets aligned stores too). ``analysis``: a
    callable giving the function's axis analysis (``info(value)`` with contiguity and divisibility), asked only
    where there are leaves, which says whether the aligned version would gain anything; None: version wherever
    there are leaves."""
    block = loop.parent
    at = block.ops.index(loop)
    end = len(block.ops) - (1 if block.terminator is not None else 0)
    before = set(map(id, block.ops[:at]))
    outside = lambda op: id(op) not in before  # noqa: E731 - loads in the block before the loop are leaves
    # each access's leaves, once: the loop's own (the loop's first) decide, those after it join in
    per_access = {m: _leaves([m], outside) for op in block.ops[at:end] for m in _memory_ops(op)}
    if not any(per_access[m] for m in _memory_ops(loop)):
        return False
    if not _helps(analysis, [m for m, found in per_access.items() if found]):
        return False
    leaves = sorted({v for found in per_access.values() for v in found}, key=lambda v: _position(v.op))
    region = block.ops[max(block.ops.index(v.op) for v in leaves) + 1:end]
    inside = {r for op in region for r in op.results}
    later = block.ops[end:]
    out = [v for v in dict.fromkeys(o for op in later for o in values_used_from_outside(op)) if v in inside]
    b = Builder()
    b.set_insertion_point_before(region[0])
    b.loc = loop.loc
    cond = None
    for v in leaves:
        ok = b.op(O.CmpOp, b.op(O.AndOp, v, b.constant(ALIGN - 1, v.type)), b.constant(0, v.type), predicate="eq")
        cond = ok if cond is None else b.op(O.AndOp, cond, ok)
    ver = b.if_(cond, [v.type for v in out])
    for old, new in zip(out, ver.results):
        for user, i in list(old.uses):
            if not any(user is op or op.is_ancestor_of(user) for op in region):
                user.set_operand(i, new)
    tb = Builder(ver.regions[0].block)
    tb.loc = loop.loc
    mapping = {v: tb.create(O.HintOp, [v], [v.type], {"divisibility": (ALIGN,)}).result for v in leaves}
    first = min(block.ops.index(v.op) for v in leaves)
    for op in block.ops[first:block.ops.index(ver)]:  # what the leaves give before the region (a pointer cast)
        if op.is_pure and not op.regions and any(o in mapping for o in op.operands):
            tb.insert(op.clone(mapping))
    for op in region:
        tb.insert(op.clone(mapping))
    tb.yield_(*[mapping[v] for v in out])
    eb = Builder(ver.regions[1].block)
    for op in region:
        op.detach()
        ver.regions[1].block.append(op)
    eb.yield_(*out)
    return True


class VersionAlignment(Pass):
    """``analysis(func)``: the target's axis analysis of a function (GPU pipelines pass theirs), or None."""
    name = "version-alignment"

    def __init__(self, analysis=None):
        self.analysis = analysis

    def run(self, module):
        changed = False
        done = set()
        analyses: dict = {}  # id(func) -> its analysis, made when a loop first needs it, dropped once it changes
        for op in list(module.walk(post_order=True)):
            if not isinstance(op, O.ForOp) or op.parent is None or id(op) in done:
                continue
            if any(isinstance(p, O.IfOp) and id(p) in done for p in _ancestors(op)):
                continue  # inside a version made here already
            func = next(p for p in _ancestors(op) if isinstance(p, O.FuncOp))
            if version(op, None if self.analysis is None else lambda f=func: self._analysis(analyses, f)):
                analyses.pop(id(func), None)
                done.add(id(op.parent_op))
                done.add(id(op))
                changed = True
        return changed

    def _analysis(self, analyses, func):
        made = analyses.get(id(func))
        if made is None:
            made = analyses[id(func)] = self.analysis(func)
        return made


def _ancestors(op):
    p = op.parent_op
    while p is not None:
        yield p
        p = p.parent_op


__all__ = ["VersionAlignment", "loaded_leaves", "version"]
