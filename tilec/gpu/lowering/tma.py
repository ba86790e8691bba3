"""Lowering of the tensor copy engine's ops (``tensormap_create``, ``tma_copy``, ``tma_store``, ``mbarrier_*``): addresses
here, instructions from the target (:class:`tilec.gpu.target.GpuTarget`'s tensor copy hooks).

A descriptor lives in the launch's global scratch (the kernel's hidden last parameter,
``gpu/launch_tensormaps.py: scratch_layout``): one the launch writes, in the header, the same for every program;
else program ``p`` (linear over the grid) owns ``per_program`` bytes after the header from ``p * per_program``, one
128-byte slot per descriptor, and writes it. Barriers are stages of an i64 shared buffer, 8 bytes each.
"""
from __future__ import annotations

import llvmlite.ir as ir

from .. import ops as G
from ..launch_tensormaps import scratch_layout
from .registry import lowers
from .shared import stage_base
from .types import I32

I64 = ir.IntType(64)


def _c(v, t=I32):
    return ir.Constant(t, v)


def _shared_address(L, offset):
    """Absolute shared-memory address (i32) of byte ``offset`` of the kernel's shared memory."""
    return L.b.add(L.b.ptrtoint(L.smem, I32), offset)


def _program_index(L):
    t, b = L.target, L.b
    x, y, z = (t.block_id(b, a) for a in range(3))
    nx, ny = t.num_blocks(b, 0), t.num_blocks(b, 1)
    return b.add(x, b.mul(nx, b.add(y, b.mul(ny, z))))


@lowers(G.TensormapCreateOp)
def lower_tensormap_create(L, op):
    b = L.b
    lay = L.cache.get("scratch_layout")
    if lay is None:
        lay = L.cache["scratch_layout"] = scratch_layout(L.func)
    slot = op.attrs["slot"]
    base = b.ptrtoint(L.global_scratch, I64)
    if slot in lay.launched:  # the launch wrote it, the same for every program
        L.bind(op.result, b.add(base, _c(lay.launched[slot], I64)))
        return
    off = b.add(b.mul(b.zext(_program_index(L), I64), _c(lay.per_program, I64)),
                _c(lay.header + lay.program[slot], I64))
    addr = b.add(base, off)
    L.target.tensormap_create(L, op, addr)
    L.bind(op.result, addr)


@lowers(G.TmaCopyOp)
def lower_tma_copy(L, op):
    dst = _shared_address(L, stage_base(L, op.buffer, op.index))
    bar = _shared_address(L, stage_base(L, op.barriers, op.index))
    L.target.tma_copy(L, op, dst, bar, L.get(op.desc), L.get(op.pred), [L.get(c) for c in op.coords])


@lowers(G.TmaStoreOp)
def lower_tma_store(L, op):
    src = _shared_address(L, stage_base(L, op.buffer, op.index))
    L.target.tma_store(L, op, src, L.get(op.desc), [L.get(c) for c in op.coords])


def _stages(L, buf):
    return [_shared_address(L, L.b.add(L.get(buf), _c(8 * s))) for s in range(buf.type.num_buffers)]


@lowers(G.MBarrierInitOp)
def lower_mbarrier_init(L, op):
    for bar in _stages(L, op.barriers):
        L.target.mbarrier(L, "init", bar, 1)
    L.target.barrier(L.b)  # every thread sees initialised barriers before it waits on one


@lowers(G.MBarrierWaitOp)
def lower_mbarrier_wait(L, op):
    bar = _shared_address(L, stage_base(L, op.barriers, op.index))
    L.target.mbarrier(L, "wait", bar, L.get(op.phase))


@lowers(G.MBarrierInvalOp)
def lower_mbarrier_inval(L, op):
    for bar in _stages(L, op.barriers):
        L.target.mbarrier(L, "inval", bar)
