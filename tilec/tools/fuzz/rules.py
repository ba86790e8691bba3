"""The type of every fuzz op, and the conditions under which its result is defined on every backend.

Each rule takes the op's argument nodes, their types, its attributes and the kernel, and returns the result
type or raises :class:`Invalid`. Beyond Triton's typing, the rules keep results well defined:

- integer ``//`` and ``%`` divide by a ``posdiv`` (``(b & 7) + 1``) or a positive literal, never by 0 or -1;
- shift amounts are literals below the width or ``shamt`` (``b & m``) with ``m`` below it;
- float-to-int casts are clamped into range first (the ``cast`` renderer does it);
- ``err`` tracks values whose last bits may differ between correct backends (transcendentals, float reductions
  and dots sum in any order); such values may not reach comparisons, integer casts, ``floor``, ``%``, bitcasts or
  ``where`` conditions, where a last-bit difference would become a large one.
"""
from __future__ import annotations

from dataclasses import replace

from .dtypes import (EPS, FP8, INTS, Invalid, STORABLE, bits, computation_type, is_float, is_int, is_signed,
                     literal_fits, literal_type, minmax_reduce_type, sum_type)
from .program import C, F, Lit, Op, R, S, Ty

MAX_ERR = 0.5
TRANSCENDENTAL = ("exp", "exp2", "log", "log2", "sin", "cos", "sigmoid", "erf", "rsqrt")
ARITH = ("add", "sub", "mul")
CMP = ("lt", "le", "gt", "ge", "eq", "ne")
BITWISE = ("and", "or", "xor")
REDUCE = ("sum", "max", "min")
DOT_TYPES = ("float16", "bfloat16", "float32", "int8", "float64") + FP8
ATOMIC_ADD_TYPES = ("float32", "float64", "int32", "int64", "uint32", "uint64")


def need(cond, msg):
    if not cond:
        raise Invalid(msg)


def join_shapes(*shapes) -> str:
    s = set(shapes) - {S}
    if not s:
        return S
    if F in s or s == {R, C}:
        return F
    return s.pop()


def widen(err: float, dtype: str) -> float:
    """An inexact value rounded to ``dtype`` may land one ulp of ``dtype`` apart on two backends."""
    if err <= 0:
        return 0.0
    return min(MAX_ERR, max(err, 2 * EPS.get(dtype, 0.0)))


def _not_bool(*tys):
    for t in tys:
        need(t.dtype != "int1", "arithmetic on bool")


def _exact(*tys):
    for t in tys:
        need(t.err == 0, "an inexact value reaches a discontinuous op")


def _binary(a: Ty, b: Ty, div=False) -> str:
    ct = computation_type(a.dtype, a.weak, b.dtype, b.weak, div)
    return ct


def _lits_fit(nodes, ct):
    for n in nodes:
        if isinstance(n, Lit):
            need(not (isinstance(n.value, int) and not isinstance(n.value, bool) and n.value < 0), "negative literal")
            need(literal_fits(n.value, ct), f"literal {n.value} does not fit {ct}")
            need(not (isinstance(n.value, float) and is_int(ct)), "float literal with int type")


def _elementwise(dtype, tys, nodes=()):
    shape = join_shapes(*(t.shape for t in tys))
    err = widen(max(t.err for t in tys), dtype) if is_float(dtype) else 0.0
    need(not (err and not is_float(dtype)), "inexact int")
    return Ty(dtype, shape, err)


def arith(name, nodes, tys, attrs, k):
    a, b = tys
    _not_bool(a, b)
    need(not a.weak, "literal on the left")
    ct = _binary(a, b)
    _lits_fit(nodes, ct)
    t = _elementwise(ct, tys)
    if name in ("add", "sub") and any(x.err > 0 and x.big for x in tys):
        t = replace(t, err=MAX_ERR)  # exp(x) - (exp(x) - 5): the last bits of large inexact terms cancel
    return t


def truediv(name, nodes, tys, attrs, k):
    a, b = tys
    _not_bool(a, b)
    need(not a.weak, "literal on the left")
    ct = _binary(a, b, div=True)
    _lits_fit(nodes, ct)
    t = _elementwise("float32" if is_int(ct) else ct, tys)
    if t.dtype == "float32":  # NVIDIA's f32 `/` is div.full.f32 (as Triton's), within 2 ulp
        t = replace(t, err=min(MAX_ERR, max(t.err, 4 * EPS["float32"])))
    return t


