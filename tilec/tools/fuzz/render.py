"""Render a checked fuzz program as the Python source of a ``@tilec.jit`` kernel module."""
from __future__ import annotations

from .infer import Info, infer
from .program import C, F, R, S, Assign, Atomic, For, If, Kernel, Lit, Op, Store, Var
from .rules import ARITH, BITWISE, CLAMP, CMP
from .dtypes import is_float, is_signed

BINOPS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "and": "&", "or": "|",
          "xor": "^", "shl": "<<", "shr": ">>", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
ELEMENTWISE = set(BINOPS) | {"maximum", "minimum", "where", "fma", "umulhi"}
assert set(ARITH) | set(BITWISE) | set(CMP) <= set(BINOPS)


def literal(v) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


class _Renderer:
    def __init__(self, k: Kernel, info: Info, checks=False):
        self.k, self.info = k, info
        self.checks = checks
        self.lines: list = []

    def shape(self, e) -> str:
        return self.info.types[id(e)].shape

    def shape_src(self, shape) -> str:
        dims = {S: "", R: "B0", C: "B1", F: "B0, B1" if self.k.rank == 2 else "B0"}[shape]
        return f"({dims},)" if dims and "," not in dims else f"({dims})"

    def index(self, shape):
        """(pointer offset, mask) of this program's part of an output of ``shape``."""
        return {F: ("offs", "mask"), R: ("rows", "rows < n0"), C: ("pid * B1 + cols", "cols < n1"),
                S: ("pid", None)}[shape]

    def ex(self, e, want=None) -> str:
        text = self._ex(e)
        if want == F and self.k.rank == 2:
            sh = self.shape(e) if not isinstance(e, Lit) else S
            if sh == R:
                return f"{text}[:, None]"
            if sh == C:
                return f"{text}[None, :]"
        return text

    def _ex(self, e) -> str:
        if isinstance(e, Var):
            return e.name
        if isinstance(e, Lit):
            return literal(e.value)
        n, a, at = e.name, e.args, e.attrs
        out = self.shape(e)
        w = out if n in ELEMENTWISE else None
        args = [self.ex(x, w) for x in a]
        if n in BINOPS:
            return f"({args[0]} {BINOPS[n]} {args[1]})"
        if n == "neg":
            return f"(-{args[0]})"
        if n == "invert":
            return f"(~{args[0]})"
        if n == "posdiv":
            return f"(({args[0]} & 7) + 1)"
        if n == "shamt":
            return f"({args[0]} & {at['m']})"
        if n in ("maximum", "minimum", "where", "fma", "umulhi", "abs", "trans") or n in (
                "exp", "exp2", "log", "log2", "sin", "cos", "sigmoid", "erf", "rsqrt", "sqrt", "floor", "ceil"):
            return f"tl.{n}({', '.join(args)})"
        if n == "cast":
            dt, src = at["dtype"], self.info.types[id(a[0])].dtype
            if is_float(src) and not is_float(dt) and dt != "int1":
                lo, hi = CLAMP[is_signed(dt)]
                return f"tl.minimum(tl.maximum({args[0]}, {float(lo)}), {float(hi)}).to(tl.{dt})"
            return f"{args[0]}.to(tl.{dt})"
        if n == "bitcast":
            if is_float(self.info.types[id(a[0])].dtype):
                # a NaN's bits are the hardware's own (x86 makes 0xffc00000, NVIDIA 0x7fffffff): NaNs are made one
                # constant NaN first, whose bits every backend keeps
                x = args[0]
                return f"tl.where({x} == {x}, {x}, float('nan')).to(tl.{at['dtype']}, bitcast=True)"
            return f"{args[0]}.to(tl.{at['dtype']}, bitcast=True)"
        if n in ("sum", "max", "min", "cumsum"):
            axis = at.get("axis")
            rev = ", reverse=True" if at.get("reverse") else ""
            return f"tl.{n}({args[0]}{rev})" if axis is None else f"tl.{n}({args[0]}, axis={axis}{rev})"
        if n == "dot":
            prec = at.get("precision")
            extra = f", input_precision=\"{prec}\"" if prec else ""
            return f"tl.dot({', '.join(args)}{extra})"
        if n == "bcast":
            src = self.ex(a[0], at["shape"])
            return f"tl.broadcast_to({src}, {self.shape_src(at['shape'])})"
        if n == "full":
            return f"tl.full({self.shape_src(at['shape'])}, {literal(at['value'])}, tl.{at['dtype']})"
        if n == "load":
            off = "offs"
            if at.get("flip"):  # rows in reverse order: a negative stride
                off = "(n0 - 1 - offs)" if self.k.rank == 1 else "((n0 - 1 - rows)[:, None] * n1 + cols[None, :])"
            m = "mask" if not a else f"mask & {self.ex(a[0], F)}"
            return f"tl.load({at['param']} + {off}, mask={m}, other={literal(at['other'])})"
        if n == "atomic_add":
            off, m = self.index(out)
            mask = f", mask={m}" if m else ""
            return f"tl.atomic_add({at['param']} + {off}, {args[0]}{mask})"
        raise ValueError(f"cannot render op {n}")

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    def block(self, stmts, depth):
        if not stmts:
            self.emit(depth, "pass")
        for s in stmts:
            self.stmt(s, depth)

    def stmt(self, s, depth):
        if isinstance(s, Assign):
            self.emit(depth, f"{s.name} = {self.ex(s.expr)}")
            t = self.info.types[id(s.expr)]
            if self.checks and not t.weak:
                shape = ", ".join(str(d) for d in self.k.shape_of(t.shape))
                self.emit(depth, f"tl.static_assert({s.name}.dtype == tl.{t.dtype} and "
                                 f"list({s.name}.shape) == [{shape}])")
        elif isinstance(s, Store):
            sh = self.shape(s.expr)
            off, m = self.index(sh)
            if s.cond is not None:
                c = self.ex(s.cond, sh)
                m = f"{m} & {c}" if m else c
            mask = f", mask={m}" if m else ""
            self.emit(depth, f"tl.store({s.param} + {off}, {self.ex(s.expr)}{mask})")
        elif isinstance(s, Atomic):
            sh = self.shape(s.expr)
            off, m = self.index(sh)
            mask = f", mask={m}" if m else ""
            self.emit(depth, f"tl.atomic_{s.kind}({s.param} + (({off}) & 3), {self.ex(s.expr)}{mask})")
        elif isinstance(s, For):
            rng = {"range": "range", "tl.range": "tl.range", "static_range": "tl.static_range"}[s.kind]
            self.emit(depth, f"for {s.var} in {rng}({s.trip}):")
            self.block(s.body, depth + 1)
        elif isinstance(s, If):
            self.emit(depth, f"if {self.ex(s.cond)}:")
            self.block(s.then, depth + 1)
            if s.orelse:
                self.emit(depth, "else:")
                self.block(s.orelse, depth + 1)
        else:
            raise ValueError(f"cannot render {s!r}")


