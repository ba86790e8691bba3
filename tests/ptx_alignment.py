"""Every memory access in a PTX text is provably aligned to its width.

A small forward analysis over PTX registers: per register, a power of two known to divide its value (the
meet over all its definitions, iterated to a fixed point, so loop-carried addresses are covered). Facts enter
from immediates, the ``.align`` of declared symbols (``global_smem``), and the kernel parameters' known
divisibility (the specialisation's ``arg_divisibility``); they flow through ``add``/``sub``/``or``/``xor``
(the smaller), ``and`` (the larger), ``mul``/``mad``/``shl`` (products), extensions, truncations, ``selp`` and
``mov``; everything else is 1. Each ``ld``/``st``/``atom``/``red``/``cp.async``/``ldmatrix``/``stmatrix``
needs its address divisible by the bytes it moves (a ``.v4.b32`` access: 16). ``misaligned(ptx)`` lists the
accesses the analysis cannot justify: a vector width chosen from alignment the address does not have faults
with "misaligned address" on the GPU.

The analysis is deliberately simple and conservative; tilec's own address arithmetic stays within what it
models, so an access it cannot justify is a real question about the code generator.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

BIG = 1 << 40

_SYMBOL_ALIGN = re.compile(r"^\s*(?:\.extern\s+|\.visible\s+|\.weak\s+)*\.(?:shared|global|const)\s+"
                           r"(?:\.align\s+(\d+)\s+)?\.\w+\s+(\w+)")
_REG = re.compile(r"^%[\w.]+$")
_ADDR = re.compile(r"^\[\s*([^\]+]+?)\s*(?:\+\s*(-?\w+))?\s*\]$")
_SIZES = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
_NO_DEST = ("st", "red", "cp", "bar", "bra", "ret", "stmatrix", "fence", "prefetch", "trap", "exit", "membar",
            "call", "wgmma", "griddepcontrol", "setmaxnreg", "cp.async", "tensormap", "mbarrier.init",
            "mbarrier.inval", "barrier", "nanosleep", "elect")


@dataclass(frozen=True)
class Access:
    line: int
    text: str
    needs: int
    known: int


def _pow2(v: int) -> int:
    v = abs(v)
    return BIG if v == 0 else min(v & -v, BIG)


def _imm(tok: str):
    tok = tok.strip()
    try:
        if re.fullmatch(r"-?0[xX][0-9a-fA-F]+", tok):
            return int(tok, 16)
        if re.fullmatch(r"-?\d+", tok):
            return int(tok)
    except ValueError:
        return None
    return None


def _split_operands(rest: str):
    out, depth, cur = [], 0, ""
    for ch in rest:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _instructions(ptx: str):
    """(line number, opcode, operands) per instruction; guards and comments stripped."""
    for n, raw in enumerate(ptx.splitlines(), 1):
        line = raw.split("//")[0].strip()
        if not line or line.startswith(".") or line.endswith(":") or line in "{}":
            continue
        for stmt in line.split(";"):
            stmt = stmt.strip().lstrip("{").strip()
            if not stmt or stmt.startswith(".") or stmt == "}":
                continue
            stmt = re.sub(r"^@!?%\w+\s+", "", stmt)
            parts = stmt.split(None, 1)
            yield n, raw.strip(), parts[0], _split_operands(parts[1]) if len(parts) > 1 else []


def _access_bytes(opcode: str) -> int:
    toks = opcode.split(".")
    vec = 1
    size = 0
    for t in toks[1:]:
        if re.fullmatch(r"v\d+", t):
            vec = int(t[1:])
        m = re.fullmatch(r"[bsuf](\d+)(x2)?|bf16(x2)?|e4m3x2|e5m2x2", t)
        if m:
            if t.startswith("bf16"):
                size = 4 if t.endswith("x2") else 2
            elif t.endswith("x2") and m.group(1):
                size = 2 * _SIZES.get(m.group(1), 0)
            elif t in ("e4m3x2", "e5m2x2"):
                size = 2
            else:
                size = _SIZES.get(m.group(1), 0)
    return vec * size


class _Analysis:
    """Addresses as linear forms over registers the analysis cannot see through (``const + sum(k * atom)``,
    symbols included), so that ``base + 2w + 2w`` is known to be ``base + 4w``; each atom has a divisibility
    from its definitions (all of them, to a fixed point, for registers defined more than once)."""

    def __init__(self, ptx: str, symbols: dict, param_divisibility):
        self.symbols = symbols
        self.params = {}
        for m in re.finditer(r"\.param\s+[^,\n)]*?(\w+_param_(\d+))", ptx):
            i = int(m.group(2))
            self.params[m.group(1)] = param_divisibility[i] if i < len(param_divisibility) else 1
        self.insts = list(_instructions(ptx))
        self.defs: dict = {}
        for _, _, opcode, ops in self.insts:
            for reg, srcs in self._dests(opcode, ops):
                self.defs.setdefault(reg, []).append((opcode, srcs))
        self.forms: dict = {}
        self.div: dict = {}
        for _ in range(50):
            new = {r: min(self._def_div(opcode, srcs) for opcode, srcs in ds) for r, ds in self.defs.items()}
            if new == self.div:
                break
            self.div = new

    # -- linear forms ------------------------------------------------------------------------------------
    def form(self, tok: str) -> dict:
        tok = tok.strip()
        v = _imm(tok)
        if v is not None:
            return {("c",): v}
        if not _REG.match(tok):
            return {("s", tok): 1}
        if "." in tok or len(self.defs.get(tok, ())) != 1:  # special registers, loop-carried values
            return {("r", tok): 1}
        hit = self.forms.get(tok)
        if hit is None:
            self.forms[tok] = {("r", tok): 1}  # cycles (none in single definitions) end at the atom
            opcode, srcs = self.defs[tok][0]
            hit = self._form_of(opcode, srcs) if srcs is not None else None
            self.forms[tok] = hit if hit is not None else {("r", tok): 1}
            hit = self.forms[tok]
        return hit

    def _form_of(self, opcode: str, srcs):
        head = opcode.split(".")[0]
        if any(s.startswith("[") for s in srcs):
            return None
        if head in ("mov", "cvta") and len(srcs) == 1:
            return self.form(srcs[0])
        if head == "cvt" and len(srcs) == 1 and all(k[0] in "usb" for k in opcode.split(".")[1:]):
            return self.form(srcs[0])
        if head in ("add", "sub") and len(srcs) == 2:
            sign = 1 if head == "add" else -1
            out = dict(self.form(srcs[0]))
            for k, c in self.form(srcs[1]).items():
                out[k] = out.get(k, 0) + sign * c
            return {k: c for k, c in out.items() if c}
        scale = None
        if head in ("mul", "mad") and ".hi" not in opcode and len(srcs) >= 2:
            a, b = _imm(srcs[0]), _imm(srcs[1])
            scale, x = (b, srcs[0]) if b is not None else ((a, srcs[1]) if a is not None else (None, None))
        if head == "shl" and len(srcs) == 2 and _imm(srcs[1]) is not None:
            scale, x = 1 << _imm(srcs[1]), srcs[0]
        if scale is None:
            return None
        out = {k: c * scale for k, c in self.form(x).items() if c * scale}
        if head == "mad":
            if len(srcs) != 3:
                return None
            for k, c in self.form(srcs[2]).items():
                out[k] = out.get(k, 0) + c
        return out

    def form_div(self, f: dict) -> int:
        d = BIG
        for key, c in f.items():
            if key[0] == "c":
                d = min(d, _pow2(c))
            elif key[0] == "s":
                d = min(d, self.symbols.get(key[1], 1) * _pow2(c))
            else:
                d = min(d, self.atom(key[1]) * _pow2(c))
        return d

    def atom(self, reg: str) -> int:
        if reg not in self.defs:
            return 1  # %tid.x, or a register no modelled instruction defines
        return self.div.get(reg, BIG)  # optimistic until the fixed point reaches it

    def value(self, tok: str) -> int:
        return self.form_div(self.form(tok))

    # -- definitions -------------------------------------------------------------------------------------
    def _dests(self, opcode: str, ops):
        if not ops or opcode.startswith(_NO_DEST) or opcode.split(".")[0] in _NO_DEST:
            return []
        dest = ops[0]
        if dest.startswith("{"):
            return [(r.strip(), None) for r in dest.strip("{}").split(",") if r.strip()]
        if "|" in dest:
            return [(r.strip(), None) for r in dest.split("|")]
        if not _REG.match(dest):
            return []
        return [(dest, ops[1:])]

    def _def_div(self, opcode: str, srcs) -> int:
        if srcs is None:
            return 1
        f = self._form_of(opcode, srcs)
        if f is not None:
            return min(BIG, self.form_div(f))
        head = opcode.split(".")[0]
        if head == "ld" and ".param" in opcode and srcs:
            m = _ADDR.match(srcs[0])
            return self.params.get(m.group(1), 1) if m and m.group(2) is None else 1
        if any(s.startswith("[") for s in srcs):
            return 1
        v = [self.value(s) for s in srcs]
        if head in ("or", "xor", "selp", "min", "max") and len(v) >= 2:
            return min(v[0], v[1])
        if head == "and" and len(v) == 2:
            return max(v[0], v[1])
        if head == "neg" and len(v) == 1:
            return v[0]
        if head == "mul" and ".hi" not in opcode and len(v) == 2:
            return min(BIG, v[0] * v[1])
        if head == "mad" and ".hi" not in opcode and len(v) == 3:
            return min(BIG, v[0] * v[1], v[2])
        if head == "shl" and len(v) == 2:
            return v[0]
        return 1

    def address(self, tok: str) -> int | None:
        m = _ADDR.match(tok.strip())
        if not m:
            return None
        base, off = m.group(1), m.group(2)
        f = dict(self.form(base))
        if off is not None:
            o = _imm(off)
            if o is None:
                return 1
            f[("c",)] = f.get(("c",), 0) + o
        return self.form_div(f)

    def accesses(self):
        for n, text, opcode, ops in self.insts:
            head = opcode.split(".")[0]
            kinds = opcode.split(".")
            if ".param" in opcode or ".local" in opcode or head not in (
                    "ld", "st", "ldu", "atom", "red", "cp", "ldmatrix", "stmatrix"):
                continue
            if head == "cp":
                if len(kinds) < 2 or kinds[1] != "async" or "bulk" in kinds or len(ops) < 3:
                    continue
                size = _imm(ops[2]) or 1
                addrs = ops[:2]
            elif head in ("ldmatrix", "stmatrix"):
                size = 16
                addrs = [o for o in ops if o.startswith("[")]
            else:
                size = _access_bytes(opcode)
                addrs = [o for o in ops if o.startswith("[")]
            for a in addrs:
                known = self.address(a)
                if known is not None and size > 1:
                    yield Access(n, text, size, known)


_FUNC = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?(\w+)", re.M)


def _functions(ptx: str):
    """(name, is entry, text) per function of a PTX module (registers are per function)."""
    heads = list(_FUNC.finditer(ptx))
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(ptx)
        yield m.group(2), m.group(1) == "entry", ptx[m.start():end]


def accesses(ptx: str, param_divisibility=()):
    """Every memory access with the bytes it moves and what is known of its address's alignment.
    ``param_divisibility``: per PTX parameter of the entry function (a list), or per function name (a dict)."""
    symbols = {}
    for line in ptx.splitlines():
        m = _SYMBOL_ALIGN.match(line)
        if m:
            symbols[m.group(2)] = int(m.group(1) or 1)
    out = []
    chunks = list(_functions(ptx)) or [("", True, ptx)]
    for name, entry, text in chunks:
        if isinstance(param_divisibility, dict):
            divs = param_divisibility.get(name, ())
        else:
            divs = param_divisibility if entry else ()
        found = _Analysis(text, symbols, list(divs)).accesses()
        offset = ptx.count("\n", 0, ptx.index(text)) if text is not ptx else 0
        out.extend(Access(a.line + offset, a.text, a.needs, a.known) for a in found)
    return out


def misaligned(ptx: str, param_divisibility=()):
    """The accesses whose address is not provably divisible by their width."""
    return [a for a in accesses(ptx, param_divisibility) if a.known < a.needs]


def kernel_param_divisibility(compiled) -> dict:
    """Per function of the compiled module, the known divisibility of each PTX parameter: for the kernel, the
    specialisation's ``arg_divisibility``, then the global scratch parameter (``global_scratch_align``); for a
    device function, 1 (nothing is specialised), a tile parameter counting one PTX parameter per register. A
    pointer is at least as aligned as its pointee's size (elements are naturally aligned, as in Triton)."""
    from tilec.gpu.lowering.values import num_regs
    from tilec.ir.parser import parse_module
    module = parse_module(compiled.asm["gir"])
    out = {}
    for f in module.funcs:
        divs = list(f.attrs.get("arg_divisibility") or ())
        flat = []
        for i, a in enumerate(f.args):
            t = a.type
            d = divs[i] if i < len(divs) else 1
            e = t.element
            if e.is_ptr:
                d = max(d, 8 if e.pointee.is_ptr else max(1, e.pointee.bytes))
            flat.extend([d] * (num_regs(t) if t.is_tile else 1))
        if f.attrs.get("kernel"):
            flat.append(int(compiled.metadata.get("global_scratch_align", 1) or 1))
        out[f.sym_name] = flat
    return out


def check_kernel(compiled) -> list:
    """``misaligned`` for a compiled CUDA kernel, with its parameters' divisibility."""
    return misaligned(compiled.asm["ptx"], kernel_param_divisibility(compiled))