def _positive_divisor(node):
    return (isinstance(node, Op) and node.name == "posdiv") or \
        (isinstance(node, Lit) and isinstance(node.value, int) and not isinstance(node.value, bool) and node.value >= 1)


def floordiv_mod(name, nodes, tys, attrs, k):
    a, b = tys
    _not_bool(a, b)
    need(not a.weak, "literal on the left")
    ct = _binary(a, b, div=True)
    _lits_fit(nodes, ct)
    if is_int(ct):
        need(_positive_divisor(nodes[1]), "integer divisor not known positive")
    else:
        need(name == "mod", "// of floats")
        _exact(a, b)
        need(ct not in FP8 and ct != "bfloat16", "float % of a narrow type")
    return _elementwise(ct, tys)


def posdiv(name, nodes, tys, attrs, k):
    (b,) = tys
    need(is_int(b.dtype) and not b.weak, "posdiv of a non-integer")
    return Ty(b.dtype, b.shape)


def shamt(name, nodes, tys, attrs, k):
    (b,) = tys
    need(is_int(b.dtype) and not b.weak, "shamt of a non-integer")
    need(literal_fits(attrs["m"], b.dtype), "shift mask does not fit")
    return Ty(b.dtype, b.shape)


def bitwise(name, nodes, tys, attrs, k):
    a, b = tys
    need(not a.weak, "literal on the left")
    both_bool = a.dtype == "int1" and (b.dtype == "int1" or (b.weak and isinstance(nodes[1].value, bool)))
    if not both_bool:
        need(is_int(a.dtype) and (is_int(b.dtype) or (b.weak and b.dtype == "int32")), "bitwise of non-integers")
    ct = _binary(a, b)
    _lits_fit(nodes, ct)
    return Ty(ct, join_shapes(a.shape, b.shape))


def shift(name, nodes, tys, attrs, k):
    a, b = tys
    need(is_int(a.dtype) and not a.weak, "shift of a non-integer")
    if b.weak:
        v = nodes[1].value
        need(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < bits(a.dtype), "literal shift out of range")
        return Ty(a.dtype, join_shapes(a.shape, b.shape))
    need(is_int(b.dtype), "shift by a non-integer")
    rt = ("int" if is_signed(a.dtype) else "uint") + str(max(bits(a.dtype), bits(b.dtype)))
    node = nodes[1]
    need(isinstance(node, Op) and node.name == "shamt" and node.attrs["m"] < bits(rt), "shift amount not masked")
    return Ty(rt, join_shapes(a.shape, b.shape))


def compare(name, nodes, tys, attrs, k):
    a, b = tys
    need(not a.weak, "literal on the left")
    _exact(a, b)
    ct = _binary(a, b)
    _lits_fit(nodes, ct)
    return Ty("int1", join_shapes(a.shape, b.shape))


def neg(name, nodes, tys, attrs, k):
    (a,) = tys
    _not_bool(a)
    need(not a.weak, "negated literal")
    return Ty(a.dtype, a.shape, a.err)


def invert(name, nodes, tys, attrs, k):
    (a,) = tys
    need(is_int(a.dtype) and not a.weak, "~ of a non-integer")
    return Ty(a.dtype, a.shape)


def abs_(name, nodes, tys, attrs, k):
    (a,) = tys
    _not_bool(a)
    need(not a.weak, "abs of a literal")
    return Ty(a.dtype, a.shape, a.err)


def math(name, nodes, tys, attrs, k):
    (a,) = tys
    need(a.dtype in ("float32", "float64") and not a.weak, f"{name} of {a.dtype}")
    if name in ("floor", "ceil"):
        _exact(a)
        return Ty(a.dtype, a.shape)
    if name == "sqrt":
        return Ty(a.dtype, a.shape, widen(a.err, a.dtype))
    if name in ("sin", "cos"):
        _exact(a)  # of a large argument, a last-bit difference changes the result completely
    amplify = 128 if name in ("exp", "exp2") else 16  # exp(x(1+e)) = exp(x)(1 + x e), and |x| < 89
    err = min(MAX_ERR, max(amplify * a.err, 16 * EPS[a.dtype]))
    return Ty(a.dtype, a.shape, err)


