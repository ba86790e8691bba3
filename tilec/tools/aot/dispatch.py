"""The dispatcher ``python -m tilec.tools.link`` writes over AOT specialisations of one kernel (one out name).

Specialisations that differ only in their runtime hints (``:16`` divisible or 16-byte aligned, ``:1`` equal to
one) form one algorithm; the algorithms are the distinct constexpr values and launch options. For each algorithm
the dispatcher tries its specialisations most-specialised first and calls the first whose hints the arguments
satisfy. It exports, for out name ``N``:

- ``N(args..., int algo_id)`` (CUDA: ``N(CUstream, args..., int algo_id)``, HIP: ``N(hipStream_t, ...)``): the
  chosen algorithm;
- ``N_default(args...)``: algorithm 0; ``N_get_num_algos()``: how many there are;
- CUDA and HIP: ``load_N()`` / ``unload_N()`` over every specialisation.

No specialisation matching returns ``CUDA_ERROR_INVALID_VALUE`` (CUDA), ``hipErrorInvalidValue`` (HIP) or -1
(CPU), as does a bad ``algo_id``. The specialisations of one name share a target and architecture (a code object
loads on one only), and one dispatcher serves one GPU runtime: CUDA and HIP headers are never linked together.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from . import hip_c
from .spec import AOTError


@dataclass(frozen=True)
class _Runtime:
    """How one target's dispatchers look in C: the result type, its success and failure values, the stream
    parameter launches take first (None on the CPU) and the include that declares them."""
    ret: str
    ok: str
    fail: str
    stream: str | None
    include: str


_RUNTIMES = {"cpu": _Runtime("int32_t", "0", "-1", None, ""),
             "cuda": _Runtime("CUresult", "CUDA_SUCCESS", "CUDA_ERROR_INVALID_VALUE", "CUstream",
                              "#include <cuda.h>\n"),
             "hip": _Runtime("hipError_t", "hipSuccess", "hipErrorInvalidValue", "hipStream_t", hip_c.INCLUDE)}

_RECORD = re.compile(r"^// tilec-aot (\{.*\})\s*$", re.M)


def read_header(path: str) -> dict:
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise AOTError(f"cannot read {path}: {e.strerror}") from None
    m = _RECORD.search(text)
    if not m:
        raise AOTError(f"{path} is not a header written by python -m tilec.tools.compile")
    try:
        rec = json.loads(m.group(1))
    except json.JSONDecodeError:
        raise AOTError(f"{path}: its tilec-aot record is damaged") from None
    if rec.get("target") not in _RUNTIMES:
        raise AOTError(f"{path}: unknown target {rec.get('target')!r} in its tilec-aot record")
    rec["header"] = os.path.basename(path)
    return rec


def _where(r: dict) -> str:
    return r["target"] + (f":{r['arch']}" if r.get("arch") is not None else "")


def group(records: list) -> dict:
    """name -> its records; every specialisation of a name must take the same C parameters on one target and
    architecture, and CUDA and HIP specialisations never meet in one dispatcher."""
    gpu = {}
    for r in records:
        if _RUNTIMES[r["target"]].stream is not None:
            gpu.setdefault(r["target"], r)
    if len(gpu) > 1:
        a, b = gpu.values()
        raise AOTError(f"{a['header']} is for {_where(a)} and {b['header']} for {_where(b)}: CUDA and HIP kernels "
                       "cannot share a dispatcher (link each target's headers separately)")
    out: dict = {}
    for r in records:
        out.setdefault(r["name"], []).append(r)
    for name, rs in out.items():
        first = rs[0]
        shape = [(p["name"], p["ctype"]) for p in first["params"]]
        for r in rs[1:]:
            if _where(r) != _where(first):
                raise AOTError(f"{name}: {r['header']} is for {_where(r)}, {first['header']} for {_where(first)}")
            if [(p["name"], p["ctype"]) for p in r["params"]] != shape:
                raise AOTError(f"{name}: {r['header']} and {first['header']} take different parameters")
        funcs = [r["func"] for r in rs]
        if len(set(funcs)) != len(funcs):
            raise AOTError(f"{name}: the same specialisation is given twice")
    return out


def _condition(p: dict, int_ptr: bool) -> str | None:
    """The C test of ``p``'s hint; ``int_ptr``: pointers are integers (CUdeviceptr), not ``void *``."""
    if p["hint"] == 16:
        if p["kind"] == "ptr":
            return f"((uintptr_t){p['name']} % 16 == 0)" if not int_ptr else f"({p['name']} % 16 == 0)"
        return f"({p['name']} % 16 == 0)"
    if p["hint"] == 1:
        return f"({p['name']} == 1)"
    return None


