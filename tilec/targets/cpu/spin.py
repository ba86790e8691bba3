"""The native half of the helper threads' hand-off (``pool.py``), JIT-compiled once per process: a job is posted
into a helper's slot array and taken there without Python, so a helper that is already awake starts a launch's
work within a microsecond, holding no GIL.

Why native: a helper asleep on a lock wakes through the kernel's scheduler (microseconds on an idle core, more on
a busy or power-saving one) and then needs the GIL before it can call the worker. A helper that has just finished
a job instead spins here for a short while (``pool.SPIN_S``), watching its slot, so back-to-back launches find it
running; a job that comes later finds it asleep on its lock, which the launcher releases too.

A slot is ``SLOTS`` 64-bit words: [0] the generation posted last, [1] the generation claimed last, [2] the
generation finished last, [3] the worker's address, [4:13] the worker's nine arguments. Each generation is
claimed once, by the helper (which then runs it and stores [2]) or by the launcher taking it back (the helper
then never starts it): both compare-and-swap [1] from the generation before to this one.

    tilec_spin_run(slot, last, ticks) -> the generation seen last: runs each generation posted after ``last``
        that it can claim, until none has come for ``ticks`` of the clock
    tilec_take_back(slot, gen) -> 1 when the launcher claimed ``gen`` first (no helper will run it)
    tilec_wait_done(slot, gen, ticks) -> 1 once the helper that claimed ``gen`` has finished it, 0 if ``ticks``
        of the clock pass first
    tilec_publish(slot, gen): posts ``gen`` once the job's words are written (a release store)
"""
from __future__ import annotations

import ctypes
import threading

import llvmlite.binding as llvm
from llvmlite import ir

from ...codegen import llvm_types as LT
from .wrapper import ticks, worker_type
from .jit import Engine

SLOTS = 16


def _pause(b: ir.IRBuilder):
    arch = llvm.get_process_triple().split("-")[0]
    if arch in ("x86_64", "amd64", "i686", "i386"):
        b.call(b.module.declare_intrinsic("llvm.x86.sse2.pause", fnty=ir.FunctionType(LT.VOID, [])), [])
    elif arch in ("aarch64", "arm64"):  # hint #1: yield
        hint = b.module.declare_intrinsic("llvm.aarch64.hint", fnty=ir.FunctionType(LT.VOID, [LT.I32]))
        b.call(hint, [LT.const(LT.I32, 1)])


def _word(b, slot, i):
    return b.gep(slot, [LT.const(LT.I64, 8 * i)], source_etype=LT.I8)


def _store_release(b, ptr, value):
    b.atomic_rmw("xchg", ptr, value, "release")  # (llvmlite writes no atomic store through an opaque pointer)


def _claim(b, slot, gen):
    """Compare-and-swap the claimed generation from ``gen - 1`` to ``gen``: an i1, true where this caller won."""
    pair = b.cmpxchg(_word(b, slot, 1), b.sub(gen, LT.const(LT.I64, 1)), gen, "acq_rel", "acquire")
    return b.extract_value(pair, 1)


def _watch(b: ir.IRBuilder, slot, i: int, until, limit):
    """Spin on word ``i`` of ``slot`` (acquire loads, pausing between looks) from the builder's block until
    ``until(b, value)`` holds or ``limit`` ticks (spins, without a clock) pass. Returns (the value last loaded,
    the block reached when it held, the block reached when time ran out); the builder is left in neither."""
    i64 = LT.I64
    fn = b.function
    loop, wait, more, hit, miss = (fn.append_basic_block(n) for n in ("loop", "wait", "more", "hit", "miss"))
    here = b.block
    t0 = ticks(b)
    b.branch(loop)
    b.position_at_end(loop)
    spins = b.phi(i64)
    spins.add_incoming(LT.const(i64, 0), here)
    value = b.load_atomic(_word(b, slot, i), "acquire", align=8, typ=i64)
    b.cbranch(until(b, value), hit, wait)
    b.position_at_end(wait)
    spent = b.sub(ticks(b), t0) if t0 is not None else spins
    b.cbranch(b.icmp_signed(">=", spent, limit), miss, more)
    b.position_at_end(more)
    _pause(b)
    spins.add_incoming(b.add(spins, LT.const(i64, 1)), more)
    b.branch(loop)
    return value, hit, miss


