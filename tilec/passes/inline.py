"""Inline every ``call`` to a function of the module, then drop functions nothing calls any more.

Callees are inlined bottom-up (a function's own calls are inlined before it is copied into its callers), so
each body is flattened once however often it is called. A callee's body is one block ending in ``return``
(structured control flow), so inlining is: clone the block with parameters mapped to the call's arguments,
and replace the call's results by the cloned ``return``'s operands. Functions marked ``noinline`` keep their
calls. Recursion cannot be inlined and is reported with the cycle.

Symbol DCE: when the module has kernels, only kernels (and whatever they still call) survive; a module without
kernels (a library of plain functions, as in tests) keeps the functions that nothing called before inlining.
"""
from __future__ import annotations

from ..ir.core import IRError
from ..ir.ops import CallOp, FuncOp, ModuleOp
from .base import Pass
from ..ir import ops as O


def _calls(op):
    return [o for o in op.walk() if isinstance(o, CallOp)]


def _callee(module: ModuleOp, call: CallOp) -> FuncOp:
    name = call.attrs["callee"]
    f = module.lookup(name)
    if f is None:
        raise IRError(f"call to unknown function '@{name}'")
    return f


def _bottom_up(module: ModuleOp) -> list[FuncOp]:
    """Functions ordered callees-first; raises on recursion, naming the cycle."""
    order, state = [], {}

    def visit(f: FuncOp, stack: list[str]):
        s = state.get(f.sym_name)
        if s == "done":
            return
        if s == "active":
            cycle = stack[stack.index(f.sym_name):] + [f.sym_name]
            raise IRError("recursive calls cannot be inlined: " + " -> ".join(f"@{n}" for n in cycle))
        state[f.sym_name] = "active"
        for c in _calls(f):
            visit(_callee(module, c), stack + [f.sym_name])
        state[f.sym_name] = "done"
        order.append(f)

    for f in module.funcs:
        visit(f, [])
    return order


def inline_call(call: CallOp, callee: FuncOp):
    """Replace ``call`` by a copy of ``callee``'s body."""
    if len(call.operands) != len(callee.args):
        raise IRError(f"call to '@{callee.sym_name}' passes {len(call.operands)} arguments, "
                      f"it takes {len(callee.args)}")
    mapping = dict(zip(callee.args, call.operands))
    ret = None
    for op in callee.body.ops:
        if isinstance(op, O.ReturnOp):
            ret = op
            break
        new = op.clone(mapping)
        if new.loc is None:
            new.loc = call.loc
        new.parent = None
        call.parent.insert(call.parent.ops.index(call), new)
    values = [mapping.get(v, v) for v in ret.operands] if ret is not None else []
    if len(values) != len(call.results):
        raise IRError(f"'@{callee.sym_name}' returns {len(values)} values, the call expects {len(call.results)}")
    call.replace_with(values)


class Inline(Pass):
    name = "inline"
    force = False  # also inline ``noinline`` functions (for backends that lower no calls)
    keep = None  # with ``force``: callee -> True for the ``noinline`` functions the backend calls for real

    def run(self, module: ModuleOp):
        funcs = module.funcs
        called = {c.attrs["callee"] for f in funcs for c in _calls(f)}
        kernels = [f for f in funcs if f.attrs.get("kernel")]
        roots = kernels or [f for f in funcs if f.sym_name not in called]
        changed = False
        for f in _bottom_up(module):
            for call in _calls(f):
                callee = _callee(module, call)
                if callee.attrs.get("noinline") and (not self.force or (self.keep is not None and self.keep(callee))):
                    continue
                inline_call(call, callee)
                changed = True
        changed |= symbol_dce(module, roots)
        return changed


class InlineAll(Inline):
    """``noinline`` is a code-size hint for targets with real calls; a backend without them runs this first. A
    backend with them passes ``keep``: the ``noinline`` functions it can call keep their calls."""
    name = "inline-all"
    summary = "Inline every call, noinline functions included unless the backend calls them (``keep``)."
    force = True

    def __init__(self, keep=None):
        self.keep = keep


def symbol_dce(module: ModuleOp, roots) -> bool:
    """Erase functions not reachable through calls from ``roots``."""
    live, work = set(), list(roots)
    while work:
        f = work.pop()
        if f.sym_name in live:
            continue
        live.add(f.sym_name)
        work.extend(_callee(module, c) for c in _calls(f))
    dead = [f for f in module.funcs if f.sym_name not in live]
    for f in dead:
        f.erase()
    return bool(dead)
