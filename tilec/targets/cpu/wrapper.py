"""The exported entry points ``tilec_worker(args, counter, total, g0, g1, g2, scratch, chunk, slice)`` and
``tilec_run(block)``.

``args`` points at one 8-byte slot per kernel parameter (packed once per launch by the launcher). Each worker
thread claims consecutive program ids from the shared ``counter`` with an atomic add, in guided chunks of
(programs left) / ``chunk`` (at least one): big claims while much is left so tiny programs do not serialise on
one cache line, single programs at the end so a descheduled thread never holds much work hostage, until
``total`` are taken; splits the first id of each claim into (x, y, z) and counts from there (a division per
program cost a tiny program a fifth of its time), calling the kernel with its own ``scratch`` area. Workers
never touch Python, so they run in parallel with the GIL released by ctypes.

Ctrl-C. The calling thread must come back to Python now and then, for a SIGINT to become a KeyboardInterrupt:
with ``slice`` > 0 (clock ticks, :func:`ticks`), a worker claims one program at a time while programs are long
(up to :data:`SLICE_CLAIM` while that many take at most a quarter of the slice) and returns once ``slice`` ticks
have passed, after the programs it claimed; the launcher calls it again until the grid is done. A ``counter`` at or above :data:`STOP` (stored by the launcher after a KeyboardInterrupt) ends
every worker after the program it is running. Where the host has no clock that user code may read, ``slice``
is ignored (the launch runs to its end, as a single program always does).

``tilec_run(block)`` runs a grid on the calling thread from one pointer: the block holds ``RUN_HEADER`` 8-byte
slots (g0, g1, g2, scratch, slice) before the parameters' slots. A ctypes call costs per argument, so the
launcher's inline path (tiny grids, single programs) makes a one-argument call. It returns how many programs
ran (the grid's size once done; fewer when its slice ran out: the launcher goes on from there).
"""
from __future__ import annotations

import llvmlite.binding as llvm
import llvmlite.ir as ir

from ...codegen import llvm_types as LT
from ...codegen.blocks import enter_loop

WORKER = "tilec_worker"
RUN = "tilec_run"
TICKS = "tilec_ticks"
RUN_HEADER = 5
#: a counter value that stops every worker after its current program (no grid has this many programs)
STOP = 1 << 62
#: the most programs a worker with a slice claims at once (it returns only between claims)
SLICE_CLAIM = 64


def worker_type():
    """``tilec_worker``'s LLVM type (the AOT entry declares it too)."""
    i32, i64 = LT.I32, LT.I64
    return ir.FunctionType(LT.VOID, [LT.PTR, LT.PTR, i64, i32, i32, i32, LT.PTR, i64, i64])


def ticks(b: ir.IRBuilder):
    """An i64 read of a clock that user code may read cheaply (x86: the time-stamp counter; AArch64: the
    virtual counter), or None on other hosts."""
    arch = llvm.get_process_triple().split("-")[0]
    if arch in ("x86_64", "amd64", "i686", "i386"):
        fn = b.module.declare_intrinsic("llvm.readcyclecounter", fnty=ir.FunctionType(LT.I64, []))
        return b.call(fn, [])
    if arch in ("aarch64", "arm64"):
        return b.asm(ir.FunctionType(LT.I64, []), "mrs $0, cntvct_el0", "=r", [], True)
    return None


