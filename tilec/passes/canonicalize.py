"""Canonicalisation: constant folding plus a table of algebraic and structural simplifications, applied to a
fixed point by the shared greedy driver (``rewrite.apply_patterns_greedily``).

Folding goes through one door: an op's own ``fold()`` hook first, then the reference evaluator's numpy
semantics (``tilec.ir.evaluator.fold``), so compile-time results are bit-identical to what the evaluator (the
semantic reference) computes. A folded tile becomes a ``constant`` only when all its elements are equal (the
IR has no dense constants). Shape ops (splat/broadcast/expand_dims/reshape/trans) never fold through numpy: a
uniform source stays a constant or a splat, so no tile-sized arrays are built at compile time.

Algebraic identities are the ops' own knowledge (``BinaryOp.identities``, ``idempotent``, ``self_zero``, declared
with each op in ``tilec.ir.ops.arithmetic``); float identities are only those exact for every input, signed zeros
and NaN included (``tilec.ir.ops.identities``).
"""
from __future__ import annotations

import numpy as np

from ..ir.core import IRError, Operation, Value
from ..ir.ops import BroadcastOp, SplatOp
from ..ir.types import ScalarType, Type
from .base import Pass
from .rewrite import FunctionPattern, apply_patterns_greedily, pattern
from .utils import constant_value, defined_outside, is_empty_region_op, remove_results
from ..ir import ops as O
from ..ir.core import OP_REGISTRY
from ..ir.ops.identities import int_zero
from ..ir.evaluator import fold

SHAPE_OP_CLASSES = (O.SplatOp, O.BroadcastOp, O.ExpandDimsOp, O.ReshapeOp, O.TransOp)


# -- constants ------------------------------------------------------------------------------------------------
def py_value(x, t: Type):
    """A Python int/float/bool for a numpy scalar of element type ``t``."""
    e = t.element
    if e.kind == "bool":
        return bool(x)
    if e.kind == "float":
        return float(x)
    return int(x)


def uniform_value(a, t: Type):
    """The single value of ``a`` if every element is bit-identical, else None."""
    a = np.asarray(a)
    if a.size == 0:
        return None
    flat = a.reshape(-1)
    if a.dtype.kind == "f":
        bits = flat.view(np.dtype(f"u{a.dtype.itemsize}"))
        if not (bits == bits[0]).all():
            return None
    elif not (flat == flat[0]).all():
        return None
    return py_value(flat[0], t)


def _is(v: Value, pred) -> bool:
    c = constant_value(v)
    return c is not None and pred(c, v.type.element)


# -- folding --------------------------------------------------------------------------------------------------
def _evaluator_fold():
    return fold


def materialize(rw, op: Operation, values) -> bool:
    """Replace ``op``'s results by ``values``: IR values, or numpy/Python constants (uniform ones only)."""
    out = []
    for r, v in zip(op.results, values):
        if isinstance(v, Value):
            out.append(v)
            continue
        if r.type.is_ptr:
            return False
        u = uniform_value(v, r.type) if isinstance(v, np.ndarray) and v.ndim else (
            py_value(v, r.type) if v is not None else None)
        if u is None:
            return False
        out.append(u)
    rw.replace_op(op, [v if isinstance(v, Value) else rw.constant(v, r.type) for v, r in zip(out, op.results)])
    return True


@pattern(benefit=10)
def fold_constants(op, rw):
    if isinstance(op, O.ConstantOp) or op.regions or not op.is_pure or not op.results or isinstance(op, SHAPE_OP_CLASSES):
        return False
    hooked = op.fold()
    if hooked is not None:
        return materialize(rw, op, hooked)
    consts = [constant_value(v) for v in op.operands]
    if any(c is None for c in consts):
        return False
    fold = _evaluator_fold()
    if fold is None:
        return False
    try:
        with np.errstate(all="ignore"):
            res = fold(op, consts)
    except (ArithmeticError, ValueError, IRError, NotImplementedError):
        return False
    return res is not None and materialize(rw, op, res)


# -- algebraic identities -------------------------------------------------------------------------------------
_WITH_IDENTITIES = [c for c in O.BINARY_OPS.values() if c.identities]
_SAME_OPERAND_RULES = [c for c in O.BINARY_OPS.values() if c.idempotent or c.self_zero]


@pattern(*_WITH_IDENTITIES)
def algebraic_identity(op, rw):
    """``x op c`` (or ``c op x`` when commutative) that one of the op's ``identities`` makes ``x`` or ``c``."""
    lhs, rhs = op.operands
    sides = [(lhs, rhs)] + ([(rhs, lhs)] if op.is_commutative else [])
    for x, c in sides:
        for pred, result in op.identities:
            if _is(c, pred):
                rw.replace_op(op, [x if result == "lhs" else c])
                return True
    return False


