"""Type-check a fuzz program: every expression's type, the inputs it reads and the outputs it writes.

Raises :class:`Invalid` for anything that is not a valid kernel with fully defined results. Loops are checked to a
fixed point: a value that becomes inexact in one iteration is inexact in the next one's uses too.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from .dtypes import Invalid
from .program import (C, F, R, S, Assign, Atomic, For, If, Kernel, Lit, Op, Store, Ty, Var)
from .rules import atomic_shared_ok, join_shapes, literal_ty, need, op_type, storable

#: names the prologue defines; the body may read them but never assigns them
PROLOGUE = ("pid", "offs", "mask", "rows", "cols", "n0", "n1", "s0", "f0")


@dataclass
class Output:
    dtype: str
    shape: str     # a shape, or "shared" for the 4-word targets of shared atomics
    err: float
    kind: str      # "store", "atomic_add" or "atomic"


@dataclass
class Info:
    types: dict = field(default_factory=dict)     # id(expr node) -> Ty
    inputs: dict = field(default_factory=dict)    # param -> dtype, in order of first use
    outputs: dict = field(default_factory=dict)   # param -> Output, in order of first write
    uses: set = field(default_factory=set)        # names read anywhere (prologue names included)


def _join(a: Ty, b: Ty) -> Ty:
    """``a`` (a variable's type) once it may also hold a value of type ``b`` (same dtype and shape)."""
    return replace(a, err=max(a.err, b.err), big=a.big or b.big)


def _int_arg(v: int) -> Ty:
    return Ty("int32", S, 0.0, v == 1)


def prologue_env(k: Kernel) -> dict:
    # an int argument equal to 1 is compiled as the constant 1 (Triton's specialisation): a weak literal
    env = {"pid": Ty("int32", S), "offs": Ty("int32", F), "mask": Ty("int1", F), "n0": _int_arg(k.n0),
           "s0": _int_arg(k.s0), "f0": Ty("float32", S)}
    if k.rank == 2:
        env.update(rows=Ty("int32", R), cols=Ty("int32", C), n1=_int_arg(k.n1))
    return env


class _Checker:
    def __init__(self, k: Kernel):
        self.k = k
        self.info = Info()

    def expr(self, e, env) -> Ty:
        if isinstance(e, Var):
            need(e.name in env, f"undefined name {e.name}")
            self.info.uses.add(e.name)
            t = env[e.name]
        elif isinstance(e, Lit):
            need(isinstance(e.value, (bool, int, float)), "literal type")
            t = literal_ty(e.value)
        elif isinstance(e, Op):
            tys = [self.expr(a, env) for a in e.args]
            t = op_type(e, tys, self.k)
            if e.name == "load":
                self.info.inputs.setdefault(e.attrs["param"], t.dtype)
            elif e.name == "atomic_add":
                self.output(e.attrs["param"], t.dtype, t.shape, t.err, "atomic_add", id(e))
        else:
            raise Invalid(f"not an expression: {e!r}")
        self.info.types[id(e)] = t
        return t

    def output(self, param, dtype, shape, err, kind, owner):
        need(param not in self.k.inputs, f"{param} is an input")
        prev = self.info.outputs.get(param)
        if prev is not None:
            need(getattr(prev, "_owner", None) == owner, f"{param} written twice")
            err = max(err, prev.err)
        out = Output(dtype, shape, err, kind)
        out._owner = owner
        self.info.outputs[param] = out

    def block(self, stmts, env):
        """Check ``stmts`` in a copy of ``env``; returns the copy (names defined inside stay local)."""
        env = dict(env)
        for s in stmts:
            self.stmt(s, env)
        return env

    def assign(self, name, t: Ty, env):
        need(name not in PROLOGUE, f"assignment to {name}")
        if name in env:
            old = env[name]
            need(not old.weak and not t.weak and (old.dtype, old.shape) == (t.dtype, t.shape),
                 f"{name} changes type from {old} to {t}")
        env[name] = t

    def stmt(self, s, env):
        if isinstance(s, Assign):
            self.assign(s.name, self.expr(s.expr, env), env)
        elif isinstance(s, Store):
            t = self.expr(s.expr, env)
            need(storable(t), f"store of {t.dtype}")
            if s.cond is not None:
                c = self.expr(s.cond, env)
                need(c.dtype == "int1" and not c.weak and c.err == 0, "store condition")
                need(join_shapes(c.shape, t.shape) == t.shape, "store condition shape")
            self.output(s.param, t.dtype, t.shape, t.err, "store", id(s))
        elif isinstance(s, Atomic):
            t = self.expr(s.expr, env)
            need(atomic_shared_ok(t), f"shared atomic of {t.dtype}")
            need(s.kind in ("add", "max", "min", "and", "or", "xor"), "atomic kind")
            self.output(s.param, t.dtype, "shared", 0.0, "atomic", id(s))
        elif isinstance(s, If):
            c = self.expr(s.cond, env)
            need(c.dtype == "int1" and c.shape == S and not c.weak and c.err == 0, "if condition")
            outs = [self.block(b, env) for b in (s.then, s.orelse)]
            for name in env:
                for o in outs:
                    env[name] = _join(env[name], o[name])
        elif isinstance(s, For):
            self.loop(s, env)
        else:
            raise Invalid(f"not a statement: {s!r}")

    def loop(self, s: For, env):
        need(s.var not in env and s.var not in PROLOGUE, "loop variable shadows a name")
        if s.kind == "static_range":
            need(isinstance(s.trip, int), "static_range needs a constant trip count")
            vt = Ty("int32", S, 0.0, True)
        else:
            need(isinstance(s.trip, int) or s.trip == "s0", "trip count")
            vt = Ty("int32", S)
        need(not isinstance(s.trip, int) or 0 <= s.trip <= 8, "trip count range")
        entry = dict(env)
        for _ in range(6):
            inner = dict(entry)
            inner[s.var] = vt
            out = self.block(s.body, inner)
            grown = False
            for name in entry:
                joined = _join(entry[name], out[name])
                if joined != entry[name]:
                    entry[name] = joined
                    grown = True
            if not grown:
                break
        else:
            raise Invalid("loop types do not settle")
        env.update(entry)


def infer(k: Kernel) -> Info:
    """Check ``k``; the returned Info types every expression and lists the kernel's inputs and outputs."""
    need(k.rank in (1, 2) and k.G >= 1 and k.B0 >= 1 and k.B1 >= 1, "sizes")
    need(1 <= k.n0 <= k.G * k.B0 and (k.rank == 1 or 1 <= k.n1 <= k.B1), "extents")
    ch = _Checker(k)
    ch.block(k.body, prologue_env(k))
    need(ch.info.outputs, "no outputs")
    return ch.info


def is_valid(k: Kernel) -> bool:
    try:
        infer(k)
        return True
    except Invalid:
        return False
