"""The contract between the generic GPU lowering (:mod:`tilec.gpu.lowering`) and a vendor.

The generic lowering handles layouts, registers, elementwise math on the GPU register model, reductions, scans,
shared-memory staging, control flow and memory access patterns; whatever differs between vendors is asked of a
``GpuTarget``. A vendor backend subclasses it (in ``tilec/targets/<vendor>/target.py``) and passes an
instance to :func:`tilec.gpu.lowering.lower_module`. Builders (``b``) are llvmlite ``IRBuilder`` objects; values
are llvmlite values.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import llvmlite.ir as ir

from ..codegen import atomics
from ..codegen.intrinsics import call as intrinsic, mangle
from ..errors import BackendError


@dataclass(frozen=True)
class AccessHints:
    """How a global load or store asks the memory system to treat its data: Triton's ``cache_modifier``
    (``ca``/``cg``/``cv`` for loads, ``wb``/``cg``/``cs``/``wt`` for stores; stored without the dot),
    ``eviction_policy`` (``evict_first``/``evict_last``; ``evict_normal`` is the default and stored as ``""``)
    and ``volatile`` (loads). Hints only: a target without the corresponding instruction forms ignores them."""
    cache: str = ""
    eviction: str = ""
    volatile: bool = False

    @classmethod
    def of(cls, op) -> "AccessHints":
        """The hints a ``load``/``store``/``async_copy`` op carries."""
        a = op.attrs
        eviction = a.get("eviction", "") or ""
        return cls(cache=(a.get("cache", "") or "").lstrip("."),
                   eviction="" if eviction == "evict_normal" else eviction,
                   volatile=bool(a.get("volatile", False)))

    def __bool__(self):
        return bool(self.cache or self.eviction or self.volatile)


NO_HINTS = AccessHints()


class GpuTarget(ABC):
    """What the generic GPU lowering needs from a vendor. Subclasses set the attributes and implement the
    abstract methods (a target missing one cannot be instantiated); each method's docstring is its contract."""

    #: backend name used in messages
    name: str = "gpu"
    #: LLVM target triple and data layout of the emitted module
    triple: str = ""
    data_layout: str = ""
    #: threads per warp (wavefront): a power of two, a parameter of every lowering (32 or 64 in practice)
    warp_size: int = 32
    #: LLVM calling convention of kernel entry points
    kernel_calling_convention: str = ""
    #: LLVM address space of workgroup-shared memory and the symbol of the kernel's dynamic shared memory
    shared_address_space: int = 3
    shared_symbol: str = "global_smem"

    # -- what the GPU pass list asks (``gpu/pipeline.py: gpu_passes``) ---------------------------------------------
    #: the generation of warp-level matrix units whose ``MmaLayout``s accelerate-dot lays dots out in (80: warp
    #: matrix instructions; 90: warpgroup units as well); 0: none, and :meth:`dot_layouts` chooses instead
    mma_arch: int = 0
    #: global -> shared copies run asynchronously (:meth:`async_copy`); else the pipeliner fills operand rings
    #: through registers an iteration ahead
    async_copies: bool = False
    #: ``noinline`` functions can stay device functions, called for real (else every call is inlined)
    device_calls: bool = False
    #: what gir records on every function as the target its layouts were chosen for (``"<backend>:<arch>"``); "": none
    gir_target: str = ""

    def pipeline_shared_limit(self) -> int:
        """Bytes of shared memory the software pipeliner's rings may take (0: it does not bound them; the compile
        refuses a kernel past :meth:`shared_memory_limit` afterwards)."""
        return 0

    def shared_for_two_blocks(self, num_warps: int) -> int:
        """Bytes of shared memory a block of ``num_warps`` may use while a second block still fits on the same
        multiprocessor, where the block's registers leave room for a second one whatever the register allocator
        chooses; 0: no such bound. The software pipeliner keeps its rings within it when fewer stages (at least
        two) make that second block fit: a lone block of few warps has nothing to run while it waits."""
        return 0

    def shared_memory_limit(self):
        """``(bytes, what the target calls it)``: the shared memory one block may use (a kernel needing more is
        refused at compile time, ``gpu/shared_limit.py``), e.g. ``(65536, "<processor> shared memory")``; None: no
        limit known."""
        return None

    # -- module ------------------------------------------------------------------------------------------
    def kernel_attributes(self, num_threads: int, func=None, options=None) -> dict:
        """String function attributes for the kernel ``func`` (the gir function) launched with ``num_threads``
        threads per block (register budgeting: the maximum threads per block, minimum resident blocks, and a
        register cap the compile ``options`` ask for, such as Triton's ``maxnreg``)."""
        return {}

    def finish_module(self, module) -> None:
        """Last edits to the llvmlite module (module flags, extra declarations)."""

    # -- thread coordinates and synchronisation -----------------------------------------------------------
    @abstractmethod
    def thread_id(self, b):
        """i32 index of this thread in its block (x dimension; blocks are one-dimensional)."""

    @abstractmethod
    def block_id(self, b, axis: int):
        """i32 index of this block along grid ``axis`` (0, 1, 2): ``tl.program_id``."""

    @abstractmethod
    def num_blocks(self, b, axis: int):
        """i32 number of blocks along grid ``axis``: ``tl.num_programs``."""

    @abstractmethod
    def barrier(self, b) -> None:
        """Block-wide barrier that also orders shared-memory accesses."""

    @abstractmethod
    def shuffle_xor(self, b, value, lane_mask: int):
        """``value`` as held by the lane whose index is this lane's XOR ``lane_mask`` (any scalar type the
        register model uses: i1..i64, f16, f32, f64, pointers)."""

    def shuffle_idx(self, b, value, lane):
        """i32 ``value`` as held by lane ``lane`` (an i32 register, may differ per lane) of this lane's warp."""
        raise BackendError(f"the {self.name} backend has no indexed lane shuffle")

    def byte_permute(self, b, x, y, selector):
        """The i32 whose byte i is byte ``(selector >> 4 i) & 7`` of the eight bytes of i32s ``x`` (0-3) and ``y``
        (4-7); ``selector`` an i32 register. Generic here (shifts of the 64-bit pair); a target with a byte
        permute instruction uses it."""
        i32, i64 = ir.IntType(32), ir.IntType(64)
        pair = b.or_(b.zext(x, i64), b.shl(b.zext(y, i64), ir.Constant(i64, 32)))
        out = ir.Constant(i32, 0)
        for i in range(4):
            pick = b.and_(b.lshr(selector, ir.Constant(i32, 4 * i)), ir.Constant(i32, 7))
            byte = b.trunc(b.lshr(pair, b.zext(b.shl(pick, ir.Constant(i32, 3)), i64)), i32)
            out = b.or_(out, b.shl(b.and_(byte, ir.Constant(i32, 0xFF)), ir.Constant(i32, 8 * i)))
        return out

    # -- memory ------------------------------------------------------------------------------------------
    @abstractmethod
    def load_global(self, b, ptr, mem_type, n: int, pred=None, others=None, hints: AccessHints = NO_HINTS):
        """``n`` consecutive elements of ``mem_type`` at ``ptr`` (aligned to the whole vector) as one access;
        where ``pred`` (i1 or None) is false the results are ``others`` (memory-typed values) or zero, and the
        address is not touched. ``hints``: the load's cache modifier, eviction policy and volatility."""

    @abstractmethod
    def store_global(self, b, ptr, values, pred=None, hints: AccessHints = NO_HINTS) -> None:
        """Store memory-typed ``values`` consecutively at ``ptr`` as one access, only where ``pred`` holds;
        ``hints``: the store's cache modifier and eviction policy."""

    # -- atomics (optional: the defaults are LLVM's atomics in the target's scopes) ----------------------------
    #: LLVM synchronisation scope of each of Triton's scopes ("" is LLVM's system scope)
    atomic_scopes: dict = {"cta": "", "gpu": "", "sys": ""}

    def atomic_metadata(self, op: str, mem_type, scope: str) -> tuple:
        """Names of empty metadata to attach to an LLVM atomic ``op`` on ``mem_type`` at Triton ``scope``."""
        return ()

    def atomic_rmw(self, b, op: str, ptr, value, sem: str, scope: str):
        """One atomic read-modify-write of ``value`` (memory-typed; bf16 as ``codegen.atomics.BFLOAT``) at global
        ``ptr``: LLVM operation ``op`` (add, fadd, max, umax, min, umin, and, or, xor, xchg) with Triton's ``sem``
        (relaxed, acquire, release, acq_rel) at Triton's ``scope`` (cta, gpu, sys); the old value."""
        return atomics.rmw(b, op, ptr, value, sem, self.atomic_scopes[scope],
                           self.atomic_metadata(op, value.type, scope))

    def atomic_cas(self, b, ptr, cmp, value, sem: str, scope: str):
        """Atomic compare-and-swap of integer ``cmp``/``value`` (floats arrive as their bits) at global ``ptr``,
        ``sem`` and ``scope`` as for :meth:`atomic_rmw`; the old value."""
        return atomics.cas(b, ptr, cmp, value, sem, self.atomic_scopes[scope],
                           self.atomic_metadata("cmpxchg", value.type, scope))

    # -- asynchronous copies and shared-memory matrix loads (optional: the defaults are correct everywhere) -----
    def async_copy(self, b, dst, src, nbytes: int, pred) -> bool:
        """Start copying ``nbytes`` (4, 8 or 16) from global ``src`` to shared ``dst`` without waiting; where
        ``pred`` (i1 or None) is false, write zeros and read nothing. Return False when the target has no such
        copy for this width: the lowering then loads and stores synchronously."""
        return False

    def async_commit(self, b) -> None:
        """Close this thread's current group of asynchronous copies."""

    def async_wait(self, b, pending: int) -> None:
        """Wait until at most ``pending`` committed groups of this thread's copies are in flight."""

    def load_matrix_operand(self, lowering, base, buf_type, dst_type):
        """Registers of ``dst_type`` (a matrix-unit operand layout) read from the shared tile at byte offset
        ``base`` (i32) placed by ``buf_type.layout`` with the target's matrix loads; None: not for this layout
        (the lowering then reads element by element)."""
        return None

    def store_matrix_fragments(self, lowering, values, src_ll, buf, address, elem_bytes: int) -> bool:
        """Write a layout conversion's source registers (memory-typed ``values`` in linear layout ``src_ll``)
        into its staging buffer ``buf`` (a ``StagingBuffer``, or a stage's placement) with matrix stores, each
        at ``address(element offset in buf, elements accessed)`` (a shared-memory pointer); False: not for this
        layout (the lowering stores register groups)."""
        return False

    def fence_async_shared(self, b) -> None:
        """Make this thread's ordinary shared-memory writes visible to asynchronous readers (matrix units)."""

    def lower_warp_group_dot(self, lowering, op) -> None:
        """Lower a ``warp_group_dot`` (operands in shared memory; bind ``op.result``). Only targets whose
        accelerate-dot chooses version-3 layouts get one."""
        raise BackendError(f"the {self.name} backend has no warpgroup matrix units")

    def warp_group_dot_wait(self, b, pending: int, values):
        """Wait for warpgroup dots (at most ``pending`` left running; None: they are already retired, only
        hand the values over); ``values`` (their results) come back usable."""
        return values

    # -- tensor copy engine (optional: only targets whose ``keeps_descriptor`` says yes get these ops) ------
    def keeps_descriptor(self, op, options) -> bool:
        """Whether this target moves tir ``descriptor_load`` ``op`` whole with a tensor copy engine (the
        software pipeliner then stages it with ``tma_copy``); the others are expanded into pointer loads."""
        return False

    def tensormap_create(self, lowering, op, addr) -> None:
        """Write ``op``'s descriptor (a ``tensormap_create``) at global address ``addr`` (i64) so that this
        thread's later copies through it see it."""
        raise BackendError(f"the {self.name} backend has no tensor copy engine")

    def tma_copy(self, lowering, op, dst, bar, desc, pred, coords) -> None:
        """Issue ``op``'s copies (``tma_copy``) into shared byte offset ``dst`` (i32) announced to the barrier
        at shared byte offset ``bar``, from descriptor address ``desc`` at ``coords`` (i32, outermost first)."""
        raise BackendError(f"the {self.name} backend has no tensor copy engine")

    def tma_store(self, lowering, op, src, desc, coords) -> None:
        """Copy ``op``'s stage (a ``tma_store``) at shared byte offset ``src`` out through descriptor ``desc`` at
        ``coords`` and wait until it is done."""
        raise BackendError(f"the {self.name} backend has no tensor copy engine")

    def mbarrier(self, lowering, kind: str, bar, count_or_phase=None) -> None:
        """``kind`` "init" (expecting ``count_or_phase`` arrivals), "wait" (for parity ``count_or_phase``, an
        i32 value) or "inval" on the shared-memory barrier at byte offset ``bar`` (i32)."""
        raise BackendError(f"the {self.name} backend has no shared-memory barriers")

    # -- vendor units and libraries ---------------------------------------------------------------------------
    def encode_fp8(self, b, values, elem, rounding: str):
        """The fp8 codes (i8) of the f32 registers ``values`` (a list: an instruction may convert several) for fp8
        type ``elem`` by the target's own conversion, exactly as :func:`tilec.codegen.fp8.encode` gives them, or
        None: that integer encoding is then used."""
        return None

    def int_abs(self, b, x):
        """``|x|`` of a signed integer register (i8 to i64), wrapping: the minimum value is its own absolute value,
        as in numpy (``abs(int16(-32768)) == -32768``), also as seen by later compares and widenings."""
        return intrinsic(b, f"llvm.abs.{mangle(x.type)}", x.type, [x, ir.Constant(ir.IntType(1), 0)])

    #: math library: an object with ``unary(b, name, x)``, ``pow_(b, x, y)`` and ``atan2(b, y, x)`` over f16/f32/
    #: f64 registers (``name`` as in ``tilec.ir.ops.UNARY_OPS``); raises BackendError for what it lacks
    math = None

    def dot_layouts(self, op, num_warps: int):
        """Matrix units for the gir ``dot`` ``op`` (asked by accelerate-dot when :attr:`mma_arch` is 0):
        ``(A layout, B layout, accumulator layout)`` (``MatrixUnitOperandLayout``s and a ``MatrixUnitLayout`` that
        :meth:`lower_dot` then lowers), or None to keep the FMA path. Return layouts only for instructions this
        target has: an intrinsic the target lacks can abort LLVM."""
        return None

    def lower_dot(self, lowering, op) -> None:
        """Lower a ``dot`` whose operands carry the matrix-unit layouts accelerate-dot chose (bind
        ``op.result``). Targets without matrix units never get such layouts."""
        raise BackendError(f"the {self.name} backend has no matrix-unit dot")

    # -- inline assembly (optional: a target without registers to offer refuses ``inline_asm``) ----------------
    #: register constraint letter -> what it holds, for messages; empty: the target takes no inline assembly
    inline_asm_registers: dict = {}

    def inline_asm_operand(self, code: str, bits: int):
        """The LLVM type an inline-assembly operand with register constraint ``code`` takes for a value of
        ``bits`` bits (one element, or several packed), or None when that register cannot hold it. An integer
        type wider than ``bits`` gets the value zero-extended (results: truncated). Return only pairings this
        target's LLVM backend accepts: a constraint it cannot allocate can abort LLVM."""
        return None

    @abstractmethod
    def trap(self, b) -> None:
        """Abort the kernel (a failing ``device_assert``)."""

    @abstractmethod
    def printf(self, lowering, fmt: str, args, guard) -> None:
        """Device printf of ``fmt`` (C format) with LLVM values ``args``, in threads where ``guard`` holds."""