@pattern(*_SAME_OPERAND_RULES)
def same_operands(op, rw):
    """``x op x``: ``x`` for idempotent ops, 0 for integer ``self_zero`` ones."""
    lhs, rhs = op.operands
    if lhs is not rhs:
        return False
    if op.idempotent:
        rw.replace_op(op, [lhs])
        return True
    if lhs.type.is_int:
        rw.replace_op(op, [rw.constant(0, op.result.type)])
        return True
    return False


@pattern()
def constant_to_the_right(op, rw):
    if not op.is_commutative or len(op.operands) != 2:
        return False
    lhs, rhs = op.operands
    if constant_value(lhs) is None or constant_value(rhs) is not None:
        return False
    op.set_operands([rhs, lhs])
    rw.modified(op)
    return True


_CMP_SELF = {"eq": True, "le": True, "ge": True, "ne": False, "lt": False, "gt": False}


@pattern(O.CmpOp)
def compare_same_int(op, rw):
    if op.lhs is not op.rhs or not op.lhs.type.is_int:
        return False
    rw.replace_op(op, [rw.constant(_CMP_SELF[op.attrs["predicate"]], op.result.type)])
    return True


@pattern(O.SelectOp)
def select_known(op, rw):
    if op.true_value is op.false_value:
        rw.replace_op(op, [op.true_value])
        return True
    c = constant_value(op.cond)
    if c is None:
        return False
    rw.replace_op(op, [op.true_value if c else op.false_value])
    return True


# -- casts ----------------------------------------------------------------------------------------------------
_PLAIN_FLOATS = ("f16", "bf16", "f32", "f64")


def lossless(src: Type, dst: Type) -> bool:
    """Every value of element type ``src`` is exactly representable in ``dst``."""
    s, d = src.element, dst.element
    if not (isinstance(s, ScalarType) and isinstance(d, ScalarType)) or "bool" in (s.kind, d.kind):
        return False
    if s.kind in ("int", "uint") and d.kind in ("int", "uint"):
        if s.kind == d.kind:
            return d.bits >= s.bits
        return s.kind == "uint" and d.bits > s.bits
    if s.kind in ("int", "uint") and d.kind == "float":
        return s.bits <= d.mantissa_bits + 1
    if s.kind == "float" and d.kind == "float":
        return (s.name in _PLAIN_FLOATS and d.name in _PLAIN_FLOATS and d.exponent_bits >= s.exponent_bits
                and d.mantissa_bits >= s.mantissa_bits)
    return False


@pattern(O.CastOp)
def cast_chain(op, rw):
    src = op.src
    if src.type == op.result.type:
        rw.replace_op(op, [src])
        return True
    inner = getattr(src, "op", None)
    if inner is None or not isinstance(inner, O.CastOp) or not lossless(inner.src.type, src.type):
        return False
    x = inner.src
    if x.type == op.result.type:
        rw.replace_op(op, [x])
    else:
        rw.replace_op(op, [rw.op_value(type(op), x, result_type=op.result.type, **op.attrs)])
    return True


# -- shape ops ------------------------------------------------------------------------------------------------
@pattern(*SHAPE_OP_CLASSES)
def shape_of_uniform(op, rw):
    """Shape ops of a constant give a constant; of a splat, a splat; broadcasting to the same type is the
    identity and broadcasts of broadcasts merge."""
    src, t = op.operands[0], op.result.type
    if src.type == t and isinstance(op, (O.BroadcastOp, O.ReshapeOp)):
        rw.replace_op(op, [src])
        return True
    c = constant_value(src)
    if c is not None:
        rw.replace_op(op, [rw.constant(c, t)])
        return True
    inner = getattr(src, "op", None)
    if isinstance(op, O.SplatOp) or inner is None:
        return False
    if isinstance(inner, O.SplatOp):
        rw.replace_op(op, [rw.op_value(SplatOp, inner.src, result_type=t)])
        return True
    if isinstance(op, O.BroadcastOp) and isinstance(inner, O.BroadcastOp):
        rw.replace_op(op, [rw.op_value(BroadcastOp, inner.src, result_type=t)])
        return True
    return False


@pattern(O.GatherOp)
def gather_of_splat(op, rw):
    """Every index reads the same value from a splat: the result is that scalar splatted to the index's shape."""
    inner = getattr(op.src, "op", None)
    if not isinstance(inner, O.SplatOp):
        return False
    rw.replace_op(op, [rw.op_value(SplatOp, inner.src, result_type=op.result.type)])
    return True


