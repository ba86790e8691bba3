"""Which Python source line each line of a stage's text comes from.

- tir/gir (printed with locations): the trailing ``loc("file":line:col)``, which is cut from the shown text.
- LLVM IR: ``!dbg !N`` on an instruction, ``!N = !DILocation(line: L, ...)`` further down.
- PTX and host assembly: ``.loc FILE LINE COL`` directives; the instructions after one belong to its line.
Lines of other files (helpers) keep their line but name the file, so only the kernel's own file is linked.
"""
from __future__ import annotations

import os
import re

_LOC = re.compile(r'\s*loc\("((?:[^"\\]|\\.)*)":(\d+):(\d+)\)\s*$')
_DBG = re.compile(r"!dbg !(\d+)")
_DILOC = re.compile(r"^!(\d+) = !DILocation\(line: (\d+)(?:, column: \d+)?, scope: !(\d+)")
_DIFILE = re.compile(r'^!(\d+) = !DIFile\(filename: "([^"]*)", directory: "([^"]*)"\)')
_SCOPE_FILE = re.compile(r"^!(\d+) = (?:distinct )?!DI(?:Subprogram|LexicalBlockFile)\(.*?file: !(\d+)")
_DOTFILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,\s*\d+\s*,\s*\d+)?(?:\s+"([^"]*)")?')
_DOTLOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and os.path.normpath(a) == os.path.normpath(b)


def ir_lines(text: str, source: str | None):
    """[(shown text, source line or None)] for tir/gir printed with locations."""
    out = []
    for ln in text.splitlines():
        m = _LOC.search(ln)
        if m:
            out.append((ln[:m.start()], int(m.group(2)) if _same(m.group(1), source) else None))
        else:
            out.append((ln, None))
    return out


def llvm_lines(text: str, source: str | None):
    lines = text.splitlines()
    files, scope_file, locs = {}, {}, {}
    for ln in lines:
        if m := _DIFILE.match(ln):
            files[m.group(1)] = os.path.join(m.group(3), m.group(2))
        elif m := _SCOPE_FILE.match(ln):
            scope_file[m.group(1)] = m.group(2)
        elif m := _DILOC.match(ln):
            locs[m.group(1)] = (int(m.group(2)), m.group(3))
    out = []
    for ln in lines:
        line = None
        m = _DBG.search(ln)
        if m and m.group(1) in locs:
            n, scope = locs[m.group(1)]
            if _same(files.get(scope_file.get(scope)), source):
                line = n
        out.append((ln, line))
    return out


def asm_lines(text: str, source: str | None):
    """PTX or host assembly: each instruction takes the line of the ``.loc`` before it."""
    lines = text.splitlines()
    files = {}
    for ln in lines:
        if m := _DOTFILE.match(ln):
            files[m.group(1)] = os.path.join(m.group(2), m.group(3)) if m.group(3) else m.group(2)
    out, current = [], None
    for ln in lines:
        if m := _DOTLOC.match(ln):
            n = int(m.group(2))
            current = n if n and _same(files.get(m.group(1)), source) else None
            out.append((ln, current))
            continue
        s = ln.strip()
        is_code = s and not s.startswith(("//", ";", "#", ".")) and not s.endswith(":")
        out.append((ln, current if is_code else None))
    return out


def stage_lines(stage: str, text: str, source: str | None):
    if stage in ("llir",):
        return llvm_lines(text, source)
    if stage in ("ptx", "asm", "amdgcn"):
        return asm_lines(text, source)
    if stage in ("gir", "tir"):
        return ir_lines(text, source)
    return [(ln, None) for ln in text.splitlines()]
