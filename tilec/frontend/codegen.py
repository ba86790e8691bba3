"""AST -> tir. ``generate(ast_source, options)`` is the frontend's entry point (called by ``ASTSource.make_ir``).

The work is split by concern: ``scope.py`` (names), ``expressions.py``, ``statements.py`` (including structured
control flow), ``calls.py`` (builtins and @jit callees); this file holds the per-function state they share and
the per-module state (callee specialisations).
"""
from __future__ import annotations

import re

from ..errors import CompilationError
from ..ir import ops as irops
from ..ir.builder import Builder
from ..ir.ops import FuncOp, ModuleOp
from ..ir.types import FunctionType
from ..language.core import constexpr, dtype, tensor, type_from_signature, use_semantic
from ..language.semantic import Semantic
from .calls import CallGen
from .expressions import ExprGen
from .hints import place_hints
from .function import PLAIN_PARAMETERS_ONLY, KernelFunction, hashable as _hashable, is_kernel_function
from .scope import Scope, is_tensor, normalize
from .statements import StmtGen
from .source import kernel_name
from .tir_builder import TirBuilder
from .values import Packed, flatten

_USER_ERRORS = (TypeError, ValueError, NameError, AssertionError, IndexError, NotImplementedError, AttributeError,
                RuntimeError, ZeroDivisionError, OverflowError)


class CalleeInfo:
    """A generated callee: its symbol, result types, and the structure its results rebuild into."""
    __slots__ = ("sym_name", "ret_structure", "ret_types")

    def __init__(self, sym_name):
        self.sym_name, self.ret_structure, self.ret_types = sym_name, None, []


