"""AMD's side of the GPU lowering contract (:class:`tilec.gpu.target.GpuTarget`): AMDGPU work-item ids,
barriers, ``ds_bpermute`` shuffles, plain (branch-predicated) vector global accesses, the math library and
traps. Matrix cores are not used yet: the backend runs accelerate-dot with architecture 0, so every dot stays
on the FMA path and :meth:`GpuTarget.lower_dot` is never asked for.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as intrinsic
from ...errors import BackendError
from ...gpu.lowering.types import I32, VOID
from ...gpu.target import GpuTarget
from . import amdgpu, math as amd_math
from .arch import Arch, parse_arch

TRIPLE = "amdgcn-amd-amdhsa"
DATA_LAYOUT = ("e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-"
               "p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-"
               "v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9")
#: code object version 5 (ELF ABI version 3): LLVM 22 defaults to 6, which fewer ROCm releases load
CODE_OBJECT_VERSION = 500


class HipTarget(GpuTarget):
    name = "HIP"
    triple = TRIPLE
    data_layout = DATA_LAYOUT
    kernel_calling_convention = "amdgpu_kernel"
    shared_address_space = 3
    math = amd_math

    def __init__(self, arch: Arch | str = "gfx942", warp_size: int | None = None):
        self.arch = arch if isinstance(arch, Arch) else parse_arch(arch, warp_size)
        self.warp_size = self.arch.warp_size

    def kernel_attributes(self, num_threads: int, func=None) -> dict:
        # the register allocator budgets for the real work-group size (its default assumes up to 1024)
        return {"amdgpu-flat-work-group-size": f"1,{num_threads}"}

    def finish_module(self, module) -> None:
        flag = module.add_metadata([ir.Constant(I32, 1), "amdhsa_code_object_version",
                                    ir.Constant(I32, CODE_OBJECT_VERSION)])
        module.add_named_metadata("llvm.module.flags", flag)

    def thread_id(self, b):
        return amdgpu.workitem_id(b)

    def block_id(self, b, axis: int):
        return amdgpu.workgroup_id(b, axis)

    def num_blocks(self, b, axis: int):
        return amdgpu.num_workgroups(b, axis)

    def barrier(self, b):
        amdgpu.barrier(b)

    def shuffle_xor(self, b, value, lane_mask: int):
        return amdgpu.shuffle_xor(b, value, lane_mask, self.warp_size)

    def load_global(self, b, ptr, mem_type, n, pred=None, others=None, cache=""):
        return amdgpu.vector_load(b, ptr, mem_type, n, pred, others)

    def store_global(self, b, ptr, values, pred=None, cache=""):
        amdgpu.vector_store(b, ptr, values, pred)

    def trap(self, b):
        intrinsic(b, "llvm.trap", VOID, [])

    def printf(self, lowering, fmt, args, guard):
        raise BackendError("device printf (tl.device_print / print) is not supported by the HIP backend yet")
