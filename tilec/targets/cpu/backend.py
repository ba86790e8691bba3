"""The CPU backend: stages tir -> plan (the lowering's decisions and its LLVM module, see ``plan.py``) -> llir (optimised LLVM IR text) ->
asm (host assembly), and ``load``, which JIT-compiles ``asm["llir"]`` and returns the launcher."""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen import driver
from ...codegen import llvm_types as LT
from ...errors import BackendError
from ..params import param_kind
from .lower import Lowering
from .options import CPUOptions
from .plan import LoweringPlan, render
from .resources import resources, scratch_per_program
from .wrapper import build_run, build_worker
from ...passes.expand_descriptors import ExpandDescriptors
from ...passes.manager import cleanup_passes
from .launcher import Launcher


class CPUBackend:
    name = "cpu"

    def __init__(self, target=None):
        self.target = target

    def parse_options(self, options: dict) -> CPUOptions:
        """The compile's options (``cpu/options.py``); the machine compiled for is part of them (and so of the
        cache key)."""
        return CPUOptions.parse(options, host=driver.host_identity())

    def arg_kind(self, value) -> str:
        return "cpu"

    def convert_arg(self, value):
        return value

    def passes(self, options):
        """``expand-descriptors`` and the cleanups after it: otherwise the CPU lowering works on tir as the tir
        pipeline leaves it."""
        return [ExpandDescriptors()] + cleanup_passes()

    def stages(self, options: CPUOptions):
        level = options.opt_level
        return [("plan", make_plan), ("llir", lambda plan, md: make_llir(plan, md, level)),
                ("asm", lambda llir, md: make_asm(llir, md))]

    def load(self, asm: dict, metadata: dict):
        return Launcher(asm["llir"], metadata, metadata.get("name", "kernel"))


def kernel_of(module):
    ks = [f for f in module.funcs if f.attrs.get("kernel")]
    if len(ks) != 1:
        raise BackendError(f"expected one kernel function, found {len(ks)}")
    return ks[0]


def build_ir(module):
    """The unoptimised LLVM IR module for the kernel in ``module`` and the launch metadata."""
    f = kernel_of(module)
    m = ir.Module(name=f.sym_name)
    L = Lowering(f, m)
    try:
        kernel = L.build()
        worker = build_worker(m, kernel, [LT.scalar_type(a.type) for a in f.args], L.debug, f.loc)
        build_run(m, worker, L.debug, f.loc)
        str(m)  # llvmlite checks operands when printing
    except (TypeError, ValueError, AssertionError, AttributeError, KeyError, IndexError) as e:
        raise BackendError(f"CPU lowering of '{f.sym_name}' failed: {type(e).__name__}: {e}") from e
    meta = {"param_kinds": [param_kind(a.type) for a in f.args], "scratch_size": L.scratch_size,
            "shared": scratch_per_program(L.scratch_size)}
    return m, meta, L.notes


def make_plan(module, metadata):
    """Lower the tir kernel; the artifact is the annotated plan carrying the unoptimised LLVM module."""
    m, meta, notes = build_ir(module)
    metadata.update(meta)
    return LoweringPlan(render(module, notes, meta["scratch_size"]), m)


def make_llir(plan, metadata, level=CPUOptions.opt_level):
    if not isinstance(plan, LoweringPlan):  # given a tir module directly
        plan = make_plan(plan, metadata)
    m = plan.llvm_module
    tm = driver.host_target_machine()
    driver.prepare(m, tm)
    text = str(m)
    mod = driver.parse(text)
    driver.optimize(mod, tm, level)
    metadata["cpu"] = tm.triple
    return str(mod)


def make_asm(llir, metadata):
    tm = driver.host_target_machine()
    asm = tm.emit_assembly(driver.parse(llir, "optimised LLVM IR"))
    metadata.update(resources(asm))
    return asm
