"""NVIDIA's side of the GPU lowering contract (:class:`tilec.gpu.target.GpuTarget`): NVVM special registers,
barriers and shuffles, predicated vector global accesses in PTX, tensor-core dots, the math library, traps and
``vprintf``."""
from __future__ import annotations

import hashlib
from contextlib import nullcontext

import llvmlite.ir as ir

from ...codegen.intrinsics import call as intrinsic, declare
from ...gpu.lowering.types import I8, I32, VOID
from ...gpu.target import GpuTarget
from ...ir import ops as O
from . import atomics, copies, nvvm, nvvm_math, tma, wgmma
from .fp8_convert import encode_fp8
from .int_abs import int_abs
from .mma import mma_dot

#: shared memory a block may opt in to, per compute capability (CUDA programming guide, "Compute capabilities");
#: an architecture not listed takes the nearest one below it
MAX_SHARED = {70: 98304, 72: 98304, 75: 65536, 80: 166912, 86: 101376, 87: 166912, 89: 101376, 90: 232448,
              100: 232448, 120: 101376}
TRIPLE = "nvptx64-nvidia-cuda"
DATA_LAYOUT = "e-p3:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"


class CudaTarget(GpuTarget):
    name = "CUDA"
    triple = TRIPLE
    data_layout = DATA_LAYOUT
    warp_size = 32
    kernel_calling_convention = "ptx_kernel"
    shared_address_space = 3
    math = nvvm_math.LIBRARY

    async_copies = True  # cp.async (sm_80+)
    device_calls = True

    def __init__(self, arch: int):
        self.arch = arch
        self.mma_arch = arch  # mma.sync from sm_80, warpgroup units on sm_90
        self.gir_target = f"cuda:{arch}"

    def shared_memory_limit(self):
        known = [a for a in MAX_SHARED if a <= self.arch]
        return (MAX_SHARED[max(known)], f"sm_{self.arch} shared memory") if known else None

    def shared_for_two_blocks(self, num_warps: int) -> int:
        # an SM has 64K registers and a thread at most 255 (a warp's allocation: 256 x 32), so blocks of up to
        # 4 warps always fit twice; the SM's shared memory is the block limit plus the 1 KB each block reserves
        limit = self.shared_memory_limit()
        if limit is None or num_warps * 32 * 256 * 2 > 65536:
            return 0
        return (limit[0] - 1024) // 2

    def kernel_attributes(self, num_threads: int, func=None, options=None) -> dict:
        # ptxas budgets registers for the real block size
        attrs = {"nvvm.maxntid": str(num_threads)}
        maxnreg = options.maxnreg if options is not None else None
        if maxnreg is not None:  # Triton's launch option: ``.maxnreg N`` on the entry, never on device functions
            attrs["nvvm.maxnreg"] = str(maxnreg)
        # ptxas for sm_8x caps a .maxntid kernel at 32 registers unless told one resident block is enough: a
        # 128x128x64 matmul then spills ~5 KB instead of ~1 KB. Tensor-core kernels want the registers;
        # memory-bound kernels keep ptxas's occupancy-first choice (sm_90 already behaves this way).
        if self.arch < 90 and func is not None and any(isinstance(op, O.DotOp) for op in func.walk()):
            attrs["nvvm.minctasm"] = "1"
        return attrs

    # NVPTX's register classes for inline PTX: .b16/.b32/.b64 integers, .f32 and .f64 floats
    inline_asm_registers = {"h": "16-bit register", "r": "32-bit register", "l": "64-bit register",
                            "f": "f32 register", "d": "f64 register"}
    _ASM_INT = {"h": 16, "r": 32, "l": 64}

    def inline_asm_operand(self, code: str, bits: int):
        if code in self._ASM_INT:
            width = self._ASM_INT[code]
            return ir.IntType(width) if bits <= width else None
        if code == "f":
            return ir.FloatType() if bits == 32 else None
        if code == "d":
            return ir.DoubleType() if bits == 64 else None
        return None

    def encode_fp8(self, b, values, elem, rounding: str):
        return encode_fp8(b, values, elem, rounding, self.arch)

    def int_abs(self, b, x):
        return int_abs(b, x)  # int8/int16 through sad.s32: ptxas mis-widens abs.s16 (int_abs.py)

    def thread_id(self, b):
        return nvvm.sreg(b, "tid.x")

    def block_id(self, b, axis: int):
        return nvvm.sreg(b, "ctaid." + "xyz"[axis])

    def num_blocks(self, b, axis: int):
        return nvvm.sreg(b, "nctaid." + "xyz"[axis])

    def barrier(self, b):
        nvvm.barrier(b)

    def shuffle_xor(self, b, value, lane_mask: int):
        return nvvm.shfl_xor(b, value, lane_mask)

    def shuffle_idx(self, b, value, lane):
        return nvvm.shfl_idx(b, value, lane)

    def byte_permute(self, b, x, y, selector):
        return nvvm.prmt(b, x, y, selector)

    def load_global(self, b, ptr, mem_type, n, pred=None, others=None, hints=None):
        return nvvm.vector_load(b, ptr, mem_type, n, pred, others, hints, self.arch)

    def store_global(self, b, ptr, values, pred=None, hints=None):
        nvvm.vector_store(b, ptr, values, pred, hints, self.arch)

    # the scopes of the compare-and-swap loops LLVM expands the atomics PTX lacks into
    atomic_scopes = {"cta": "block", "gpu": "device", "sys": ""}

    def atomic_rmw(self, b, op, ptr, value, sem, scope):
        old = atomics.atomic_rmw(b, op, ptr, value, sem, scope, self.arch)
        return old if old is not None else super().atomic_rmw(b, op, ptr, value, sem, scope)

    def atomic_cas(self, b, ptr, cmp, value, sem, scope):
        old = atomics.atomic_cas(b, ptr, cmp, value, sem, scope, self.arch)
        return old if old is not None else super().atomic_cas(b, ptr, cmp, value, sem, scope)

    def async_copy(self, b, dst, src, nbytes, pred):
        if self.arch < 80:
            return False
        copies.cp_async(b, dst, src, nbytes, pred)
        return True

    def async_commit(self, b):
        if self.arch >= 80:
            copies.cp_async_commit(b)

    def async_wait(self, b, pending):
        if self.arch >= 80:
            copies.cp_async_wait(b, pending)

    def load_matrix_operand(self, lowering, base, buf_type, dst_type):
        return copies.ldmatrix_operand(lowering, base, buf_type, dst_type) if self.arch >= 75 else None

    def store_matrix_fragments(self, lowering, values, src_ll, buf, address, elem_bytes):
        return self.arch >= 90 and copies.stmatrix_fragments(lowering, values, src_ll, buf, address, elem_bytes)

    def fence_async_shared(self, b):
        if self.arch >= 90:
            copies._asm(b, "fence.proxy.async.shared::cta;", "~{memory}", [])

    def warp_group_dot_wait(self, b, pending, values):
        return wgmma.wait(b, pending, values)

    def lower_warp_group_dot(self, lowering, op):
        wgmma.lower_warp_group_dot(lowering, op)

    def lower_dot(self, lowering, op):
        mma_dot(lowering, op)

    def keeps_descriptor(self, op, options):
        return self.arch >= 90 and tma.keeps_descriptor(op, options)

    def tensormap_create(self, lowering, op, addr):
        tma.tensormap_create(lowering, op, addr)

    def tma_copy(self, lowering, op, dst, bar, desc, pred, coords):
        tma.tma_copy(lowering, op, dst, bar, desc, pred, coords)

    def tma_store(self, lowering, op, src, desc, coords):
        tma.tma_store(lowering, op, src, desc, coords)

    def mbarrier(self, lowering, kind, bar, count_or_phase=None):
        tma.mbarrier(lowering, kind, bar, count_or_phase)

    def trap(self, b):
        intrinsic(b, "llvm.trap", VOID, [])

    def printf(self, lowering, fmt, args, guard):
        vprintf(lowering, fmt, args, guard)


def vprintf(L, fmt: str, args, guard):
    b, m = L.b, L.module
    data = bytearray(fmt.encode()) + b"\0"
    name = f"tilec_fmt_{hashlib.sha1(data).hexdigest()[:16]}"  # stable across processes, unlike hash()
    g = m.globals.get(name)
    if g is None:
        g = ir.GlobalVariable(m, ir.ArrayType(I8, len(data)), name, addrspace=1)
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(ir.ArrayType(I8, len(data)), data)
        g.type = ir.PointerType(addrspace=1)
    fn = declare(m, "vprintf", I32, [ir.PointerType(), ir.PointerType()])
    st = ir.LiteralStructType([a.type for a in args])
    buf = L.entry.alloca(st)
    buf.type = ir.PointerType()  # opaque, like every other pointer here
    with b.if_then(guard) if guard is not None else nullcontext():
        for i, a in enumerate(args):
            b.store(a, b.gep(buf, [ir.Constant(I32, 0), ir.Constant(I32, i)], source_etype=st))
        b.call(fn, [b.addrspacecast(g, ir.PointerType()), buf])