def params(k: Kernel, info: Info) -> list:
    """The kernel's parameters in order: inputs, outputs, runtime scalars, constexpr block sizes."""
    scalars = ["n0", "n1", "s0", "f0"] if k.rank == 2 else ["n0", "s0", "f0"]
    return list(info.inputs) + list(info.outputs) + scalars


def constexprs(k: Kernel) -> dict:
    return {"B0": k.B0, "B1": k.B1} if k.rank == 2 else {"B0": k.B0}


def render(k: Kernel, info: Info | None = None, name: str = "kernel", checks: bool = False) -> str:
    """The module source: imports and one ``@tilec.jit`` function ``name``. ``checks`` adds a
    ``tl.static_assert`` of the predicted dtype and shape after every assignment (to test the generator)."""
    info = info or infer(k)
    r = _Renderer(k, info, checks)
    sig = ", ".join(params(k, info) + [f"{c}: tl.constexpr" for c in constexprs(k)])
    r.emit(1, "pid = tl.program_id(0)")
    if k.rank == 1:
        r.emit(1, "offs = pid * B0 + tl.arange(0, B0)")
        r.emit(1, "mask = offs < n0")
    else:
        r.emit(1, "rows = pid * B0 + tl.arange(0, B0)")
        r.emit(1, "cols = tl.arange(0, B1)")
        r.emit(1, "mask = (rows[:, None] < n0) & (cols[None, :] < n1)")
        r.emit(1, "offs = rows[:, None] * n1 + cols[None, :]")
    r.block(k.body, 1)
    head = [f'"""tilec fuzz kernel (seed {k.seed})."""', "import tilec", "import tilec.language as tl", "", "",
            "@tilec.jit", f"def {name}({sig}):"]
    return "\n".join(head + r.lines) + "\n"
