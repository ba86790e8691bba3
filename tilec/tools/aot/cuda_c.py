"""``-t cuda:ARCH``: C source and header over the CUDA driver API, with the kernel's cubin embedded (or its PTX
when ptxas was not on PATH, which the driver then compiles when the module loads).

``load_<func>()`` loads the module into the current context and opts in to more than 48 KB of shared memory when
the kernel needs it; ``unload_<func>()`` drops it; ``<func>(stream, args...)`` loads on first use, computes the
grid from the ``-g`` expressions and launches ``32 * num_warps`` threads per block. Build with
``nvcc`` (or any C compiler with ``-I$CUDA_HOME/include``) and link ``-lcuda``.
"""
from __future__ import annotations

from . import driver_c
from .driver_c import DriverApi
from .spec import KernelSpec


def image_of(compiled) -> tuple[bytes, str]:
    """(the bytes to embed, "cubin" or "ptx")."""
    cubin = compiled.asm.get("cubin")
    if cubin:
        return bytes(cubin), "cubin"
    return compiled.asm["ptx"].encode() + b"\0", "ptx"


CUDA = DriverApi("#include <cuda.h>\n", "CUresult", "CUDA_SUCCESS", "CUmodule", "CUfunction", "CUstream",
                 "cuModuleLoadData", "cuModuleGetFunction", "cuModuleUnload", "cuLaunchKernel")

#: more than 48 KB of shared memory needs the kernel's opt-in
_OPT_IN = """  if (err == CUDA_SUCCESS && {shared} > 49152)
    err = cuFuncSetAttribute({f}_function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, {shared});"""


def header(spec: KernelSpec, record: str, kind: str) -> str:
    return driver_c.header(spec, record, CUDA, kind)


def source(spec: KernelSpec, compiled, image: bytes, kind: str) -> str:
    threads = 32 * int(compiled.metadata.get("num_warps", spec.num_warps))
    return driver_c.source(spec, compiled, image, CUDA, threads, kind, after_get=_OPT_IN)
