"""The exported entry point ``tilec_worker(args, counter, total, g0, g1, g2, scratch, chunk)``.

``args`` points at one 8-byte slot per kernel parameter (packed once per launch by the launcher). Each worker
thread claims consecutive program ids from the shared ``counter`` with an atomic add, in guided chunks of
(programs left) / ``chunk`` (at least one): big claims while much is left so tiny programs do not serialise on
one cache line, single programs at the end so a descheduled thread never holds much work hostage, until
``total`` are taken; splits each id into (x, y, z) and
calls the kernel with its own ``scratch`` area. Workers never touch Python, so they run
in parallel with the GIL released by ctypes.

``tilec_run(block)`` runs a whole grid on the calling thread from one pointer: the block holds
``RUN_HEADER`` 8-byte slots (g0, g1, g2, scratch) before the parameters' slots. A ctypes call costs per argument,
so the launcher's inline path (tiny grids, single programs) makes a one-argument call.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen import llvm_types as LT

WORKER = "tilec_worker"
RUN = "tilec_run"
RUN_HEADER = 4


def build_worker(module: ir.Module, kernel: ir.Function, param_types, debug=None, loc=None):
    """``debug`` (a ``codegen.debuginfo.DebugInfo``): the worker gets a subprogram too, with its call of the
    kernel located at the kernel's definition, so the kernel's line table survives being inlined into it."""
    i32, i64 = LT.I32, LT.I64
    fnty = ir.FunctionType(LT.VOID, [LT.PTR, LT.PTR, i64, i32, i32, i32, LT.PTR, i64])
    fn = ir.Function(module, fnty, WORKER)
    args, counter, total, g0, g1, g2, scratch, chunk = fn.args
    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("claim")
    run = fn.append_basic_block("run")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    if debug is not None:
        debug.locate(b, debug.subprogram(fn, WORKER, loc), loc)
    params = []
    for i, t in enumerate(param_types):
        slot = b.gep(args, [LT.const(i64, 8 * i)], source_etype=LT.I8)
        v = b.load(slot, typ=t, align=8)
        params.append(v)
    b.branch(loop)
    b.position_at_end(loop)
    seen = b.load_atomic(counter, "monotonic", align=8, typ=i64)
    left = b.sub(total, seen)
    want = b.sdiv(left, chunk)
    want = b.select(b.icmp_signed("<", want, LT.const(i64, 1)), LT.const(i64, 1), want)
    first = b.atomic_rmw("add", counter, want, "monotonic")
    b.cbranch(b.icmp_signed("<", first, total), run, done)
    b.position_at_end(run)
    end = b.add(first, want)
    end = b.select(b.icmp_signed("<", end, total), end, total)
    each = fn.append_basic_block("each")
    b.branch(each)
    b.position_at_end(each)
    pid = b.phi(i64)
    pid.add_incoming(first, run)
    g01 = b.mul(b.zext(g0, i64), b.zext(g1, i64))
    x = b.trunc(b.urem(pid, b.zext(g0, i64)), i32)
    y = b.trunc(b.urem(b.udiv(pid, b.zext(g0, i64)), b.zext(g1, i64)), i32)
    z = b.trunc(b.udiv(pid, g01), i32)
    b.call(kernel, params + [x, y, z, g0, g1, g2, scratch])
    nxt = b.add(pid, LT.const(i64, 1))
    pid.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, end), each, loop)
    b.position_at_end(done)
    b.ret_void()
    return fn


def build_run(module: ir.Module, worker: ir.Function, debug=None, loc=None):
    i32, i64 = LT.I32, LT.I64
    fn = ir.Function(module, ir.FunctionType(LT.VOID, [LT.PTR]), RUN)
    block, = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    if debug is not None:  # as the worker: its line table survives the worker being inlined here
        debug.locate(b, debug.subprogram(fn, RUN, loc), loc)

    def slot(i, t):
        return b.load(b.gep(block, [LT.const(i64, 8 * i)], source_etype=LT.I8), typ=t, align=8)
    g = [b.trunc(slot(i, i64), i32) for i in range(3)]
    scratch = slot(3, LT.PTR)
    counter = b.alloca(i64)
    b.store(LT.const(i64, 0), counter)
    total = b.mul(b.mul(b.zext(g[0], i64), b.zext(g[1], i64)), b.zext(g[2], i64))
    params = b.gep(block, [LT.const(i64, 8 * RUN_HEADER)], source_etype=LT.I8)
    b.call(worker, [params, counter, total, *g, scratch, LT.const(i64, 1)])
    b.ret_void()
    return fn
