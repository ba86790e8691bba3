"""``-t hip:GFX``: C source and header over the plain C HIP runtime API, with the kernel's linked AMDGPU code
object (hsaco) embedded.

``load_<func>()`` loads the code object on the current device (``hipModuleLoadData``: the image carries its own
length in its ELF headers); ``unload_<func>()`` drops it; ``<func>(stream, args...)`` loads on first use, computes
the grid from the ``-g`` expressions and launches ``num_warps * wavefront size`` threads per block (64-lane
waves on gfx9, 32 on gfx10-12) through ``hipModuleLaunchKernel`` with a ``kernelParams`` array, which the
runtime packs by the code object's own argument metadata. The kernel's shared memory is dynamic LDS (an
external LDS symbol), passed as the launch's shared-memory bytes exactly as tilec's launcher does; AMD needs no
opt-in attribute for it, so nothing is set at load. Build with ``hipcc`` or any C compiler with
``-I$ROCM_PATH/include``, link ``-lamdhip64``.
"""
from __future__ import annotations

from . import driver_c
from .driver_c import DriverApi
from .spec import KernelSpec
from ...targets.hip.launcher import kernarg_layout

#: the runtime header, for AMD: a plain C compiler defines neither platform macro, which the header requires
INCLUDE = """#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_NVIDIA__)
#define __HIP_PLATFORM_AMD__ /* the embedded code object is for AMD GPUs */
#endif
#include <hip/hip_runtime_api.h>
"""


def arch_name(backend) -> str:
    """The architecture as ROCm names it (``gfx942``, ``gfx90a:sramecc+:xnack-``), which ``-t hip:`` reads back."""
    arch = backend.arch
    flags = [f[1:] + f[0] for f in arch.features.split(",") if f and f != "+wavefrontsize64"]
    return ":".join([arch.name, *flags])


def image_of(compiled) -> bytes:
    """The linked code object, checked against the parameters the C side passes: one explicit kernel argument
    per runtime parameter, of its kind and size (``kernelParams`` is read by that metadata)."""
    image = bytes(compiled.asm["hsaco"])
    kernarg_layout(image, compiled.metadata["name"], compiled.metadata["param_kinds"])
    return image


def threads_per_block(compiled) -> int:
    return int(compiled.metadata["num_warps"]) * int(compiled.metadata["warp_size"])


HIP = DriverApi(INCLUDE, "hipError_t", "hipSuccess", "hipModule_t", "hipFunction_t", "hipStream_t",
                "hipModuleLoadData", "hipModuleGetFunction", "hipModuleUnload", "hipModuleLaunchKernel")


def header(spec: KernelSpec, record: str, compiled) -> str:
    return driver_c.header(spec, record, HIP, f"hsaco, wave{compiled.metadata['warp_size']}")


def source(spec: KernelSpec, compiled, image: bytes) -> str:
    md = compiled.metadata
    shared = int(md.get("shared", 0) or 0)
    return driver_c.source(spec, compiled, image, HIP, threads_per_block(compiled), f"hsaco for {spec.arch}",
                           launch_note=f"{md['num_warps']} waves of {md['warp_size']} lanes; {shared} bytes of "
                                       f"dynamic LDS")