def build_worker(module: ir.Module, kernel: ir.Function, param_types, debug=None, loc=None):
    """``debug`` (a ``codegen.debuginfo.DebugInfo``): the worker gets a subprogram too, with its call of the
    kernel located at the kernel's definition, so the kernel's line table survives being inlined into it."""
    i32, i64 = LT.I32, LT.I64
    fn = ir.Function(module, worker_type(), WORKER)
    args, counter, total, g0, g1, g2, scratch, chunk, slice_ = fn.args
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
    now = ticks(b)
    sliced = b.icmp_signed(">", slice_, LT.const(i64, 0)) if now is not None else LT.const(LT.I1, 0)
    deadline = b.add(now, slice_) if now is not None else None
    start = b.block
    b.branch(loop)
    b.position_at_end(loop)
    cap = b.phi(i64)  # sliced: how many programs one claim may take (one while programs are long)
    cap.add_incoming(LT.const(i64, 1), start)
    if now is not None:
        since = b.phi(i64)  # the clock when this claim began
        since.add_incoming(now, start)
    seen = b.load_atomic(counter, "monotonic", align=8, typ=i64)
    left = b.sub(total, seen)
    want = b.sdiv(left, chunk)
    want = b.select(b.icmp_signed("<", want, LT.const(i64, 1)), LT.const(i64, 1), want)
    want = b.select(b.and_(sliced, b.icmp_signed(">", want, cap)), cap, want)
    first = b.atomic_rmw("add", counter, want, "monotonic")
    b.cbranch(b.icmp_signed("<", first, total), run, done)
    b.position_at_end(run)
    end = b.add(first, want)
    end = b.select(b.icmp_signed("<", end, total), end, total)
    x0, y0, z0 = _split_id(b, first, g0, g1)
    _, (each, step) = enter_loop(b, "each", "next")
    pid, x, y, z = b.phi(i64), b.phi(i32), b.phi(i32), b.phi(i32)
    for phi, v in ((pid, first), (x, x0), (y, y0), (z, z0)):
        phi.add_incoming(v, run)
    b.call(kernel, params + [x, y, z, g0, g1, g2, scratch])
    nxt = b.add(pid, LT.const(i64, 1))
    x_next, y_next, z_next = _next_coordinates(b, x, y, z, g0, g1)
    # a stop request (Ctrl-C) ends the claimed run too: one relaxed load per program
    stopped = b.icmp_signed(">=", b.load_atomic(counter, "monotonic", align=8, typ=i64), LT.const(i64, STOP))
    b.cbranch(stopped, done, step)
    b.position_at_end(step)
    for phi, v in ((pid, nxt), (x, x_next), (y, y_next), (z, z_next)):
        phi.add_incoming(v, step)
    more = b.icmp_signed("<", nxt, end)
    if now is None:
        b.cbranch(more, each, loop)
        cap.add_incoming(cap, step)
    else:  # between claims, a worker with a slice returns once it has run out
        check = fn.append_basic_block("slice")
        b.cbranch(more, each, check)
        b.position_at_end(check)
        t = ticks(b)
        late = b.icmp_signed(">=", t, deadline)
        # claims of SLICE_CLAIM programs while that many take at most a quarter of the slice, else single ones
        quick = b.icmp_signed("<=", b.mul(b.sub(t, since), LT.const(i64, 4 * SLICE_CLAIM)),
                              b.mul(slice_, b.sub(end, first)))
        cap.add_incoming(b.select(quick, LT.const(i64, SLICE_CLAIM), LT.const(i64, 1)), check)
        since.add_incoming(t, check)
        b.cbranch(b.and_(sliced, late), done, loop)
    b.position_at_end(done)
    b.ret_void()
    return fn


def _split_id(b: ir.IRBuilder, pid, g0, g1):
    """(x, y, z) of program ``pid`` (i64) on a grid ``g0`` x ``g1`` x ...: by division, once per claim (the ids
    after it are counted, :func:`_next_coordinates`; a division per program was most of a tiny program's cost)."""
    i32, i64 = LT.I32, LT.I64
    g0w, g1w = b.zext(g0, i64), b.zext(g1, i64)
    return (b.trunc(b.urem(pid, g0w), i32), b.trunc(b.urem(b.udiv(pid, g0w), g1w), i32),
            b.trunc(b.udiv(pid, b.mul(g0w, g1w)), i32))


def _next_coordinates(b: ir.IRBuilder, x, y, z, g0, g1):
    """The coordinates of the program after (x, y, z): x counts up, wrapping into y, y into z."""
    one, zero = LT.const(LT.I32, 1), LT.const(LT.I32, 0)
    x1 = b.add(x, one)
    wrap_x = b.icmp_unsigned(">=", x1, g0)
    y1 = b.select(wrap_x, b.add(y, one), y)
    wrap_y = b.icmp_unsigned(">=", y1, g1)
    return b.select(wrap_x, zero, x1), b.select(wrap_y, zero, y1), b.select(wrap_y, b.add(z, one), z)


def build_run(module: ir.Module, worker: ir.Function, debug=None, loc=None):
    i32, i64 = LT.I32, LT.I64
    fn = ir.Function(module, ir.FunctionType(i64, [LT.PTR]), RUN)
    block, = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    if debug is not None:  # as the worker: its line table survives the worker being inlined here
        debug.locate(b, debug.subprogram(fn, RUN, loc), loc)

    def slot(i, t):
        return b.load(b.gep(block, [LT.const(i64, 8 * i)], source_etype=LT.I8), typ=t, align=8)
    g = [b.trunc(slot(i, i64), i32) for i in range(3)]
    scratch = slot(3, LT.PTR)
    slice_ = slot(4, i64)
    counter = b.alloca(i64)
    b.store(LT.const(i64, 0), counter)
    total = b.mul(b.mul(b.zext(g[0], i64), b.zext(g[1], i64)), b.zext(g[2], i64))
    params = b.gep(block, [LT.const(i64, 8 * RUN_HEADER)], source_etype=LT.I8)
    b.call(worker, [params, counter, total, *g, scratch, LT.const(i64, 1), slice_])
    ran = b.load(counter, typ=i64)
    b.ret(b.select(b.icmp_signed("<", ran, total), ran, total))
    build_ticks(module)
    return fn


def build_ticks(module: ir.Module):
    """``tilec_ticks()``: the clock the slices count (0 where there is none), for the launcher to calibrate."""
    fn = ir.Function(module, ir.FunctionType(LT.I64, []), TICKS)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    t = ticks(b)
    b.ret(t if t is not None else LT.const(LT.I64, 0))
    return fn
