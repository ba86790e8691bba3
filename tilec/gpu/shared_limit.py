"""The shared-memory (LDS) budget of a kernel, checked at compile time against its target.

allocate-shared gives the kernel its ``shared`` bytes; a kernel needing more than one block may have would compile
to code the driver refuses at launch with a bare invalid-value error. Refused here instead, before any code is
generated: an :class:`OutOfResources` at the kernel line of the largest user, naming the kernel, the bytes needed
and allowed, the largest users with their tile shapes, and the tile sizes (the int constexprs those shapes are
made of) and ``num_stages`` to reduce.
"""
from __future__ import annotations

import linecache

from ..errors import OutOfResources
from . import ops as G
from .lowering import budget
from .passes.allocate_shared import buffer_bytes
from .scratch import scratch_plan
from ..targets.options import num_warps_of


def _users(kernel):
    """[(bytes, op, what it holds)] of every op with shared memory, largest first."""
    out = []
    for op in kernel.walk():
        if "smem_offset" not in op.attrs:
            continue
        if isinstance(op, G.LocalAllocOp):
            t = op.result.type
            n = buffer_bytes(t)
            what = f"{t.num_buffers} stage{'s' if t.num_buffers != 1 else ''} of {_shape(t.tile_shape, t)} tiles"
        else:
            plan = scratch_plan(op)
            if plan is None:
                continue
            n = plan.bytes
            t = op.operands[0].type if op.operands else op.result.type
            what = f"{plan.use} a {_shape(t.shape, t)} tile"
        if n:
            out.append((n, op, what))
    return sorted(out, key=lambda u: -u[0])


def _shape(shape, t) -> str:
    e = t.element
    return "x".join(str(d) for d in shape) + " " + (getattr(e, "name", None) or str(e))


def _dims(op) -> set:
    t = op.result.type if isinstance(op, G.LocalAllocOp) else (op.operands[0].type if op.operands else
                                                                 op.result.type)
    return set(getattr(t, "shape", ()) or ())


def check_shared_memory(kernel, metadata: dict, target) -> None:
    """Raise :class:`OutOfResources` when ``kernel`` (after allocate-shared) needs more shared memory than
    ``target`` (a :class:`GpuTarget`) allows one block. A kernel that is also past the lowering's budget is
    refused for that instead (its tiles are the cause, and its shared memory follows from them); the lowering
    checks the budget of every kernel itself, so only this error path asks here."""
    need = int(kernel.attrs.get("shared", 0) or 0)
    limit = target.shared_memory_limit()
    if limit is None or need <= limit[0]:
        return
    budget.check(kernel, int(metadata.get("num_warps") or num_warps_of(kernel)), target.warp_size)
    allowed, what = limit
    name = metadata.get("name", kernel.sym_name)
    users = _users(kernel)[:3]
    parts = [f"kernel '{name}' needs {need:,} bytes of shared memory, {what} allows {allowed:,} per block"]
    if users:
        parts.append("; the largest users: " + ", ".join(
            f"{n:,} bytes for {desc}" + (f" (line {op.loc.line})" if op.loc is not None else "")
            for n, op, desc in users))
    dims = set().union(*(_dims(op) for _, op, _ in users)) if users else set()
    sizes = [f"{k}={v}" for k, v in (metadata.get("constexprs") or {}).items()
             if type(v) is int and v > 1 and v in dims]
    advice = f"use smaller tiles ({', '.join(sizes)})" if sizes else "use smaller tiles"
    stages = (metadata.get("options") or {}).get("num_stages")
    staged = any(isinstance(op, G.LocalAllocOp) and op.result.type.num_buffers > 1 for _, op, _ in users)
    if staged and isinstance(stages, int) and stages > 1:
        advice += f" or fewer stages (num_stages={stages})"
    message = "".join(parts) + f". To fit, {advice}."
    loc = users[0][1].loc if users else None
    if loc is None:
        raise OutOfResources(message, need, allowed, "shared memory")
    raise OutOfResources(message, need, allowed, "shared memory", loc.file, loc.line, loc.col,
                         linecache.getline(loc.file, loc.line) or None)
