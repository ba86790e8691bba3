"""A fuzz kernel as a small structured program: expressions, statements and the launch parameters.

Kernels are kept as data rather than text so that the shrinker can delete statements, replace expressions and
reduce sizes, and every variant is re-checked by :func:`infer` before it is run. ``infer`` is also what makes a
program valid: it types every expression with Triton's rules and refuses anything whose result is not fully
defined (see ``rules``). Rendering to Python source is in ``render``.

Shapes are symbolic, so sizes can change without touching the body: ``F`` is the kernel's full tile (``[B0]`` in
a 1-d kernel, ``[B0, B1]`` in a 2-d one), ``R`` a row vector ``[B0]`` and ``C`` a column vector ``[B1]`` (2-d
kernels only), ``S`` a scalar.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from .dtypes import Invalid

S, R, C, F = "S", "R", "C", "F"


@dataclass(frozen=True)
class Ty:
    """A value's type: element type, symbolic shape, ``err`` (the relative difference allowed between backends;
    0 means every backend must agree bit for bit), ``weak`` (a Python literal, which adopts its partner's type) and
    ``big``: a float sum of such values may cancel to far below its terms, where a backend adding in another
    order is off by far more than the result's own precision, so float reductions and dots refuse them."""
    dtype: str
    shape: str
    err: float = 0.0
    weak: bool = False
    big: bool = False  # the magnitude may be far beyond the data's (products, shifts, exp, bit patterns)


# -- expressions -------------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Var:
    name: str


@dataclass(eq=False)
class Lit:
    value: object  # int, float or bool


@dataclass(eq=False)
class Op:
    name: str
    args: list
    attrs: dict = field(default_factory=dict)


# -- statements --------------------------------------------------------------------------------------------------
@dataclass(eq=False)
class Assign:
    name: str
    expr: object


@dataclass(eq=False)
class Store:
    """``tl.store`` of ``expr`` into output ``param`` at this program's part of it (``cond`` narrows the mask)."""
    param: str
    expr: object
    cond: object = None


@dataclass(eq=False)
class Atomic:
    """``tl.atomic_<kind>`` of an integer ``expr`` into the 4 words of ``param``: lanes share addresses, so only
    commutative integer updates are generated (the final memory is the same in any order)."""
    param: str
    kind: str
    expr: object


@dataclass(eq=False)
class For:
    var: str
    kind: str     # "range", "tl.range" or "static_range"
    trip: object  # an int, or "s0" (the runtime scalar argument)
    body: list


@dataclass(eq=False)
class If:
    cond: object
    then: list
    orelse: list


@dataclass
class Kernel:
    """A whole fuzz kernel: sizes, the input arrays' element types and the body. Programs are ``(G,)`` of them;
    program ``pid`` owns rows ``pid*B0 ...`` of the ``n0`` (x ``n1``) elements."""
    seed: int
    rank: int
    B0: int
    B1: int
    G: int
    n0: int
    n1: int
    s0: int
    f0: float
    inputs: dict
    body: list
    data_seed: int = 0

    @property
    def float_specials(self) -> bool:
        """Float inputs include infinities, NaN and +-1e4 (see ``data.values``)."""
        return self.data_seed % 5 == 0

    @property
    def int_extremes(self) -> bool:
        """Integer inputs include their type's extremes (see ``data.values``)."""
        return self.data_seed % 4 == 0

    def copy(self) -> "Kernel":
        return copy.deepcopy(self)

    def shape_of(self, shape: str) -> tuple:
        """The concrete tile shape of a symbolic one."""
        return {S: (), R: (self.B0,), C: (self.B1,), F: (self.B0, self.B1) if self.rank == 2 else (self.B0,)}[shape]


# -- walking -------------------------------------------------------------------------------------------------------
def blocks(stmts):
    """Every statement list in ``stmts`` (itself first, then nested bodies), for edits that need the owner list."""
    yield stmts
    for s in stmts:
        if isinstance(s, For):
            yield from blocks(s.body)
        elif isinstance(s, If):
            yield from blocks(s.then)
            yield from blocks(s.orelse)


def statements(stmts):
    for b in blocks(stmts):
        yield from b


def stmt_exprs(s):
    """The expressions a statement holds directly, as (holder, key) pairs usable with ``get``/``put``."""
    if isinstance(s, (Assign, Store, Atomic)):
        out = [(s, "expr")]
        if isinstance(s, Store) and s.cond is not None:
            out.append((s, "cond"))
        return out
    if isinstance(s, If):
        return [(s, "cond")]
    return []


def sub_slots(e):
    """Slots of ``e``'s direct sub-expressions."""
    return [(e.args, i) for i in range(len(e.args))] if isinstance(e, Op) else []


def get(slot):
    holder, key = slot
    return holder[key] if isinstance(holder, list) else getattr(holder, key)


def put(slot, value):
    holder, key = slot
    if isinstance(holder, list):
        holder[key] = value
    else:
        setattr(holder, key, value)


def all_slots(kernel: Kernel):
    """Every expression slot of the kernel, outermost expressions first."""
    out = []
    for s in statements(kernel.body):
        todo = stmt_exprs(s)
        while todo:
            slot = todo.pop(0)
            out.append(slot)
            todo.extend(sub_slots(get(slot)))
    return out


def count_nodes(kernel: Kernel) -> int:
    return len(all_slots(kernel)) + sum(1 for _ in statements(kernel.body))


def ensure_valid(cond: bool, msg: str):
    if not cond:
        raise Invalid(msg)