def minmax(name, nodes, tys, attrs, k):
    a, b = tys
    _not_bool(a, b)
    need(not a.weak, "literal on the left")
    ct = _binary(a, b)
    _lits_fit(nodes, ct)
    return _elementwise(ct, tys)


def where(name, nodes, tys, attrs, k):
    c, a, b = tys
    need(c.dtype == "int1" and not c.weak, "where condition is not a bool tensor")
    _exact(c)
    need(not (a.weak and b.weak), "two literals")
    ct = _binary(a, b)
    _lits_fit(nodes[1:], ct)
    t = _elementwise(ct, (a, b))
    return Ty(t.dtype, join_shapes(c.shape, t.shape), t.err)


def fma(name, nodes, tys, attrs, k):
    a, b, c = tys
    need(a.dtype in ("float32", "float64") and a.dtype == b.dtype == c.dtype, "fma operand types")
    need(not (a.weak or b.weak or c.weak), "fma of literals")
    return _elementwise(a.dtype, tys)


def umulhi(name, nodes, tys, attrs, k):
    a, b = tys
    need(a.dtype == b.dtype and a.dtype in ("int32", "uint32", "int64", "uint64"), "umulhi operand types")
    need(not (a.weak or b.weak), "umulhi of literals")
    return Ty(a.dtype, join_shapes(a.shape, b.shape))


CLAMP = {True: (-100, 100), False: (0, 200)}  # float -> int casts clamp into this range first (signed, unsigned)


def cast(name, nodes, tys, attrs, k):
    (a,) = tys
    dt = attrs["dtype"]
    need(not a.weak and dt != a.dtype, "cast of a literal or to its own type")
    if is_float(a.dtype) and not is_float(dt):
        _exact(a)
        return Ty(dt, a.shape)
    if is_float(dt):
        return Ty(dt, a.shape, widen(a.err, dt))
    return Ty(dt, a.shape)


def bitcast(name, nodes, tys, attrs, k):
    (a,) = tys
    dt = attrs["dtype"]
    need(not a.weak and a.dtype != "int1" and dt != "int1" and dt != a.dtype, "bitcast types")
    need(bits(a.dtype) == bits(dt), "bitcast width")
    _exact(a)
    return Ty(dt, a.shape)


def _reduced_shape(k, shape, axis):
    need(shape != S, "reduce of a scalar")
    if axis is None or k.rank == 1 or shape in (R, C):
        need(axis in (None, 0), "axis out of range")
        return S
    return R if axis == 1 else C


def reduce(name, nodes, tys, attrs, k):
    (a,) = tys
    need(not a.weak and a.dtype != "int1" and a.dtype not in FP8, f"{name} of {a.dtype}")
    shape = _reduced_shape(k, a.shape, attrs.get("axis"))
    if name == "sum":
        dt = sum_type(a.dtype)
        need(not (is_float(dt) and a.big), "float sum of values that may be large")
        err = min(MAX_ERR, max(a.err, 64 * EPS[dt])) if is_float(dt) else 0.0
        return Ty(dt, shape, err)
    dt = minmax_reduce_type(a.dtype)
    return Ty(dt, shape, widen(a.err, dt))


def cumsum(name, nodes, tys, attrs, k):
    (a,) = tys
    need(not a.weak and a.dtype != "int1" and a.dtype not in FP8, f"cumsum of {a.dtype}")
    need(a.shape != S, "cumsum of a scalar")
    axis = attrs.get("axis", 0)
    need(axis == 0 or (k.rank == 2 and a.shape == F and axis == 1), "cumsum axis")
    need(isinstance(attrs.get("reverse", False), bool), "cumsum reverse")
    dt = sum_type(a.dtype)
    need(not (is_float(dt) and a.big), "float cumsum of values that may be large")
    err = min(MAX_ERR, max(a.err, 64 * EPS[dt])) if is_float(dt) else 0.0
    return Ty(dt, a.shape, err)


