"""LLVM IR text -> a GPU's code through llvmlite: the steps every GPU target takes alike.

The IR is parsed and verified (LLVM rejecting it is a tilec bug), a target machine is made for the GPU (a vendor
gives its triple, processor and features), LLVM's default O<n> pipeline runs for it, and an emission that fails is
a BackendError naming the target. What a vendor then emits from the module (assembly text, objects) stays with the
vendor.
"""
from __future__ import annotations

import contextlib
import functools

from ..errors import BackendError


@functools.cache
def _init() -> bool:
    import llvmlite.binding as llvm
    from ..codegen.driver import no_fatal_parse  # here, as llvmlite.binding: the driver loads LLVM on import
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    no_fatal_parse()
    return True


def target_machine(triple: str, cpu: str, features: str, opt: int = 3):
    import llvmlite.binding as llvm
    _init()
    return llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=opt)


def parse(llir: str):
    """A fresh, verified module of ``llir``."""
    import llvmlite.binding as llvm
    _init()
    try:
        mod = llvm.parse_assembly(llir)
        mod.verify()
    except RuntimeError as e:
        raise BackendError(f"LLVM rejected the generated IR (a tilec bug): {e}") from None
    return mod


def optimise(mod, tm, opt: int) -> None:
    """LLVM's default O``opt`` module pipeline for ``tm`` over ``mod`` (nothing at 0)."""
    import llvmlite.binding as llvm
    if opt:
        pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=opt))
        pb.getModulePassManager().run(mod, pb)


@contextlib.contextmanager
def emitting(target: str):
    """LLVM's code generation errors inside the block become a BackendError of ``target`` (LLVM's name for it)."""
    try:
        yield
    except RuntimeError as e:
        raise BackendError(f"{target} code generation failed: {e}") from None
