"""Axis analysis: per value and per dimension, what is known about runs of its elements.

- ``contiguity[d]``: elements come in runs of this length increasing by 1 along ``d``;
- ``divisibility[d]``: a power of two dividing the first element of every such run (for pointers: in bytes);
- ``constancy[d]``: elements come in runs of this length that are equal along ``d``.

Memory accesses read these facts to choose vector widths: a pointer tile with contiguity 4 and 16-byte
divisibility of f32 elements, under a mask whose constancy is 4, can use one predicated 16-byte access per 4
elements. Facts enter from ``arg_divisibility`` on the function, ``hint`` ops, constants and ``arange``, and
``assume`` ops promising ``x % D == 0`` (or ``x & (D - 1) == 0``: ``x`` divisible by D's power-of-two part, for
what follows the promise in its block), and flow forward through a table of transfer rules; everything unknown is
(1, 1, 1). Scalars carry one entry.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from ...ir import ops as O
from ...ir.dispatch import OpTable
from ..ops import ConvertLayoutOp
from .common import pointee_bytes

BIG = 1 << 30  # divisibility of zero


def _pow2_div(v: int) -> int:
    v = abs(int(v))
    if v == 0:
        return BIG
    return min(v & -v, BIG)


@dataclass(frozen=True)
class AxisInfo:
    contiguity: tuple
    divisibility: tuple
    constancy: tuple

    @staticmethod
    def unknown(rank: int) -> "AxisInfo":
        n = max(rank, 1)
        return AxisInfo((1,) * n, (1,) * n, (1,) * n)

    def meet(self, other: "AxisInfo") -> "AxisInfo":
        return AxisInfo(tuple(map(gcd, self.contiguity, other.contiguity)),
                        tuple(map(gcd, self.divisibility, other.divisibility)),
                        tuple(map(gcd, self.constancy, other.constancy)))


def _shape(v):
    return v.type.shape if v.type.is_tile else (1,)


def _const_value(v):
    op = getattr(v, "op", None)
    if isinstance(op, O.ConstantOp):
        return op.attrs["value"]
    if isinstance(op, O.SplatOp):
        return _const_value(op.src)
    return None


class AxisAnalysis:
    """Run on a function (tir or gir); ``info(value)`` answers afterwards."""

    def __init__(self, func):
        self.values: dict = {}
        divs = func.attrs.get("arg_divisibility") or ()
        for i, a in enumerate(func.args):
            d = divs[i] if i < len(divs) else 1
            info = AxisInfo.unknown(len(a.type.shape))
            self.values[a] = AxisInfo(info.contiguity, (d,) * len(info.divisibility), info.constancy)
        self.block(func.body)

    def info(self, v) -> AxisInfo:
        i = self.values.get(v)
        return i if i is not None else AxisInfo.unknown(len(v.type.shape))

    # -- traversal ---------------------------------------------------------------------------------------
    def block(self, b):
        promised: dict = {}  # values an ``assume`` upgraded in this block -> what was known before
        for op in b.ops:
            if isinstance(op, O.AssumeOp):
                self._assume(op.cond, promised)
            else:
                self.op(op)
        if b.parent_op is not None and not isinstance(b.parent_op, O.FuncOp):
            self.values.update(promised)  # a promise made inside a region holds only there

    def _assume(self, cond, promised):
        """``x % D == 0`` / ``x & (D - 1) == 0`` (either side of the ``eq``): ``x`` is divisible by D."""
        c = getattr(cond, "op", None)
        if not isinstance(c, O.CmpOp) or c.attrs["predicate"] != "eq":
            return
        for expr, zero in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
            e = getattr(expr, "op", None)
            if _const_value(zero) != 0 or not isinstance(e, (O.RemOp, O.AndOp)):
                continue
            k = _const_value(e.rhs)
            if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
                continue
            x = e.lhs
            if not x.type.is_int:
                continue
            # x & m == 0 clears every bit m has: divisible by 2 ** (m's trailing ones), the low bit of m + 1
            d = _pow2_div(k) if isinstance(e, O.RemOp) else _pow2_div(k + 1)
            old = self.info(x)
            if d > 1 and min(old.divisibility) < d:
                promised.setdefault(x, old)
                self.values[x] = AxisInfo(old.contiguity, tuple(max(v, d) for v in old.divisibility),
                                          old.constancy)

    def op(self, op):
        if isinstance(op, O.ForOp):
            return self.for_(op)
        if op.regions:
            for r in op.regions:
                for b in r.blocks:
                    for a in b.args:
                        self.values.setdefault(a, AxisInfo.unknown(len(a.type.shape)))
                    self.block(b)
            for k, r in enumerate(op.results):
                self.values[r] = self._if_result(op, k) if isinstance(op, O.IfOp) else \
                    AxisInfo.unknown(len(r.type.shape))
            return
        rule = RULES.lookup(op)
        if rule is None and op.is_elementwise:
            rule = _elementwise_default
        for r in op.results:
            info = rule(self, op) if rule is not None and len(op.results) == 1 else None
            self.values[r] = info if info is not None else AxisInfo.unknown(len(r.type.shape))

    def _if_result(self, op, k) -> AxisInfo:
        """What both branches of an ``if`` promise about their ``k``-th yield (a value carried across a loop's
        iterations and renewed under an ``if``, as flatten-loops writes it, keeps its contiguity)."""
        infos = [self.info(r.blocks[0].terminator.operands[k]) for r in op.regions
                 if r.blocks and r.blocks[0].terminator is not None and len(r.blocks[0].terminator.operands) > k]
        if len(infos) != 2:
            return AxisInfo.unknown(len(op.results[k].type.shape))
        return infos[0].meet(infos[1])

    def for_(self, op: O.ForOp):
        iv = op.induction_var
        lb, step = self.info(op.lb), self.info(op.step)
        self.values[iv] = AxisInfo((1,), (gcd(lb.divisibility[0], step.divisibility[0]),), (1,))
        for a, init in zip(op.iter_args, op.inits):
            self.values[a] = self.info(init)
        for _ in range(3):  # meet with what the body yields until stable
            self.block(op.body)
            y = op.body.terminator
            changed = False
            for a, v in zip(op.iter_args, y.operands if y is not None else ()):
                m = self.values[a].meet(self.info(v))
                if m != self.values[a]:
                    self.values[a] = m
                    changed = True
            if not changed:
                break
        for r, a in zip(op.results, op.iter_args):
            self.values[r] = self.values[a]


# ---------------------------------------------------------------------------------------------------------------
# transfer rules
# ---------------------------------------------------------------------------------------------------------------
def _constant(an, op):
    v = op.attrs["value"]
    shape = _shape(op.result)
    div = _pow2_div(v) if isinstance(v, int) and not isinstance(v, bool) else 1
    return AxisInfo((1,) * len(shape), (div,) * len(shape), tuple(shape))


def _arange(an, op):
    n = op.attrs["end"] - op.attrs["start"]
    return AxisInfo((n,), (_pow2_div(op.attrs["start"]),), (1,))


def _splat(an, op):
    s = an.info(op.src)
    shape = _shape(op.result)
    return AxisInfo((1,) * len(shape), (s.divisibility[0],) * len(shape), tuple(shape))


def _broadcast(an, op):
    s = an.info(op.src)
    src_shape, shape = _shape(op.src), _shape(op.result)
    c, d, k = [], [], []
    for i, (a, b) in enumerate(zip(src_shape, shape)):
        if a == 1 and b != 1:
            c.append(1), d.append(s.divisibility[i]), k.append(b)
        else:
            c.append(s.contiguity[i]), d.append(s.divisibility[i]), k.append(s.constancy[i])
    return AxisInfo(tuple(c), tuple(d), tuple(k))


def _expand_dims(an, op):
    s = an.info(op.src)
    ax = op.attrs["axis"]
    if not op.src.type.is_tile:
        s = AxisInfo((), (), ())
    ins = lambda t, v: t[:ax] + (v,) + t[ax:]  # noqa: E731
    # along the new size-1 dimension every element starts a run: it needs a divisor of every element
    div0 = min(_element_div(s, (1,) * len(s.contiguity))) if s.divisibility else 1
    return AxisInfo(ins(s.contiguity, 1), ins(s.divisibility, div0), ins(s.constancy, 1))


def _identity(an, op):
    return an.info(op.operands[0])


def _hint(an, op):
    s = an.info(op.src)
    pick = lambda facts, old: tuple(facts) if facts else old  # noqa: E731
    return AxisInfo(pick(op.attrs["contiguity"], s.contiguity), pick(op.attrs["divisibility"], s.divisibility),
                    pick(op.attrs["constancy"], s.constancy))


def _element_div(info: AxisInfo, contig: tuple) -> tuple:
    """Divisibility of ``info``'s elements at the starts of runs of length ``contig``: an operand whose own
    runs are longer than the result's contributes values from the middle of its runs: ``start + j * rc`` for
    a run of ``rc``, divisible by ``gcd(d, rc)`` ([16, 17, ...] cut into runs of 1 is divisible by 1, not 16;
    cut into runs of 8, by 8)."""
    return tuple(d if c <= rc else gcd(d, rc) for d, c, rc in zip(info.divisibility, info.contiguity, contig))


def _add_like(scale_rhs):
    def rule(an, op):
        a, b = an.info(op.operands[0]), an.info(op.operands[1])
        scale = pointee_bytes(op.operands[0].type) if scale_rhs else 1
        contig = tuple(max(gcd(ca, kb), gcd(ka, cb)) for ca, cb, ka, kb in
                       zip(a.contiguity, b.contiguity, a.constancy, b.constancy))
        ad = _element_div(a, contig)
        bd = tuple(min(BIG, x * scale) for x in _element_div(b, contig))
        return AxisInfo(contig, tuple(map(gcd, ad, bd)), tuple(map(gcd, a.constancy, b.constancy)))
    return rule


def _sub(an, op):
    a, b = an.info(op.lhs), an.info(op.rhs)
    contig = tuple(gcd(ca, kb) for ca, kb in zip(a.contiguity, b.constancy))
    return AxisInfo(contig, tuple(map(gcd, _element_div(a, contig), _element_div(b, contig))),
                    tuple(map(gcd, a.constancy, b.constancy)))


def _mul(an, op):
    a, b = an.info(op.lhs), an.info(op.rhs)
    for x, y in ((op.lhs, b), (op.rhs, a)):
        if _const_value(x) == 1:
            return y
    n = len(a.contiguity)
    ones = (1,) * n
    return AxisInfo(ones, tuple(min(BIG, p * q) for p, q in zip(_element_div(a, ones), _element_div(b, ones))),
                    tuple(map(gcd, a.constancy, b.constancy)))


def _shl(an, op):
    a = an.info(op.lhs)
    c = _const_value(op.rhs)
    if isinstance(c, int) and 0 <= c < 31:
        ones = (1,) * len(a.contiguity)
        return AxisInfo(ones, tuple(min(BIG, x << c) for x in _element_div(a, ones)), a.constancy)
    return None


def _cmp(an, op):
    a, b = an.info(op.lhs), an.info(op.rhs)
    k = list(map(gcd, a.constancy, b.constancy))
    if op.attrs["predicate"] in ("lt", "ge"):
        # a run of consecutive values starting at a multiple of D lies wholly on one side of a bound that is
        # itself a multiple of D and constant over the run.
        for i in range(len(k)):
            run = gcd(gcd(a.contiguity[i], a.divisibility[i]), b.divisibility[i])
            if b.constancy[i] >= run:
                k[i] = max(k[i], run)
    n = len(k)
    return AxisInfo((1,) * n, (1,) * n, tuple(k))


def _rem(an, op):
    """``a % b`` with ``b`` constant over runs and divisible by D: an aligned run of D consecutive values of
    ``a`` never wraps (C remainder too: its sign follows the dividend, and an aligned run never crosses 0),
    so contiguity is kept up to D; the result stays divisible by what divides both."""
    a, b = an.info(op.lhs), an.info(op.rhs)
    n = len(a.contiguity)
    contig = tuple(gcd(ca, db) if kb >= gcd(ca, db) else 1
                   for ca, db, kb in zip(a.contiguity, b.divisibility, b.constancy))
    div = tuple(map(gcd, _element_div(a, contig), b.divisibility))
    return AxisInfo(contig, div, tuple(map(gcd, a.constancy, b.constancy)) if n else ())


def _elementwise_default(an, op):
    infos = [an.info(o) for o in op.operands]
    if not infos:
        return None
    k = infos[0].constancy
    for i in infos[1:]:
        k = tuple(map(gcd, k, i.constancy))
    n = len(k)
    return AxisInfo((1,) * n, (1,) * n, k)


def _cast(an, op):
    s = an.info(op.src)
    if op.src.type.is_int and op.result.type.is_int:
        return s
    if (op.src.type.is_int and op.result.type.is_ptr) or (op.src.type.is_ptr and op.result.type.is_int):
        # an address as an integer and back: its alignment in bytes is the integer's divisibility
        return AxisInfo((1,) * len(s.constancy), s.divisibility, s.constancy)
    return AxisInfo((1,) * len(s.constancy), (1,) * len(s.constancy), s.constancy)


def _bitcast(an, op):
    """Same bits: pointers to elements of one width keep their contiguity (in elements) and alignment (in
    bytes), integers their values' facts."""
    s = an.info(op.src)
    st, dt = op.src.type, op.result.type
    if st.is_ptr and dt.is_ptr and pointee_bytes(st) == pointee_bytes(dt) or st.is_int and dt.is_int:
        return s
    return AxisInfo((1,) * len(s.constancy), (1,) * len(s.constancy), s.constancy)