def dot(name, nodes, tys, attrs, k):
    need(k.rank == 2 and k.B0 == k.B1 and k.B0 >= 16, "dot needs a square 2-d tile of at least 16")
    a, b = tys[:2]
    need(a.shape == F and b.shape == F and not (a.weak or b.weak), "dot operands")
    need(a.dtype == b.dtype and a.dtype in DOT_TYPES, f"dot of {a.dtype} and {b.dtype}")
    out = {"int8": "int32", "float64": "float64"}.get(a.dtype, "float32")
    need(out == "int32" or not (a.big or b.big), "float dot of values that may be large")
    if len(tys) == 3:
        need(tys[2].dtype == out and tys[2].shape == F, "dot acc type")
    if out == "int32":
        return Ty(out, F)
    err = max(t.err for t in tys)
    prec = 2.0 ** -9 if a.dtype == "float32" and attrs.get("precision") != "ieee" else EPS[out]
    return Ty(out, F, min(MAX_ERR, max(err, 64 * prec)))


def trans(name, nodes, tys, attrs, k):
    (a,) = tys
    need(k.rank == 2 and k.B0 == k.B1 and a.shape == F and not a.weak, "trans needs a square tile")
    return a


def bcast(name, nodes, tys, attrs, k):
    (a,) = tys
    to = attrs["shape"]
    need(not a.weak and a.shape != to and join_shapes(a.shape, to) == to, "broadcast shapes")
    return Ty(a.dtype, to, a.err)


def full(name, nodes, tys, attrs, k):
    dt, v = attrs["dtype"], attrs["value"]
    need(literal_fits(v, dt) if is_int(dt) else True, "full value does not fit")
    need(not (isinstance(v, float) and not is_float(dt)), "float fill of an integer tile")
    return Ty(dt, attrs["shape"])


def load(name, nodes, tys, attrs, k):
    """``tl.load`` of this program's part of an input (``flip``: in reverse row order), under the kernel's mask
    and an optional extra condition (the first argument)."""
    need(attrs["param"] in k.inputs, "load of an unknown input")
    for c in tys:
        need(c.dtype == "int1" and not c.weak and c.err == 0 and join_shapes(c.shape, F) == F, "load condition")
    return Ty(k.inputs[attrs["param"]], F)


def atomic_add(name, nodes, tys, attrs, k):
    (v,) = tys
    need(not v.weak and v.dtype in ATOMIC_ADD_TYPES, f"atomic_add of {v.dtype}")
    return Ty(v.dtype, v.shape, v.err)


RULES = {}
for _n in ARITH:
    RULES[_n] = arith
for _n in CMP:
    RULES[_n] = compare
for _n in BITWISE:
    RULES[_n] = bitwise
for _n in REDUCE:
    RULES[_n] = reduce
for _n in TRANSCENDENTAL + ("sqrt", "floor", "ceil"):
    RULES[_n] = math
RULES.update(truediv=truediv, floordiv=floordiv_mod, mod=floordiv_mod, posdiv=posdiv, shamt=shamt, shl=shift,
             shr=shift, neg=neg, invert=invert, abs=abs_, maximum=minmax, minimum=minmax, where=where, fma=fma,
             umulhi=umulhi, cast=cast, bitcast=bitcast, cumsum=cumsum, dot=dot, trans=trans, bcast=bcast, full=full,
             load=load, atomic_add=atomic_add)


#: ops whose result may be far larger than their operands, and ops whose result is bounded whatever they get
BIG = {"mul", "truediv", "shl", "exp", "exp2", "rsqrt", "fma", "umulhi", "bitcast", "dot"}
SMALL = set(CMP) | {"log", "log2", "sin", "cos", "sigmoid", "erf", "full", "posdiv", "shamt"}


def op_type(node: Op, tys, k) -> Ty:
    rule = RULES.get(node.name)
    need(rule is not None, f"unknown op {node.name}")
    t = rule(node.name, node.args, tys, node.attrs, k)
    if node.name in BIG:
        big = True
    elif node.name in SMALL:
        big = False
    elif node.name == "load":
        big = k.float_specials if is_float(t.dtype) else k.int_extremes
    else:
        big = any(a.big for a in tys)
    return replace(t, big=big)


def literal_ty(v) -> Ty:
    return Ty(literal_type(v), S, 0.0, True)


def storable(t: Ty) -> bool:
    return t.dtype in STORABLE and not t.weak


def atomic_shared_ok(t: Ty) -> bool:
    return t.dtype in ("int32", "int64", "uint32", "uint64") and not t.weak and t.err == 0


__all__ = ["RULES", "op_type", "literal_ty", "join_shapes", "storable", "atomic_shared_ok", "CLAMP", "INTS"]