class ModuleGen:
    """One module: the kernel plus one ``func`` per (callee, argument types, constexprs) specialisation."""

    def __init__(self, options):
        self.options = dict(options or {})
        self.module = ModuleOp.create()
        self.callees: dict = {}
        self.in_progress: set = set()
        self.used_names: set = set()

    def unique_name(self, base: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", base)
        name, k = base, 0
        while name in self.used_names:
            k += 1
            name = f"{base}_{k}"
        self.used_names.add(name)
        return name

    def callee(self, fn, arg_types, constexprs, node) -> CalleeInfo:
        key = (fn, tuple(t for _, t in arg_types), tuple((k, _hashable(v)) for k, v in constexprs.items()))
        info = self.callees.get(key)
        if info is not None:
            return info
        if key in self.in_progress:
            raise RecursionError(f"recursive call to {fn.__name__} is not supported")
        self.in_progress.add(key)
        try:
            info = CalleeInfo(self.unique_name(fn.__name__))
            runtime = [(n, t, 1, False) for n, t in arg_types]
            FunctionGen(self, fn, runtime, constexprs, kernel=False, sym_name=info.sym_name, info=info).generate()
            self.callees[key] = info
        finally:
            self.in_progress.discard(key)
        return info


class FunctionGen:
    """State shared by the expression, statement and call generators while generating one function."""

    def __init__(self, mgen: ModuleGen, fn, runtime, constexprs, kernel: bool, sym_name: str, info=None):
        self.module = mgen
        self.fn = fn
        self.src = fn.source
        self.runtime = runtime          # [(name, tl type, divisibility, equal_to_1)]
        self.constexprs = constexprs
        self.kernel = kernel
        self.sym_name = sym_name
        self.info = info
        self.depth = 0
        self.returned = False
        self.ret_value = None
        self.expr, self.stmt, self.calls = ExprGen(self), StmtGen(self), CallGen(self)

    # -- error and location plumbing -------------------------------------------------------------------------
    def located(self, node, fn):
        saved = self.ir.loc
        if hasattr(node, "lineno"):
            self.ir.loc = self.src.loc(node)
        try:
            return fn(node)
        except CompilationError:
            raise
        except _USER_ERRORS as e:
            raise self.src.error(node, str(e) or type(e).__name__) from e
        except Exception as e:  # a tilec bug surfaces with where it happened
            raise self.src.error(node, f"internal error ({type(e).__name__}: {e})") from e
        finally:
            self.ir.loc = saved

    # -- generation --------------------------------------------------------------------------------------------
    def generate(self) -> FuncOp:
        tree = self.src.tree
        self.ir = Builder()
        self.ir.loc = self.src.loc(tree)
        self.tb = TirBuilder(self.ir)
        arg_types = [self.tb.to_ir(t) for _, t, _, _ in self.runtime]
        attrs = {"kernel": self.kernel, "noinline": bool(getattr(self.fn, "noinline", False))}
        if self.kernel:
            attrs["arg_divisibility"] = tuple(int(d) for _, _, d, _ in self.runtime)
        func = FuncOp.create(self.sym_name, arg_types, [], [n for n, _, _, _ in self.runtime], loc=self.ir.loc,
                             **attrs)
        self.module.module.body.append(func)
        self.ir.set_insertion_point_to_end(func.body)
        self.sem = Semantic(self.tb, self.module.options)
        self.sem.call_combine = self.call_combine
        self.scope = Scope(self.fn.fn, {k: normalize(v) for k, v in self.constexprs.items()})
        for (name, t, _, eq1), arg in zip(self.runtime, func.args):
            self.scope[name] = 1 if eq1 else tensor(arg, t)
        for name, v in self.constexprs.items():
            if isinstance(v, Packed):
                self.scope[name] = v.rebuild(self.scope.vars)
        with use_semantic(self.sem):
            self._check_args(tree)
            self.stmt.mark_const_parameters(tree)
            self.stmt.block(tree.body)
            self._finish(func, tree)
        place_hints(func)
        return func

    def _check_args(self, tree):
        a = tree.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise self.src.error(tree, PLAIN_PARAMETERS_ONLY)

    def _finish(self, func: FuncOp, tree):
        ret = self.ret_value
        if self.kernel:
            if ret is not None:
                raise self.src.error(tree, "a kernel cannot return a value")
            self.ir.create(irops.ReturnOp, [], [])
            return
        info = self.info
        leaves, info.ret_structure = flatten(ret)
        with self.ir.at_loc(self.src.loc(tree.body[-1])):
            ts = [v if is_tensor(v) else self.sem.to_tensor(v) for v in leaves]
            self.ir.create(irops.ReturnOp, [t.handle for t in ts], [])
        info.ret_types = [t.type for t in ts]
        func.attrs["function_type"] = FunctionType(func.function_type.inputs, [t.handle.type for t in ts])

    def ir_call(self, info: CalleeInfo, args):
        op = self.ir.create(irops.CallOp, [a.handle for a in args], [self.tb.to_ir(t) for t in info.ret_types],
                            {"callee": info.sym_name})
        return [tensor(r, t) for r, t in zip(op.results, info.ret_types)]

    def call_combine(self, fn, scalars):
        if is_kernel_function(fn):
            out = self.calls.call_jit(fn, list(scalars), {}, None)
        else:
            out = fn(*scalars)
        return list(out) if isinstance(out, tuple) else [out]


# ---------------------------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------------------------
def parse_signature(fn, signature, constexprs, attrs):
    """Runtime parameters [(name, tl type, divisibility, equal_to_1)] and constexpr values of a specialisation.

    ``signature`` is ``"*fp32,*fp32,i32:16"`` (runtime parameters in order; ``:16`` divisible by 16, ``:1``
    equal to 1) or a dict name -> type string / dtype / ``"constexpr"``.
    """
    constexprs = {k: (v.value if isinstance(v, constexpr) else v) for k, v in dict(constexprs or {}).items()}
    attrs = dict(attrs or {})
    params = fn.params
    name_of = {i: p.name for i, p in enumerate(params)}
    attrs = {name_of.get(k, k): v for k, v in attrs.items()}
    runtime_params = [p for p in params if not p.is_constexpr and p.name not in constexprs]
    if isinstance(signature, str):
        entries = [s for s in (x.strip() for x in signature.split(",")) if s]
        entries = [e for e in entries if e != "constexpr"]
        if len(entries) != len(runtime_params):
            raise CompilationError(
                f"{fn.__name__}: signature {signature!r} has {len(entries)} entries but the kernel has "
                f"{len(runtime_params)} runtime parameters ({', '.join(p.name for p in runtime_params)})")
        typed = dict(zip((p.name for p in runtime_params), entries))
    elif isinstance(signature, dict):
        typed = {}
        for k, v in signature.items():
            k = name_of.get(k, k)
            if v == "constexpr":
                if k not in constexprs:
                    raise CompilationError(f"{fn.__name__}: constexpr parameter '{k}' has no value")
            else:
                typed[k] = v
    else:
        raise CompilationError(f"{fn.__name__}: signature must be a string or a dict, got {signature!r}")
    runtime = []
    for p in params:
        if p.name in constexprs:
            packed = constexprs[p.name]
            if isinstance(packed, Packed):  # a tuple or descriptor argument: its leaves are runtime parameters
                for kind, hole in packed.spec:
                    if kind == "arg":
                        if hole not in typed:
                            raise CompilationError(f"{fn.__name__}: no type given for parameter '{hole}'")
                        runtime.append(_runtime_param(fn, hole, typed[hole], attrs))
            continue
        if p.is_constexpr or (p.name not in typed and p.has_default):
            if p.has_default:
                constexprs[p.name] = p.default.value if isinstance(p.default, constexpr) else p.default
                continue
            raise CompilationError(f"{fn.__name__}: constexpr parameter '{p.name}' has no value")
        if p.name not in typed:
            raise CompilationError(f"{fn.__name__}: no type given for parameter '{p.name}'")
        runtime.append(_runtime_param(fn, p.name, typed[p.name], attrs))
    return runtime, constexprs


def _runtime_param(fn, name, t, attrs):
    """(name, tl type, divisibility, equal_to_1) of a runtime parameter typed ``t`` in a signature."""
    div, eq1 = 1, False
    if isinstance(t, str):
        t, _, suffix = t.partition(":")
        if suffix:
            if suffix == "16":
                div = 16
            elif suffix == "1":
                eq1 = True
            else:
                raise CompilationError(f"{fn.__name__}: unknown specialisation ':{suffix}' for '{name}'")
        try:
            t = type_from_signature(t)
        except ValueError as e:
            raise CompilationError(f"{fn.__name__}: parameter '{name}': {e}") from None
    elif not isinstance(t, dtype):
        raise CompilationError(f"{fn.__name__}: bad type {t!r} for parameter '{name}'")
    a = attrs.get(name) or {}
    div = int(a.get("divisibility", div))
    eq1 = bool(a.get("equal_to_1", eq1))
    return (name, t, div, eq1)


def generate(src, options=None) -> ModuleOp:
    """The tir module for ``src`` (an ASTSource): the kernel ``func`` first, then its callees."""
    fn = src.fn
    if not is_kernel_function(fn):
        fn = KernelFunction(fn)
    runtime, constexprs = parse_signature(fn, src.signature, src.constexprs, src.attrs)
    mgen = ModuleGen(options)
    name = mgen.unique_name(kernel_name(fn, runtime, constexprs))
    FunctionGen(mgen, fn, runtime, constexprs, kernel=True, sym_name=name).generate()
    return mgen.module
