"""What an AOT compile is asked for: the kernel (a @jit function in a Python file), one entry per parameter in
``-s`` (a type with an optional ``:16``/``:1`` hint for runtime parameters, a value for constexprs), and a grid of
C expressions over the parameters (``-g "N/1024,1,1"``). Everything is checked here so that a mistake is a
one-line ``AOTError`` naming the bad entry, never a C compiler error later."""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import os
import re
import sys
from dataclasses import dataclass, field

from ...errors import TilecError
from ...runtime.jit import JITFunction
from ...language.core import type_from_signature


class AOTError(TilecError):
    """Bad input to the AOT tools (the CLIs print it as one line and exit with status 2)."""


# C types of each parameter kind (``tilec.targets.params``): CUDA passes pointers as CUdeviceptr, the host as
# void*. 16-bit floats travel as their bit patterns.
_C_SCALAR = {"i1": "bool", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
             "u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t", "f16": "uint16_t",
             "bf16": "uint16_t", "f32": "float", "f64": "double"}


def c_type(kind: str, target: str) -> str:
    if kind == "ptr":
        return "CUdeviceptr" if target == "cuda" else "void *"
    try:
        return _C_SCALAR[kind]
    except KeyError:
        raise AOTError(f"parameters of kind {kind!r} cannot be passed from C") from None


@dataclass
class Param:
    """A runtime parameter as C sees it: ``hint`` is 16 (divisible/aligned), 1 (equal to one) or None."""
    name: str
    sig: str
    hint: int | None = None
    kind: str = ""
    ctype: str = ""


@dataclass
class KernelSpec:
    fn: object
    kernel_name: str
    params: list                      # runtime Params, in order
    constexprs: dict                  # name -> value
    grid: list                        # three C expressions over the runtime parameters' names
    num_warps: int = 4
    num_stages: int = 3
    target: str = "cpu"
    arch: object = None
    out_name: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def signature(self) -> str:
        return ",".join(p.sig + (f":{p.hint}" if p.hint else "") for p in self.params)

    @property
    def sig_hash(self) -> str:
        """Names this specialisation in file and function names (Triton's ``<sig-hash>``)."""
        payload = json.dumps([self.kernel_name, self.signature, sorted((k, repr(v)) for k, v in self.constexprs.items()),
                              self.num_warps, self.num_stages, self.target, str(self.arch), self.grid,
                              sorted(self.extra.items())])
        return hashlib.sha256(payload.encode()).hexdigest()[:10]

    @property
    def func_name(self) -> str:
        return f"{self.out_name}_{self.sig_hash}"

    @property
    def algo(self) -> str:
        """What the linker groups into one algorithm: everything but the runtime hints."""
        cx = ", ".join(f"{k}={v}" for k, v in self.constexprs.items())
        debug = ", debug" if self.extra.get("debug") else ""
        return f"{cx}{'; ' if cx else ''}num_warps={self.num_warps}, num_stages={self.num_stages}{debug}"

    def describe(self) -> dict:
        """The header's ``// tilec-aot`` record (what ``tilec.tools.link`` reads)."""
        return {"name": self.out_name, "func": self.func_name, "kernel": self.kernel_name, "target": self.target,
                "arch": None if self.arch is None else str(self.arch), "algo": self.algo, "grid": self.grid,
                "params": [{"name": p.name, "ctype": p.ctype, "kind": p.kind, "hint": p.hint} for p in self.params]}


def load_kernel(path: str, name: str):
    """The @jit function ``name`` defined in the Python file ``path`` (through @autotune/@heuristics wrappers).
    The file is imported with ``import triton`` resolving to tilec, so Triton kernels load unchanged."""
    # compat offers these tools under Triton's names: imported here, not with the module
    from ... import compat
    if not os.path.isfile(path):
        raise AOTError(f"no such file: {path}")
    had_compat = compat.installed()
    compat.install()
    mod_name = "tilec_aot_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise AOTError(f"importing {path} failed: {type(e).__name__}: {e}") from e
    finally:
        sys.path.pop(0)
        if not had_compat:
            compat.uninstall()
    obj = getattr(module, name, None)
    if obj is None:
        found = [k for k, v in vars(module).items() if isinstance(v, JITFunction)]
        raise AOTError(f"{path} has no kernel named {name!r}" + (f" (kernels: {', '.join(found)})" if found else ""))
    while not isinstance(obj, JITFunction) and hasattr(obj, "fn"):
        obj = obj.fn
    if not isinstance(obj, JITFunction):
        raise AOTError(f"{name!r} in {path} is not a @jit kernel")
    return obj