@pattern(O.AddPtrOp)
def addptr_zero(op, rw):
    if _is(op.offset, int_zero):
        rw.replace_op(op, [op.ptr])
        return True
    return False


# -- control flow ---------------------------------------------------------------------------------------------
@pattern(O.IfOp)
def if_known(op, rw):
    c = constant_value(op.cond)
    if c is None:
        if is_empty_region_op(op):
            rw.erase_op(op)
            return True
        return False
    region = op.regions[0 if c else 1]
    if not region.blocks or not region.block.ops:
        rw.erase_op(op)
        return True
    values = rw.inline_block_before(region.block, op)
    rw.replace_op(op, values)
    return True


@pattern(O.IfOp)
def if_same_yields(op, rw):
    """A result both branches yield as the same outer value is that value."""
    if len(op.results) == 0 or any(not r.blocks or r.block.terminator is None for r in op.regions):
        return False
    then_y, else_y = op.regions[0].block.terminator, op.regions[1].block.terminator
    drop = []
    for i, (a, b) in enumerate(zip(then_y.operands, else_y.operands)):
        if a is b and defined_outside(a, op):
            rw.replace_all_uses_with(op.results[i], a)
            drop.append(i)
    return _drop_results(op, rw, drop)


def _drop_results(op, rw, drop) -> bool:
    """Remove results ``drop`` (whose uses the caller has redirected) of a region op; whether any were."""
    if not drop:
        return False
    remove_results(op, drop)
    rw.modified(op)
    return True


def _int_constant(v: Value):
    """An integer constant's value read in its type (wrapped to the width, signed or unsigned)."""
    c = constant_value(v)
    if c is None:
        return None
    e = v.type.element
    c = int(c) & ((1 << e.bits) - 1)
    return c - (1 << e.bits) if e.kind == "int" and c >= 1 << (e.bits - 1) else c


def _trip_count(op):
    lb, ub, step = (_int_constant(v) for v in op.operands[:3])
    if op.lb is op.ub:
        return 0
    if lb is None or ub is None or step is None or step == 0:
        return None
    return len(range(lb, ub, step))


@pattern(O.ForOp)
def for_trip_count(op, rw):
    n = _trip_count(op)
    if n == 0:
        rw.replace_op(op, list(op.inits))
        return True
    if n == 1:
        values = rw.inline_block_before(op.body, op, [op.lb, *op.inits])
        rw.replace_op(op, values)
        return True
    if is_empty_region_op(op):
        rw.erase_op(op)
        return True
    return False


@pattern(O.ForOp)
def for_invariant_iter_args(op, rw):
    """A loop-carried value that the body yields unchanged (or that is always the same outer value) is its
    init everywhere."""
    y = op.body.terminator
    drop = []
    for i, (init, arg, nxt, res) in enumerate(zip(op.inits, op.iter_args, y.operands, op.results)):
        if nxt is arg or nxt is init:
            rw.replace_all_uses_with(arg, init)
            rw.replace_all_uses_with(res, init)
            drop.append(i)
    return _drop_results(op, rw, drop)


def attach(*patterns):
    """Give each rooted pattern to the op classes it matches (``Op.canonicalization_patterns``): what
    canonicalising an op means is then the op's own knowledge, and other code can add patterns to an op."""
    for p in patterns:
        for r in p.roots or ():
            cls = OP_REGISTRY[r] if isinstance(r, str) else r
            cls.canonicalization_patterns = cls.__dict__.get("canonicalization_patterns", ()) + (p,)


# patterns that apply to any op (folding through ``Operation.fold`` and constant evaluation, operand order)
GENERIC_PATTERNS = [fold_constants, constant_to_the_right]
attach(algebraic_identity, same_operands, compare_same_int, select_known, cast_chain, shape_of_uniform,
       gather_of_splat, addptr_zero, if_known, if_same_yields, for_trip_count, for_invariant_iter_args)


def collect_patterns():
    """The generic patterns and every op class's canonicalization patterns (each once, in a stable order)."""
    own = [p for c in OP_REGISTRY.values() for p in c.__dict__.get("canonicalization_patterns", ())]
    return list(dict.fromkeys(GENERIC_PATTERNS + own))


class Canonicalize(Pass):
    name = "canonicalize"

    def __init__(self, extra_patterns=()):
        self.patterns = collect_patterns() + list(extra_patterns)

    def run(self, module):
        return apply_patterns_greedily(module, self.patterns)


__all__ = ["Canonicalize", "GENERIC_PATTERNS", "attach", "collect_patterns", "FunctionPattern", "materialize", "lossless"]
