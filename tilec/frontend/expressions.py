"""Expressions: compile-time Python values fold in Python; anything involving a tensor goes to the Semantic."""
from __future__ import annotations

import ast
import operator
import types

from ..language.core import dtype, scalar_tensor_attribute, tensor
from .scope import is_tensor, normalize
from .scope import allowed_global

# ast operator -> (Semantic method, Python function for compile-time values)
BINOPS = {
    ast.Add: ("add", operator.add), ast.Sub: ("sub", operator.sub), ast.Mult: ("mul", operator.mul),
    ast.Div: ("truediv", operator.truediv), ast.FloorDiv: ("floordiv", operator.floordiv),
    ast.Mod: ("mod", operator.mod), ast.Pow: ("pow", operator.pow), ast.BitAnd: ("and_", operator.and_),
    ast.BitOr: ("or_", operator.or_), ast.BitXor: ("xor_", operator.xor), ast.LShift: ("shl", operator.lshift),
    ast.RShift: ("shr", operator.rshift),
}
CMPOPS = {
    ast.Lt: ("lt", operator.lt), ast.LtE: ("le", operator.le), ast.Gt: ("gt", operator.gt),
    ast.GtE: ("ge", operator.ge), ast.Eq: ("eq", operator.eq), ast.NotEq: ("ne", operator.ne),
    ast.Is: (None, operator.is_), ast.IsNot: (None, operator.is_not), ast.In: (None, lambda a, b: a in b),
    ast.NotIn: (None, lambda a, b: a not in b),
}

# attributes that may be read from objects of these kinds inside kernels
_READABLE = (tensor, dtype, types.ModuleType, tuple, list, int, float, bool, str, slice)


class ExprGen:
    def __init__(self, g):
        self.g = g
        self._dispatch = {
            ast.Constant: self.constant, ast.Name: self.name, ast.Attribute: self.attribute,
            ast.BinOp: self.binop, ast.UnaryOp: self.unaryop, ast.Compare: self.compare, ast.BoolOp: self.boolop,
            ast.IfExp: self.ifexp, ast.Subscript: self.subscript, ast.Tuple: self.tuple, ast.List: self.list,
            ast.Call: self.call, ast.Slice: self.slice, ast.JoinedStr: self.joinedstr,
            ast.FormattedValue: self.formatted,
        }

    def visit(self, node):
        fn = self._dispatch.get(type(node))
        if fn is None:
            raise self.g.src.error(node, f"unsupported syntax in a kernel: {type(node).__name__} expression")
        return self.g.located(node, fn)

    # -- leaves --------------------------------------------------------------------------------------------
    def constant(self, node):
        return node.value

    def name(self, node):
        return self.g.scope.lookup(node.id)

    def attribute(self, node):
        base = self.visit(node.value)
        if not isinstance(base, _READABLE) and not hasattr(base, "__tilec_attr_ok__"):
            raise TypeError(f"cannot read attribute '{node.attr}' of {type(base).__name__} inside a kernel")
        if isinstance(base, types.ModuleType):
            try:
                v = getattr(base, node.attr)
            except AttributeError:
                raise AttributeError(f"module '{base.__name__}' has no attribute '{node.attr}'") from None
            if not allowed_global(v):
                raise TypeError(f"cannot use {base.__name__}.{node.attr} ({type(v).__name__}) inside a kernel")
            return normalize(v)
        if node.attr.startswith("_"):
            raise AttributeError(f"cannot read private attribute '{node.attr}' inside a kernel")
        try:
            if isinstance(base, (bool, int, float)):
                return scalar_tensor_attribute(base, node.attr)
            return getattr(base, node.attr)
        except AttributeError:
            raise AttributeError(f"{type(base).__name__} has no attribute '{node.attr}'") from None

    # -- operators -----------------------------------------------------------------------------------------
    def binop(self, node):
        lhs, rhs = self.visit(node.left), self.visit(node.right)
        return self.apply_binop(type(node.op), lhs, rhs)

    def apply_binop(self, op_type, lhs, rhs):
        entry = BINOPS.get(op_type)
        if entry is None:
            raise NotImplementedError(f"operator {op_type.__name__} is not supported in kernels")
        method, py = entry
        if is_tensor(lhs) or is_tensor(rhs):
            return getattr(self.g.sem, method)(lhs, rhs)
        return py(lhs, rhs)

    def unaryop(self, node):
        v = self.visit(node.operand)
        op = type(node.op)
        if not is_tensor(v):
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
                    ast.Not: operator.not_}[op](v)
        if op is ast.USub:
            return self.g.sem.neg(v)
        if op is ast.UAdd:
            return v
        if op is ast.Invert:
            return self.g.sem.invert(v)
        return self.g.sem.logical_not(v)

    def compare(self, node):
        lhs = self.visit(node.left)
        result = None
        for op, right in zip(node.ops, node.comparators):
            rhs = self.visit(right)
            pred, py = CMPOPS[type(op)]
            if isinstance(op, (ast.Is, ast.IsNot)):
                r = py(lhs, rhs)  # identity is a compile-time fact even for tensors (`ptr is not None`)
            elif is_tensor(lhs) or is_tensor(rhs):
                if pred is None:
                    raise TypeError(f"operator {type(op).__name__} cannot be applied to tensors")
                r = self.g.sem.compare(pred, lhs, rhs)
            else:
                r = py(lhs, rhs)
            result = r if result is None else self._and(result, r)
            if result is False:
                return False
            lhs = rhs
        return result

    def _and(self, a, b):
        if not is_tensor(a):
            return b if a else a
        if not is_tensor(b):
            return a if b else b
        return self.g.sem.logical_and(a, b)

    def boolop(self, node):
        is_and = isinstance(node.op, ast.And)
        acc = self.visit(node.values[0])
        for v in node.values[1:]:
            if not is_tensor(acc):
                if bool(acc) != is_and:  # short-circuit at compile time
                    return acc
                acc = self.visit(v)
                continue
            rhs = self.visit(v)
            if not is_tensor(rhs) and bool(rhs) != is_and:
                return rhs
            acc = self.g.sem.logical_and(acc, rhs) if is_and else self.g.sem.logical_or(acc, rhs)
        return acc

    def ifexp(self, node):
        cond = self.visit(node.test)
        if not is_tensor(cond):
            return self.visit(node.body if cond else node.orelse)
        if not cond.shape:
            return self.g.stmt.if_expr(cond, node.body, node.orelse)
        a, b = self.visit(node.body), self.visit(node.orelse)
        return self.g.sem.where(cond, a, b)

    # -- containers ----------------------------------------------------------------------------------------
    def subscript(self, node):
        base = self.visit(node.value)
        idx = self.visit(node.slice)
        if is_tensor(base):
            return self.g.sem.getitem(base, idx)
        if is_tensor(idx):
            raise TypeError("cannot index a compile-time tuple with a runtime tensor")
        return base[idx]

    def slice(self, node):
        parts = [None if p is None else self.visit(p) for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def tuple(self, node):
        return tuple(self.visit(e) for e in node.elts)

    def list(self, node):
        return [self.visit(e) for e in node.elts]

    def joinedstr(self, node):
        return "".join(str(self.visit(v)) for v in node.values)

    def formatted(self, node):
        v = self.visit(node.value)
        if is_tensor(v):
            raise TypeError("f-strings can only format compile-time values")
        spec = self.visit(node.format_spec) if node.format_spec is not None else ""
        return format(v, spec)

    def call(self, node):
        return self.g.calls.call(node)