def _constexpr_value(text: str, pname: str):
    """A constexpr entry: a Python literal (``1024``, ``0.5``, ``True``, ``'x'``) or a dtype name (``fp16``)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    try:
        return type_from_signature(text)
    except ValueError:
        raise AOTError(f"constexpr parameter '{pname}': {text!r} is neither a Python literal nor a type name") from None


def parse_signature(fn, text: str):
    """(runtime Params, constexpr values) from ``-s``: one entry per kernel parameter, in order."""
    entries = [e.strip() for e in text.split(",")]
    if entries == [""] or any(not e for e in entries):
        raise AOTError(f"signature {text!r} has an empty entry")
    if len(entries) != len(fn.params):
        names = ", ".join(p.name for p in fn.params)
        raise AOTError(f"signature has {len(entries)} entries but {fn.__name__} has {len(fn.params)} parameters "
                       f"({names})")
    runtime, constexprs = [], {}
    for p, e in zip(fn.params, entries):
        if p.is_constexpr:
            constexprs[p.name] = _constexpr_value(e, p.name)
            continue
        t, _, hint = e.partition(":")
        t = t.strip()
        if hint not in ("", "16", "1"):
            raise AOTError(f"parameter '{p.name}': unknown hint ':{hint}' (':16' divisible by 16, ':1' equal to 1)")
        try:
            type_from_signature(t)
        except ValueError:
            raise AOTError(f"parameter '{p.name}': unknown type {t!r} (e.g. *fp32, i32, fp16)") from None
        if hint == "1" and t.startswith("*"):
            raise AOTError(f"parameter '{p.name}': a pointer cannot be specialised as equal to 1")
        runtime.append(Param(p.name, t, int(hint) if hint else None))
    return runtime, constexprs


_GRID_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(<<|>>|[-+*/%()]))")


def parse_grid(text: str, runtime, constexprs) -> list:
    """Three C integer expressions over the runtime parameters (constexprs are replaced by their values)."""
    parts = [g.strip() for g in text.split(",")]
    if not 1 <= len(parts) <= 3 or any(not g for g in parts):
        raise AOTError(f"grid {text!r}: give one to three comma-separated expressions")
    names = {p.name: p for p in runtime}
    out = []
    for g in parts:
        pos, toks = 0, []
        while pos < len(g):
            m = _GRID_TOKEN.match(g, pos)
            if not m or m.end() == pos:
                raise AOTError(f"grid expression {g!r}: unexpected {g[pos:].strip()[:10]!r}")
            num, ident, op = m.groups()
            if ident is not None:
                if ident in constexprs:
                    v = constexprs[ident]
                    if not isinstance(v, int) or isinstance(v, bool):
                        raise AOTError(f"grid expression {g!r}: constexpr {ident} is not an integer")
                    ident = str(v)
                elif ident not in names:
                    raise AOTError(f"grid expression {g!r}: {ident!r} is not a parameter of the kernel")
                elif names[ident].sig[0] not in "iu":
                    raise AOTError(f"grid expression {g!r}: parameter {ident!r} is not an integer")
                toks.append(ident)
            else:
                toks.append(num or op)
            pos = m.end()
        expr = " ".join(toks).replace("( ", "(").replace(" )", ")")
        try:
            compile(expr.replace("/", "//"), "<grid>", "eval")
        except SyntaxError:
            raise AOTError(f"grid expression {g!r} is not a valid expression") from None
        out.append(expr)
    return out + ["1"] * (3 - len(out))
