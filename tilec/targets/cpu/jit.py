"""In-process JIT: an MCJIT engine per loaded kernel, built from the optimised LLVM IR text kept in
``asm["llir"]`` (so a kernel loads from the disk cache alone). Engines live as long as their launchers."""
from __future__ import annotations

import llvmlite.binding as llvm

from ...codegen import driver
from ...errors import BackendError
from . import runtime

_symbols_added = False


def _add_symbols():
    global _symbols_added
    if not _symbols_added:
        for name, addr in runtime.SYMBOLS.items():
            llvm.add_symbol(name, addr)
        _symbols_added = True


class Engine:
    def __init__(self, llir: str, symbol: str, *others: str, opt: int = 3):
        driver.init()
        _add_symbols()
        tm = driver.new_host_target_machine(opt)
        mod = driver.parse(llir, "LLVM IR (cached)")
        try:
            self.ee = llvm.create_mcjit_compiler(mod, tm)
            self.ee.finalize_object()
            self.address = self.ee.get_function_address(symbol)
        except RuntimeError as e:
            raise BackendError(f"JIT failed: {e}") from None
        self.addresses = [self.ee.get_function_address(o) for o in others]
        for name, a in zip((symbol,) + others, [self.address] + self.addresses):
            if not a:
                raise BackendError(f"JIT: symbol {name} not found")