def _spin_run(m: ir.Module):
    """Runs the jobs posted after ``last`` as they come, each claimed first; returns the last generation seen once
    none has come for ``limit`` ticks (spins, without a clock). Between jobs it stays here: a helper that went
    back to Python between two launches would need the GIL, and the launching thread would then wait for it."""
    i64 = LT.I64
    fn = ir.Function(m, ir.FunctionType(i64, [LT.PTR, i64, i64]), "tilec_spin_run")
    slot, first, limit = fn.args
    entry, start = fn.append_basic_block("entry"), fn.append_basic_block("start")
    b = ir.IRBuilder(entry)
    b.branch(start)
    b.position_at_end(start)  # a fresh spin after each job
    last = b.phi(i64)
    last.add_incoming(first, entry)
    gen, got, out = _watch(b, slot, 0, lambda b, v: b.icmp_unsigned("!=", v, last), limit)
    b.position_at_end(out)
    b.ret(last)
    run, skip = fn.append_basic_block("run"), fn.append_basic_block("skip")
    b.position_at_end(got)
    b.cbranch(_claim(b, slot, gen), run, skip)  # else the launch took it back
    b.position_at_end(run)
    worker = b.inttoptr(b.load(_word(b, slot, 3), typ=i64, align=8), worker_type().as_pointer())
    ptr = [b.inttoptr(b.load(_word(b, slot, i), typ=i64, align=8), LT.PTR) for i in (4, 5, 10)]
    word = [b.load(_word(b, slot, i), typ=i64, align=8) for i in range(4, 13)]
    b.call(worker, [ptr[0], ptr[1], word[2], b.trunc(word[3], LT.I32), b.trunc(word[4], LT.I32),
                    b.trunc(word[5], LT.I32), ptr[2], word[7], word[8]])
    _store_release(b, _word(b, slot, 2), gen)
    b.branch(skip)
    b.position_at_end(skip)
    last.add_incoming(gen, skip)
    b.branch(start)


def _take_back(m: ir.Module):
    fn = ir.Function(m, ir.FunctionType(LT.I64, [LT.PTR, LT.I64]), "tilec_take_back")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.zext(_claim(b, *fn.args), LT.I64))


def _wait_done(m: ir.Module):
    """1 once the helper has finished ``gen``; 0 when ``limit`` ticks (spins, without a clock) have passed first:
    the caller then sleeps before it asks again, leaving the core to the helper on a machine with more threads
    than cores."""
    i64 = LT.I64
    fn = ir.Function(m, ir.FunctionType(i64, [LT.PTR, i64, i64]), "tilec_wait_done")
    slot, gen, limit = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    _, done, out = _watch(b, slot, 2, lambda b, v: b.icmp_unsigned("==", v, gen), limit)
    b.position_at_end(done)
    b.ret(LT.const(i64, 1))
    b.position_at_end(out)
    b.ret(LT.const(i64, 0))


def _publish(m: ir.Module):
    fn = ir.Function(m, ir.FunctionType(LT.VOID, [LT.PTR, LT.I64]), "tilec_publish")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    slot, gen = fn.args
    _store_release(b, _word(b, slot, 0), gen)
    b.ret_void()


class Native:
    """The four entry points, as ctypes functions."""

    def __init__(self):
        m = ir.Module("tilec_pool")
        m.triple = llvm.get_process_triple()
        for build in (_spin_run, _take_back, _wait_done, _publish):
            build(m)
        self.engine = Engine(str(m), "tilec_spin_run", "tilec_take_back", "tilec_wait_done", "tilec_publish")
        i64, p = ctypes.c_int64, ctypes.c_void_p
        self.spin_run = ctypes.CFUNCTYPE(i64, p, i64, i64)(self.engine.address)
        take, wait, publish = self.engine.addresses
        self.take_back = ctypes.CFUNCTYPE(i64, p, i64)(take)
        self.wait_done = ctypes.CFUNCTYPE(i64, p, i64, i64)(wait)
        self.publish = ctypes.CFUNCTYPE(None, p, i64)(publish)


_native = []
_lock = threading.Lock()


def native() -> Native:
    with _lock:
        if not _native:
            _native.append(Native())
        return _native[0]
