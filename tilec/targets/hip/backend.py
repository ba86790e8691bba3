"""The AMD backend: options (``HIPOptions``, ``options.py``), the stages after the tir passes, and loading for launch.

Stages (each ``fn(artifact, metadata)``): ``gir`` (the module after the GPU passes), ``llir`` (AMDGPU LLVM IR
text), ``amdgcn`` (assembly, headed by the resource counts) and ``hsaco`` (the linked code object, bytes). None
needs ROCm. accelerate-dot asks :meth:`HipTarget.dot_layouts` which dots go to matrix cores (MFMA on gfx908/
gfx90a/gfx942/gfx950, WMMA on gfx11 wave32); the rest stay on the FMA path.
"""
from __future__ import annotations

from ...elf import amdgpu_metadata, link_shared, read_elf
from ...errors import BackendError
from ..arguments import device_of
from ..params import param_kind
from ...gpu.lowering import lower_module_text
from ...gpu.passes.verify_gir import verify_gir
from ...gpu.pipeline import FRONTEND_OPTIONS, gpu_passes
from ...gpu.shared_limit import check_shared_memory
from . import assembler, codegen, driver, launcher, resources
from .arch import parse_arch
from .options import HIPOptions
from .target import HipTarget

#: what ``Target("hip")`` compiles for when no architecture is named and no AMD GPU is present
DEFAULT_ARCH = "gfx942"


class HIPBackend:
    name = "hip"
    frontend_options = FRONTEND_OPTIONS
    #: option defaults for passes run one by one (tilec-opt -p): accelerate-dot alone cannot reach this target's
    #: ``dot_layouts``, so it keeps dots on the FMA path rather than choose NVIDIA layouts
    pass_defaults = {"arch": HipTarget.mma_arch}

    def __init__(self, target):
        self.target = target
        arch = target.arch if target.arch is not None else (driver.current_arch() or DEFAULT_ARCH)
        self.arch = parse_arch(arch, target.warp_size)
        self.warp_size = self.arch.warp_size

    # -- options ---------------------------------------------------------------------------------------
    def parse_options(self, options: dict) -> HIPOptions:
        """The compile's options (``hip/options.py``), for this backend's processor and wavefront size."""
        arch = self.arch.name if not self.arch.features else f"{self.arch.name}:{self.arch.features}"
        return HIPOptions.parse(options, arch=arch, warp_size=self.warp_size)

    # -- passes and stages ---------------------------------------------------------------------------------
    def passes(self, options: HIPOptions):
        return gpu_passes(self.gpu_target(options), options)

    def gpu_target(self, options: HIPOptions) -> HipTarget:
        return HipTarget(self.arch, nonk_dim=options.matrix_instr_nonkdim)

    verifier = staticmethod(verify_gir)

    def stages(self, options: HIPOptions):
        state = {}  # this compile's LLVM IR: the object is emitted from it, not from the assembly

        def llir(m, md):
            state["llir"] = self.make_llir(m, md, options)
            return state["llir"]
        return [("gir", lambda m, md: self.make_gir(m, md, options)),
                ("llir", llir),
                ("amdgcn", lambda s, md: self.make_amdgcn(s, md, options, state)),
                ("hsaco", lambda s, md: self.make_hsaco(state["llir"], md, options, s, state.get("object")))]

    def make_gir(self, module, metadata, options):
        kernel = next((f for f in module.funcs if f.attrs.get("kernel")), None)
        metadata["shared"] = int(kernel.attrs.get("shared", 0)) if kernel is not None else 0
        metadata["num_warps"] = options.num_warps
        metadata["warp_size"] = self.warp_size
        metadata["arch"] = self.arch.name
        if kernel is not None:
            check_shared_memory(kernel, metadata, self.gpu_target(options))
            metadata["param_kinds"] = [param_kind(t) for t in kernel.function_type.inputs]
        return module

    def make_llir(self, module, metadata, options):
        return lower_module_text(module, options, self.gpu_target(options))

    def make_amdgcn(self, llir, metadata, options, state=None):
        """The assembly; ``state`` (this compile's), when given, also gets the object LLVM emitted alongside
        (``codegen.llir_to_amdgcn_and_object``: one optimisation for both)."""
        if state is None or assembler.has_inline_asm(llir):
            text = codegen.llir_to_amdgcn(llir, self.arch)
        else:
            text, state["object"] = codegen.llir_to_amdgcn_and_object(llir, self.arch)
        res = resources.from_assembly(text)
        return resources.comment_block(metadata.get("name", "kernel"), res, self.arch) + text

    def make_hsaco(self, llir, metadata, options, amdgcn=None, obj=None):
        if obj is None and assembler.has_inline_asm(llir):  # LLVM here cannot assemble it (assembler.py)
            obj = assembler.assemble(amdgcn if amdgcn is not None else codegen.llir_to_amdgcn(llir, self.arch),
                                     self.arch)
        elif obj is None:
            obj = codegen.llir_to_object(llir, self.arch)
        so = link_shared(obj)
        kernels = amdgpu_metadata(read_elf(so)).get("amdhsa.kernels", [])
        name = metadata.get("name")
        entry = next((k for k in kernels if k.get(".name") == name), None)
        if entry is None:
            raise BackendError(f"the AMDGPU code object has no kernel {name!r} "
                               f"(found: {[k.get('.name') for k in kernels]})")
        res = resources.from_metadata(entry)
        metadata.update(res)
        metadata.update(resources.common_figures(res, self.arch))
        return so

    # -- launch ------------------------------------------------------------------------------------------
    def load(self, asm: dict, metadata: dict):
        return launcher.make_launcher(asm, metadata)

    @staticmethod
    def convert_arg(value):
        """Arguments go to the launcher unchanged: it reads pointers from tensors/arrays per launch."""
        return value

    @staticmethod
    def arg_kind(value) -> str | None:
        """'hip' for values in AMD GPU memory (torch ROCm tensors, DLPack ROCm tensors); None otherwise."""
        return "hip" if device_of(value) == "hip" else None