# op class -> transfer rule ``fn(analysis, op) -> AxisInfo or None`` (None: nothing known); elementwise ops
# without a rule keep their operands' common constancy (``_elementwise_default``)
RULES = OpTable("axis analysis rule")
for _cls, _rule in ((O.ConstantOp, _constant), (O.ArangeOp, _arange), (O.SplatOp, _splat),
                    (O.BroadcastOp, _broadcast), (O.ExpandDimsOp, _expand_dims), (O.HintOp, _hint),
                    (ConvertLayoutOp, _identity), (O.AddOp, _add_like(False)), (O.AddPtrOp, _add_like(True)),
                    (O.SubOp, _sub), (O.MulOp, _mul), (O.ShlOp, _shl), (O.CmpOp, _cmp), (O.RemOp, _rem),
                    (O.CastOp, _cast), (O.BitcastOp, _bitcast),
                    # equal operands need not give equal results: nothing known
                    (O.InlineAsmSideEffectOp, lambda an, op: None)):
    RULES.register(_cls)(_rule)


def vector_width(ll, ptr_info: AxisInfo, mask_info: AxisInfo | None, elem_bytes: int) -> int:
    """Elements per memory instruction for a pointer tile in linear layout ``ll``: as many consecutive
    registers as the layout gives along its fastest register dimension, limited by the pointers' contiguity and
    alignment, the mask's constancy and 16 bytes."""
    if not ll.reg:
        return 1
    dim = next(d for d, x in enumerate(ll.reg[0]) if x) if any(ll.reg[0]) else 0
    v = min(ll.contiguous_regs(dim), ptr_info.contiguity[dim], max(1, ptr_info.divisibility[dim] // elem_bytes),
            max(1, 16 // elem_bytes))
    if mask_info is not None:
        v = min(v, mask_info.constancy[dim])
    p = 1
    while p * 2 <= v:
        p *= 2
    # every group of p registers must start at a multiple of p along ``dim`` (the runs' facts hold from there):
    # the bases above the group's own bits may not move by less than a whole group
    while p > 1 and any(b[dim] % p for b in ll.reg[p.bit_length() - 1:] + ll.lane + ll.warp):
        p //= 2
    return p
