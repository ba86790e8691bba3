"""Calls inside kernels: tl builtins, methods of tensors and dtypes, whitelisted Python builtins, and other
@jit functions (each specialisation becomes a ``func`` in the module, reached by ``call``)."""
from __future__ import annotations

import ast

from .. import language as tl
from ..errors import CompilationError
from ..language.core import constexpr, dtype, tensor
from .function import is_kernel_function
from .scope import is_tensor, normalize
from .values import Packed, flatten, unflatten

# classes that may be instantiated in kernels
_CONSTRUCTIBLE = (tl.static_range, tl.range, tl.constexpr, tl.pointer_type, tl.block_type, tl.dtype)
_PY_CALLABLE = (len, float, int, bool, isinstance, tuple, list, getattr)


class CallGen:
    def __init__(self, g):
        self.g = g

    def call(self, node: ast.Call):
        fn = self.g.expr.visit(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.g.expr.visit(a.value)
                if is_tensor(v):
                    raise TypeError("cannot unpack a tensor with *")
                args.extend(v)
            else:
                args.append(self.g.expr.visit(a))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                kwargs.update(self.g.expr.visit(k.value))
            else:
                kwargs[k.arg] = self.g.expr.visit(k.value)
        if is_kernel_function(fn):
            return self.call_jit(fn, args, kwargs, node)
        if is_tensor(fn):  # before the membership test below, which would compare the tensor elementwise
            raise TypeError(f"cannot call a tensor ({fn.type}): only tl functions, tensor methods and @tilec.jit "
                            "functions can be called")
        if tl.is_builtin(fn) or any(fn is c for c in _PY_CALLABLE) or self._is_value_method(fn) or (
                isinstance(fn, type) and issubclass(fn, _CONSTRUCTIBLE)):
            return normalize(fn(*args, **kwargs))
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        raise TypeError(f"cannot call {name} inside a kernel: only tl functions, tensor methods and "
                        "@tilec.jit functions can be called")

    @staticmethod
    def _is_value_method(fn) -> bool:
        owner = getattr(fn, "__self__", None)
        return isinstance(owner, (tensor, dtype, constexpr, str, tuple, list))

    # -- @jit callees ----------------------------------------------------------------------------------------
    def call_jit(self, fn, args, kwargs, node):
        try:
            bound = fn.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"call to {fn.__name__}: {e}") from None
        bound.apply_defaults()
        values = []      # runtime arguments (tensors) in parameter order
        constexprs = {}
        for p in fn.params:
            v = normalize(bound.arguments[p.name])
            # a callee's parameters are what its arguments are, as in Triton: a tensor is a runtime argument even
            # where the parameter says tl.constexpr (the attention tutorial passes offs_m = start + arange so)
            if p.is_constexpr and not is_tensor(v):
                constexprs[p.name] = v
            elif is_tensor(v):
                values.append((p.name, v))
            else:
                leaves, structure = flatten(v)
                if not any(is_tensor(x) for x in leaves):
                    # compile-time values (Python numbers, dtypes, None, functions, tuples of those) specialise
                    # the callee like constexprs, so Python scalars stay weakly typed inside it
                    constexprs[p.name] = v
                    continue
                # tuples/aggregates holding tensors: the tensors become parameters, the rest specialises
                spec = []
                for k, x in enumerate(leaves):
                    if is_tensor(x):
                        hole = f"{p.name}.{k}"
                        values.append((hole, x))
                        spec.append(("arg", hole))
                    else:
                        spec.append(("static", x))
                constexprs[p.name] = Packed(structure, tuple(spec))
        try:
            callee = self.g.module.callee(fn, [(n, v.type) for n, v in values], constexprs, node)
        except CompilationError as e:
            if node is None or "called from" in e.message:
                raise
            line, col = self.g.src.position(node)
            raise CompilationError(f"{e.message} (in {fn.__name__}, called from {self.g.src.file}:{line}:{col})",
                                   e.file, e.line, e.col, e.source_line) from e
        return unflatten(callee.ret_structure, self.g.ir_call(callee, [v for _, v in values]))