def _algos(rs: list) -> list:
    algos: dict = {}
    for r in rs:
        algos.setdefault(r["algo"], []).append(r)
    return [sorted(v, key=lambda r: -sum(p["hint"] is not None for p in r["params"])) for v in algos.values()]


def _one(name: str, rs: list) -> tuple[list, list]:
    """(declarations, definitions) of the dispatcher for ``name``."""
    rt = _RUNTIMES[rs[0]["target"]]
    gpu, int_ptr = rt.stream is not None, rs[0]["target"] == "cuda"
    params = ", ".join(f"{p['ctype']} {p['name']}" for p in rs[0]["params"])
    names = ", ".join(p["name"] for p in rs[0]["params"])
    ret, fail = rt.ret, rt.fail
    lead, lead_args = (f"{rt.stream} stream", "stream") if gpu else ("", "")
    full = ", ".join(x for x in (lead, params) if x)
    call_args = ", ".join(x for x in (lead_args, names) if x)
    algos = _algos(rs)
    decls = [f"/* {name}: {len(rs)} specialisation(s) in {len(algos)} algorithm(s) */",
             f"{ret} {name}({full + ', ' if full else ''}int algo_id);",
             f"{ret} {name}_default({full or 'void'});", f"int {name}_get_num_algos(void);"]
    if gpu:
        decls += [f"{ret} load_{name}(void);", f"{ret} unload_{name}(void);"]
    body = []
    for i, algo in enumerate(algos):
        body.append(f"/* {name} algorithm {i}: {algo[0]['algo']} */")
        body.append(f"static {ret} {name}_algo{i}({full or 'void'}) {{")
        conds = []
        for r in algo:
            conds = [c for c in (_condition(p, int_ptr) for p in r["params"]) if c]
            call = f"return {r['func']}({call_args});"
            body.append(f"  if ({' && '.join(conds)}) {call}" if conds else f"  {call}")
            if not conds:
                break  # the unconditional one catches everything after it
        body.append(f"  return {fail};\n}}\n" if conds else "}\n")
    body.append(f"int {name}_get_num_algos(void) {{ return {len(algos)}; }}\n")
    body.append(f"{ret} {name}({full + ', ' if full else ''}int algo_id) {{")
    body.append("  switch (algo_id) {")
    body += [f"  case {i}: return {name}_algo{i}({call_args});" for i in range(len(algos))]
    body.append(f"  default: return {fail};\n  }}\n}}\n")
    body.append(f"{ret} {name}_default({full or 'void'}) {{ return {name}({call_args}{', ' if call_args else ''}0); }}\n")
    if gpu:
        body.append(f"{ret} load_{name}(void) {{\n  {ret} err;")
        body += [f"  if ((err = load_{r['func']}()) != {rt.ok}) return err;" for r in rs]
        body.append(f"  return {rt.ok};\n}}\n")
        body.append(f"{ret} unload_{name}(void) {{\n  {ret} err = {rt.ok}, e;")
        body += [f"  if ((e = unload_{r['func']}()) != {rt.ok}) err = e;" for r in rs]
        body.append("  return err;\n}\n")
    return decls, body


def write(groups: dict, out_name: str) -> tuple[str, str]:
    """(header, source) of the dispatchers for every out name in ``groups``, named ``out_name``.h/.c."""
    includes = "".join(sorted({_RUNTIMES[rs[0]["target"]].include for rs in groups.values()}))
    decls, body = [], [f"/* generated by python -m tilec.tools.link; see {out_name}.h */", f'#include "{out_name}.h"']
    body += [f'#include "{r["header"]}"' for rs in groups.values() for r in rs]
    body.append("")
    for name, rs in groups.items():
        d, b = _one(name, rs)
        decls += d
        body += b
    header = (f"/* dispatchers over tilec AOT kernels: {', '.join(groups)}; written by python -m tilec.tools.link */"
              f"\n#pragma once\n{includes}#include <stdbool.h>\n#include <stdint.h>\n\n"
              "#ifdef __cplusplus\nextern \"C\" {\n#endif\n" + "\n".join(decls) +
              "\n#ifdef __cplusplus\n}\n#endif\n")
    return header, "\n".join(body)
