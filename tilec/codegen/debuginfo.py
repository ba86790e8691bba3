"""LLVM debug locations from the IR's source locations, so that PTX carries ``.loc`` lines (profilers map
instructions back to the kernel's Python lines) and CPU code has DWARF line tables.

Line tables only (``emissionKind: LineTablesOnly``): no variables or types, which keeps the JIT happy and costs
little. GPU code asks for ``DebugDirectivesOnly``: ``.file``/``.loc`` lines without DWARF sections, which ptxas
would take for ``-g`` and refuse in optimised code. A lowering makes one ``DebugInfo`` per LLVM module, a subprogram per function it emits
(``subprogram``), and points its builder at each op's location (``locate``) before lowering the op: everything
the builder emits for the op then carries that line. Ops from helpers in other files are scoped through a
``DILexicalBlockFile`` of their own file. ``TILEC_DEBUG_LINES=0`` turns it all off.
"""
from __future__ import annotations

import os

import llvmlite.ir as ir


def enabled() -> bool:
    return os.environ.get("TILEC_DEBUG_LINES", "1") not in ("0", "false", "False")


class DebugInfo:
    def __init__(self, module: ir.Module, loc, dwarf_version: int | None = 4, kind: str = "LineTablesOnly"):
        self.m = module
        self.files: dict = {}
        self.scopes: dict = {}
        self.locs: dict = {}
        i32 = ir.IntType(32)
        module.add_named_metadata("llvm.module.flags", module.add_metadata([i32(2), "Debug Info Version", i32(3)]))
        if dwarf_version:
            module.add_named_metadata("llvm.module.flags", module.add_metadata([i32(7), "Dwarf Version",
                                                                                 i32(dwarf_version)]))
        self.main_file = self.file(loc.file if loc is not None else "<kernel>")
        self.cu = module.add_debug_info("DICompileUnit", {
            "language": ir.DIToken("DW_LANG_Python"), "file": self.main_file, "producer": "tilec",
            "runtimeVersion": 0, "isOptimized": True, "emissionKind": ir.DIToken(kind)}, is_distinct=True)
        module.add_named_metadata("llvm.dbg.cu", self.cu)
        self.type = module.add_debug_info("DISubroutineType", {"types": module.add_metadata([])})

    def file(self, path: str):
        f = self.files.get(path)
        if f is None:
            f = self.m.add_debug_info("DIFile", {"filename": os.path.basename(path),
                                                 "directory": os.path.dirname(path) or "."})
            self.files[path] = f
        return f

    def subprogram(self, fn: ir.Function, name: str, loc):
        """Attach a subprogram to ``fn`` (defined at ``loc``); returns it, the scope of ``location``."""
        line = loc.line if loc is not None else 0
        sp = self.m.add_debug_info("DISubprogram", {
            "name": name, "linkageName": fn.name, "scope": self.main_file, "file": self.main_file, "line": line,
            "type": self.type, "scopeLine": line, "unit": self.cu,
            "spFlags": ir.DIToken("DISPFlagDefinition | DISPFlagOptimized")}, is_distinct=True)
        fn.set_metadata("dbg", sp)
        return sp

    def location(self, sp, loc):
        """The DILocation of ``loc`` inside subprogram ``sp`` (None for ops without a location)."""
        if loc is None:
            return None
        key = (id(sp), loc.file, loc.line, loc.col)
        md = self.locs.get(key)
        if md is None:
            scope = sp
            if self.file(loc.file) is not self.main_file:
                scope = self.scopes.get((id(sp), loc.file))
                if scope is None:
                    scope = self.m.add_debug_info("DILexicalBlockFile", {
                        "scope": sp, "file": self.file(loc.file), "discriminator": 0})
                    self.scopes[(id(sp), loc.file)] = scope
            md = self.m.add_debug_info("DILocation", {"line": loc.line, "column": loc.col, "scope": scope})
            self.locs[key] = md
        return md

    def locate(self, builder: ir.IRBuilder, sp, loc):
        """Point ``builder`` at ``loc``; an op without one keeps the location before it, or gets line 0 of ``sp``
        when there is none yet (LLVM's "no line"): a call that may be inlined must carry a location in a function
        with debug information, or the module's debug information is broken."""
        md = self.location(sp, loc)
        if md is None and getattr(builder, "debug_metadata", None) is None:
            key = (id(sp), None, 0, 0)
            md = self.locs.get(key)
            if md is None:
                md = self.locs[key] = self.m.add_debug_info("DILocation", {"line": 0, "column": 0, "scope": sp})
        if md is not None:
            builder.debug_metadata = md
