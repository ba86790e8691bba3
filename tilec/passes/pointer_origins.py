"""Which kernel parameters a kernel writes through: the pointer operand of every store and atomic traced back to
the function arguments it can come from (through addptr, shape ops, gathers, selects, and values carried by
for/if/while).

The launch path refuses read-only arrays for these parameters, so a kernel never writes through memory its
caller marked read-only (a read-only numpy array or memmap, a stride-0 broadcast view)."""
from __future__ import annotations

from ..ir import ops as O
from ..ir.core import BlockArgument, OpResult

_THROUGH = (O.AddPtrOp, O.SplatOp, O.BroadcastOp, O.ExpandDimsOp, O.ReshapeOp, O.TransOp, O.HintOp, O.GatherOp)


def _carried(op, index):
    """Values that may flow into position ``index`` of a for/while's carried values or an if's results."""
    out = []
    if isinstance(op, O.ForOp):
        out.append(op.inits[index])
        y = op.body.terminator
        if y is not None and index < len(y.operands):
            out.append(y.operands[index])
    elif isinstance(op, O.WhileOp):
        if index < len(op.inits):
            out.append(op.inits[index])
        for region in op.regions:
            t = region.block.terminator
            if t is not None:
                vals = list(t.operands[1:]) if isinstance(t, O.ConditionOp) else list(t.operands)
                if index < len(vals):
                    out.append(vals[index])
    elif isinstance(op, O.IfOp):
        for region in op.regions:
            if region.blocks and region.block.terminator is not None and index < len(region.block.terminator.operands):
                out.append(region.block.terminator.operands[index])
    return out


def origins(value, func) -> set[int]:
    """Indices of ``func``'s arguments that ``value`` (a pointer or tile of pointers) may be derived from."""
    found, seen, todo = set(), set(), [value]
    args = {id(a): i for i, a in enumerate(func.args)}
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if id(v) in args:
            found.add(args[id(v)])
        elif isinstance(v, OpResult):
            op = v.op
            if isinstance(op, _THROUGH) or "forwards_value" in op.traits:
                todo.append(op.operands[0])
            elif isinstance(op, O.SelectOp):
                todo += [op.true_value, op.false_value]
            elif isinstance(op, (O.ForOp, O.WhileOp, O.IfOp)):
                todo += _carried(op, v.index)
            else:  # a pointer loaded from memory or made otherwise: it may point anywhere
                found |= {i for i, a in enumerate(func.args) if a.type.is_ptr}
        elif isinstance(v, BlockArgument):
            owner = v.block.parent_op if hasattr(v.block, "parent_op") else None
            if isinstance(owner, O.ForOp) and v.index > 0:
                todo += _carried(owner, v.index - 1)
            elif isinstance(owner, O.WhileOp):
                todo += _carried(owner, v.index)
    return found


def written_params(func) -> list[int]:
    """Sorted argument indices of ``func`` that a store or atomic may write through."""
    out = set()
    for op in func.walk():
        if isinstance(op, (O.StoreOp, O.AtomicRMWOp, O.AtomicCASOp)):
            out |= origins(op.ptr, func)
        elif isinstance(op, O.DescriptorStoreOp):
            out |= origins(op.base, func)
    return sorted(out)
