"""The dispatcher ``python -m tilec.tools.link`` writes over AOT specialisations of one kernel (one out name).

Specialisations that differ only in their runtime hints (``:16`` divisible or 16-byte aligned, ``:1`` equal to
one) form one algorithm; the algorithms are the distinct constexpr values and launch options. For each algorithm
the dispatcher tries its specialisations most-specialised first and calls the first whose hints the arguments
satisfy. It exports, for out name ``N``:

- ``N(args..., int algo_id)`` (CUDA: ``N(CUstream, args..., int algo_id)``): the chosen algorithm;
- ``N_default(args...)``: algorithm 0; ``N_get_num_algos()``: how many there are;
- CUDA only: ``load_N()`` / ``unload_N()`` over every specialisation.

No specialisation matching returns ``CUDA_ERROR_INVALID_VALUE`` (CUDA) or -1 (CPU), as does a bad ``algo_id``.
"""
from __future__ import annotations

import json
import os
import re

from .spec import AOTError

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
    rec["header"] = os.path.basename(path)
    return rec


def group(records: list) -> dict:
    """name -> its records; every specialisation of a name must take the same C parameters on one target."""
    out: dict = {}
    for r in records:
        out.setdefault(r["name"], []).append(r)
    for name, rs in out.items():
        first = rs[0]
        shape = [(p["name"], p["ctype"]) for p in first["params"]]
        for r in rs[1:]:
            if r["target"] != first["target"]:
                raise AOTError(f"{name}: {r['header']} is for {r['target']}, {first['header']} for {first['target']}")
            if [(p["name"], p["ctype"]) for p in r["params"]] != shape:
                raise AOTError(f"{name}: {r['header']} and {first['header']} take different parameters")
        funcs = [r["func"] for r in rs]
        if len(set(funcs)) != len(funcs):
            raise AOTError(f"{name}: the same specialisation is given twice")
    return out


def _condition(p: dict, cuda: bool) -> str | None:
    if p["hint"] == 16:
        if p["kind"] == "ptr":
            return f"((uintptr_t){p['name']} % 16 == 0)" if not cuda else f"({p['name']} % 16 == 0)"
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
    cuda = rs[0]["target"] == "cuda"
    params = ", ".join(f"{p['ctype']} {p['name']}" for p in rs[0]["params"])
    names = ", ".join(p["name"] for p in rs[0]["params"])
    ret, fail = ("CUresult", "CUDA_ERROR_INVALID_VALUE") if cuda else ("int32_t", "-1")
    lead, lead_args = ("CUstream stream", "stream") if cuda else ("", "")
    full = ", ".join(x for x in (lead, params) if x)
    call_args = ", ".join(x for x in (lead_args, names) if x)
    algos = _algos(rs)
    decls = [f"/* {name}: {len(rs)} specialisation(s) in {len(algos)} algorithm(s) */",
             f"{ret} {name}({full + ', ' if full else ''}int algo_id);",
             f"{ret} {name}_default({full or 'void'});", f"int {name}_get_num_algos(void);"]
    if cuda:
        decls += [f"CUresult load_{name}(void);", f"CUresult unload_{name}(void);"]
    body = []
    for i, algo in enumerate(algos):
        body.append(f"/* {name} algorithm {i}: {algo[0]['algo']} */")
        body.append(f"static {ret} {name}_algo{i}({full or 'void'}) {{")
        conds = []
        for r in algo:
            conds = [c for c in (_condition(p, cuda) for p in r["params"]) if c]
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
    if cuda:
        body.append(f"CUresult load_{name}(void) {{\n  CUresult err;")
        body += [f"  if ((err = load_{r['func']}()) != CUDA_SUCCESS) return err;" for r in rs]
        body.append("  return CUDA_SUCCESS;\n}\n")
        body.append(f"CUresult unload_{name}(void) {{\n  CUresult err = CUDA_SUCCESS, e;")
        body += [f"  if ((e = unload_{r['func']}()) != CUDA_SUCCESS) err = e;" for r in rs]
        body.append("  return err;\n}\n")
    return decls, body


def write(groups: dict, out_name: str) -> tuple[str, str]:
    """(header, source) of the dispatchers for every out name in ``groups``, named ``out_name``.h/.c."""
    cuda = any(rs[0]["target"] == "cuda" for rs in groups.values())
    decls, body = [], [f"/* generated by python -m tilec.tools.link; see {out_name}.h */", f'#include "{out_name}.h"']
    body += [f'#include "{r["header"]}"' for rs in groups.values() for r in rs]
    body.append("")
    for name, rs in groups.items():
        d, b = _one(name, rs)
        decls += d
        body += b
    inc = "#include <cuda.h>\n" if cuda else ""
    header = (f"/* dispatchers over tilec AOT kernels: {', '.join(groups)}; written by python -m tilec.tools.link */"
              f"\n#pragma once\n{inc}#include <stdbool.h>\n#include <stdint.h>\n\n"
              "#ifdef __cplusplus\nextern \"C\" {\n#endif\n" + "\n".join(decls) +
              "\n#ifdef __cplusplus\n}\n#endif\n")
    return header, "\n".join(body)
