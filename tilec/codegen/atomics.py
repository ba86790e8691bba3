"""LLVM atomics with what llvmlite's builder cannot say: a synchronisation scope (``syncscope("agent")``),
metadata on the instruction, bf16 operands (LLVM's ``bfloat``), and a compare-and-swap loop for an update
LLVM cannot expand without libcalls.

Triton's ``sem`` names map onto LLVM orderings here once for every backend; each target names its scopes."""
from __future__ import annotations

import llvmlite.ir as ir

from .blocks import enter_loop
from .llvm_types import BF16 as BFLOAT  # noqa: F401  (the memory form of bf16 atomics, for the GPU lowerings)


#: Triton's memory semantics -> LLVM orderings (success; a compare-and-swap's failure ordering below)
ORDERING = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel",
            "seq_cst": "seq_cst"}
FAIL_ORDERING = {"monotonic": "monotonic", "acquire": "acquire", "release": "monotonic", "acq_rel": "acquire",
                 "seq_cst": "seq_cst"}


def _ordering(order: str, syncscope: str) -> str:
    # llvmlite prints the ordering verbatim after the operands, where LLVM also takes the scope
    return f'syncscope("{syncscope}") {order}' if syncscope else order


def _tag(b, instr, metadata):
    for name in metadata:
        instr.set_metadata(name, b.module.add_metadata([]))
    return instr


def rmw(b: ir.IRBuilder, op: str, ptr, value, sem: str, syncscope: str = "", metadata=()):
    """``atomicrmw op ptr, value`` (LLVM operation names: add, fadd, max, umax, and, xchg, ...) with Triton's
    ``sem`` in LLVM scope ``syncscope`` ("" = system), each name in ``metadata`` attached as an empty node
    (``!amdgpu.no.fine.grained.memory !{}``); the old value."""
    return _tag(b, b.atomic_rmw(op, ptr, value, _ordering(ORDERING[sem], syncscope)), metadata)


def cas(b: ir.IRBuilder, ptr, cmp, value, sem: str, syncscope: str = "", metadata=()):
    """``cmpxchg`` of integer ``cmp``/``value`` (floats go as their bits: cmpxchg takes integers and pointers);
    the old value."""
    order = ORDERING[sem]
    instr = b.cmpxchg(ptr, cmp, value, _ordering(order, syncscope), FAIL_ORDERING[order])
    return b.extract_value(_tag(b, instr, metadata), 0)


def cas_loop(b: ir.IRBuilder, ptr, update, bits_type, sem: str, syncscope: str = ""):
    """Atomically replace the ``bits_type`` integer at ``ptr`` by ``update(b, old_bits)`` with a compare-and-swap
    loop (what LLVM's own expansion does, with the new value computed by the caller: bf16 arithmetic on hosts
    whose LLVM would call ``__truncsfbf2``); the old bits."""
    first = b.load_atomic(ptr, "monotonic", bits_type.width // 8, typ=bits_type)
    start, (loop, done) = enter_loop(b, "cas.loop", "cas.done")
    old = b.phi(bits_type)
    old.add_incoming(first, start)
    order = ORDERING[sem]
    pair = b.cmpxchg(ptr, old, update(b, old), _ordering(order, syncscope), FAIL_ORDERING[order])
    seen = b.extract_value(pair, 0)
    old.add_incoming(seen, b.block)
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    return seen
