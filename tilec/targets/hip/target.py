"""AMD's side of the GPU lowering contract (:class:`tilec.gpu.target.GpuTarget`): AMDGPU work-item ids,
barriers, ``ds_bpermute`` shuffles, plain (branch-predicated) vector global accesses, the math library,
traps, and matrix cores: :meth:`dot_layouts` picks an MFMA/WMMA instruction the processor has (or none: FMA)
and :meth:`lower_dot` emits it.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as intrinsic
from ...errors import BackendError
from ...gpu.lowering.types import I32, VOID
from ...gpu.target import GpuTarget
from . import amdgpu, math as amd_math, matrix_dot, matrix_instructions
from ...gpu.passes.accelerate_dot import in_chain
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
    math = amd_math.LIBRARY

    def __init__(self, arch: Arch | str = "gfx942", warp_size: int | None = None, nonk_dim: int = 0):
        self.arch = arch if isinstance(arch, Arch) else parse_arch(arch, warp_size)
        self.warp_size = self.arch.warp_size
        self.nonk_dim = nonk_dim  # Triton's matrix_instr_nonkdim: 16 or 32 forces the MFMA tile, 0 chooses

    def shared_memory_limit(self):
        return self.arch.lds_bytes, f"{self.arch.name} LDS"

    def pipeline_shared_limit(self) -> int:
        return self.arch.lds_bytes  # operand rings are filled through registers, within the workgroup's LDS

    def dot_layouts(self, op, num_warps):
        instr = matrix_instructions.select(self.arch, op, self.nonk_dim)
        if instr is None:
            return None
        M, N = op.acc.type.shape
        rows_only = in_chain(op) and M // instr.m_dim >= num_warps
        return matrix_instructions.layouts(instr, M, N, num_warps, rows_only)

    def lower_dot(self, lowering, op):
        matrix_dot.lower(lowering, op, self.arch)

    def kernel_attributes(self, num_threads: int, func=None, options=None) -> dict:
        # the register allocator budgets for the real work-group size (its default assumes up to 1024)
        return {"amdgpu-flat-work-group-size": f"1,{num_threads}"}

    def finish_module(self, module) -> None:
        flag = module.add_metadata([ir.Constant(I32, 1), "amdhsa_code_object_version",
                                    ir.Constant(I32, CODE_OBJECT_VERSION)])
        module.add_named_metadata("llvm.module.flags", flag)

    # element values are per lane, so only vector registers hold them (a scalar register would need the value
    # uniform across the wave); 16-bit and narrower values take a whole 32-bit VGPR
    inline_asm_registers = {"v": "vector register (32 or 64 bits)"}

    def inline_asm_operand(self, code: str, bits: int):
        if code != "v" or bits > 64:
            return None
        return ir.IntType(32 if bits <= 32 else 64)

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

    def shuffle_idx(self, b, value, lane):
        return amdgpu.shuffle_idx(b, value, lane)

    def load_global(self, b, ptr, mem_type, n, pred=None, others=None, hints=None):
        return amdgpu.vector_load(b, ptr, mem_type, n, pred, others)

    def store_global(self, b, ptr, values, pred=None, hints=None):
        amdgpu.vector_store(b, ptr, values, pred)

    # Triton's scopes as AMDGPU's: a gpu atomic is coherent in the device's L2 (agent), a cta one only among its
    # work-group's waves; sys reaches the host and peer devices
    atomic_scopes = {"cta": "workgroup", "gpu": "agent", "sys": ""}

    def atomic_metadata(self, op, mem_type, scope):
        # Float atomics at device or work-group scope promise device memory (hipMalloc, torch): without that
        # promise LLVM must assume fine-grained host memory, where gfx11 (and gfx942 at system scope) have no
        # float atomics, and expands each into a compare-and-swap loop. System scope keeps the loop.
        if scope != "sys" and op.startswith("f"):
            return ("amdgpu.no.fine.grained.memory",)
        return ()

    def trap(self, b):
        intrinsic(b, "llvm.trap", VOID, [])

    def printf(self, lowering, fmt, args, guard):
        raise BackendError("device printf (tl.device_print / print) is not supported by the HIP backend yet")
