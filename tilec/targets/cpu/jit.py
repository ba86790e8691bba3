"""In-process JIT: MCJIT engines built from optimised LLVM IR text or from an object file compiled earlier in
this process. Engines stay alive as long as their launchers."""
from __future__ import annotations

import hashlib

import llvmlite.binding as llvm

from ...codegen import driver
from ...errors import BackendError
from . import runtime

_OBJECTS: dict = {}   # sha256(llir) -> object file bytes made by the asm stage of this process
_symbols_added = False


def _add_symbols():
    global _symbols_added
    if not _symbols_added:
        for name, addr in runtime.SYMBOLS.items():
            llvm.add_symbol(name, addr)
        _symbols_added = True


def key(llir: str) -> str:
    return hashlib.sha256(llir.encode()).hexdigest()


def remember_object(llir: str, obj: bytes):
    _OBJECTS[key(llir)] = obj


class Engine:
    def __init__(self, llir: str, symbol: str):
        driver.init()
        _add_symbols()
        tm = driver.host_target_machine()
        obj = _OBJECTS.get(key(llir))
        try:
            if obj is not None:
                self.ee = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
                self.ee.add_object_file(llvm.ObjectFileRef.from_data(obj))
            else:
                mod = driver.parse(llir, "LLVM IR (cached)")
                self.ee = llvm.create_mcjit_compiler(mod, tm)
            self.ee.finalize_object()
            self.address = self.ee.get_function_address(symbol)
        except RuntimeError as e:
            raise BackendError(f"JIT failed: {e}") from None
        if not self.address:
            raise BackendError(f"JIT: symbol {symbol} not found")
