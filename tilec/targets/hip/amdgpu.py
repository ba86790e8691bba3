"""AMDGPU building blocks for the GPU lowering: work-item and work-group ids, the grid size, barriers, lane
shuffles and predicated vector global accesses, all as LLVM intrinsics and plain IR that the AMDGPU backend
selects directly (no inline assembly, so LLVM schedules and waits on them itself).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.blocks import guarded
from ...codegen.intrinsics import call as intrinsic
from ...codegen.llvm_types import byte_size
from ...gpu.lowering.shuffle import widened
from ...gpu.lowering.types import I32, I64, VOID

CONSTANT_PTR = ir.PointerType(addrspace=4)


def workitem_id(b):
    """This thread's index in its (one-dimensional) work-group."""
    return intrinsic(b, "llvm.amdgcn.workitem.id.x", I32, [])


def workgroup_id(b, axis: int):
    return intrinsic(b, f"llvm.amdgcn.workgroup.id.{'xyz'[axis]}", I32, [])


def num_workgroups(b, axis: int):
    """Work-groups along ``axis``: code object v5's hidden ``block_count_{x,y,z}`` kernel arguments, the first
    three i32 of the implicit argument block, which the runtime fills at every launch."""
    fn = b.module.globals.get("llvm.amdgcn.implicitarg.ptr")
    if fn is None:
        fn = ir.Function(b.module, ir.FunctionType(CONSTANT_PTR, []), "llvm.amdgcn.implicitarg.ptr")
    base = b.call(fn, [])
    p = b.gep(base, [ir.Constant(I64, 4 * axis)], source_etype=ir.IntType(8), inbounds=True)
    v = b.load(p, typ=I32)
    v.align = 4
    return v


def barrier(b):
    """Work-group barrier that also orders LDS (shared-memory) accesses: ``s_barrier`` alone synchronises
    execution only, so workgroup-scope release/acquire fences around it make earlier writes visible."""
    b.fence("release", "workgroup")
    intrinsic(b, "llvm.amdgcn.s.barrier", VOID, [])
    b.fence("acquire", "workgroup")


def _bpermute(b, lane_addr, x32):
    return intrinsic(b, "llvm.amdgcn.ds.bpermute", I32, [lane_addr, x32])


def shuffle_xor(b, v, lane_mask: int, warp_size: int):
    """``v`` from the lane whose index is this lane's XOR ``lane_mask``, through ``ds_bpermute_b32`` (a byte
    address per lane: source lane * 4), for every scalar type of the register model (i1..i64, f16, f32, f64,
    pointers: :func:`~tilec.gpu.lowering.shuffle.widened` carries them through the 32-bit permute)."""
    lane = b.and_(workitem_id(b), ir.Constant(I32, warp_size - 1))
    addr = b.shl(b.xor(lane, ir.Constant(I32, lane_mask)), ir.Constant(I32, 2))
    return widened(b, v, lambda x32: _bpermute(b, addr, x32))


def shuffle_idx(b, x32, lane):
    """i32 ``x32`` of lane ``lane`` of this wave (``ds_bpermute_b32``)."""
    return _bpermute(b, b.shl(lane, ir.Constant(I32, 2)), x32)


def _access_type(et, n):
    return ir.VectorType(et, n) if n > 1 else et


def _align(et, n) -> int:
    size = n * byte_size(et)
    return size if size & (size - 1) == 0 else byte_size(et)


def vector_load(b, ptr, et, n: int, pred=None, others=None):
    """``n`` consecutive elements of ``et`` at ``ptr`` as one (vector) load; where ``pred`` is false the load
    is branched around and the results are ``others`` (or zero)."""
    ty = _access_type(et, n)

    def load():
        v = b.load(ptr, typ=ty)
        v.align = _align(et, n)
        return v
    if pred is None:
        v = load()
    else:
        if others is None:
            other = ir.Constant(ty, None)
        elif n == 1:
            other = others[0]
        else:
            other = ir.Constant(ty, ir.Undefined)
            for i, o in enumerate(others):
                other = b.insert_element(other, o, ir.Constant(I32, i))
        v = guarded(b, pred, load, other)
    if n == 1:
        return [v]
    return [b.extract_element(v, ir.Constant(I32, i)) for i in range(n)]


def vector_store(b, ptr, values, pred=None):
    """Store ``values`` consecutively at ``ptr`` as one (vector) store, only where ``pred`` holds."""
    et, n = values[0].type, len(values)
    if n == 1:
        v = values[0]
    else:
        v = ir.Constant(ir.VectorType(et, n), ir.Undefined)
        for i, x in enumerate(values):
            v = b.insert_element(v, x, ir.Constant(I32, i))

    def store():
        s = b.store(v, ptr)
        s.align = _align(et, n)
    if pred is None:
        store()
    else:
        with b.if_then(pred):
            store()
