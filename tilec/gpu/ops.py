"""The GPU IR's own operations (gir): layout conversions, shared-memory buffers and their views, asynchronous
copies, warpgroup matrix-unit dots and the tensor copy engine's descriptors and barriers.

They extend the tile IR (``tilec.ir.ops``) the way a dialect does: the same ``Operation`` base and registry, so
the printer, parser and verifier handle them, but the core IR knows nothing of them. Importing this module
registers them; the parser loads it when it meets a name it does not know (see ``tilec.ir.parser``).
"""
from __future__ import annotations

from ..ir.core import Operation
from ..ir.evaluator import identity, register_impl
from ..ir.ops import PURE, _check
from ..ir.types import PointerType, SharedBufferType, i1, i32, i64
from ..ir.core import OpResult

# ---------------------------------------------------------------------------------------------------------------
# gir (GPU) ops
# ---------------------------------------------------------------------------------------------------------------
class ConvertLayoutOp(Operation):
    """Same tile values, another layout (gir only): the one place data moves between threads for layout's
    sake, so passes can count, fold and remove these. Numerically the identity (``forwards_value``: analyses
    that follow values, such as pointer origins, look through it)."""
    name = "convert_layout"
    operand_names = ("src",)
    traits = PURE | {"forwards_value"}

    def verify_(self):
        s, d = self.src.type, self.result.type
        _check(s.is_tile and d.is_tile and s.shape == d.shape and s.element == d.element, self,
               f"cannot convert {s} to {d}")


register_impl(ConvertLayoutOp)(identity)  # the evaluator runs gir too: a layout changes no value


# ---------------------------------------------------------------------------------------------------------------
# shared memory (gir only): buffers are values, so the pipeliner, the allocator and the matrix units reason
# about them; each access names a buffer and a stage index
# ---------------------------------------------------------------------------------------------------------------
def _is_buffer(t) -> bool:
    return isinstance(t, SharedBufferType)


def _check_stage(op, buf, index, tile_shape, element, what):
    _check(_is_buffer(buf.type), op, f"needs a shared buffer, got {buf.type}")
    _check(index.type == i32, op, f"stage index must be i32, got {index.type}")
    _check(tuple(tile_shape) == buf.type.tile_shape and element == buf.type.element, op,
           f"{what} must be a {buf.type.tile_shape} tile of {buf.type.element}")


class LocalAllocOp(Operation):
    """A shared-memory buffer (the result type says stages, tile shape, element and placement), live until its
    ``local_dealloc`` (without one: until its last use, views' uses included); allocate-shared gives it its
    bytes. Not pure: two allocations are two buffers.

    With ``src`` (a register tile) it is a one-stage buffer holding that tile: how every matrix-unit operand
    that is not already in registers reaches shared memory (stage-operands). Such a buffer is written once,
    here; insert-barriers orders its write before the reads, and the software pipeliner replaces a ``load``
    whose only user is such an allocation by a ring of asynchronous copies."""
    name = "local_alloc"
    operand_names = ("src?",)
    traits = frozenset({"writes"})

    def verify_(self):
        r = self.result.type
        _check(_is_buffer(r), self, f"must produce a shared buffer, got {r}")
        if self.src is not None:
            t = self.src.type
            _check(t.is_tile and r.num_buffers == 1 and r.tile_shape == t.shape and r.element == t.element, self,
                   f"a buffer made from a tile must be one stage of it: {t} -> {r}")


class LocalDeallocOp(Operation):
    """End of a buffer's life: its bytes may be reused after this point."""
    name = "local_dealloc"
    operand_names = ("buffer",)
    traits = frozenset({"writes"})

    def verify_(self):
        _check(_is_buffer(self.buffer.type), self, f"needs a shared buffer, got {self.buffer.type}")


class AsyncCopyOp(Operation):
    """Start copying the global tile at ``ptr`` into stage ``index`` of ``buffer``; elements whose ``mask`` is
    false become zero and their addresses are not read. Complete after the ``async_wait`` that covers the
    ``async_commit`` group it joined, and visible to other threads after a barrier behind that."""
    name = "async_copy"
    operand_names = ("buffer", "index", "ptr", "mask?")
    attr_types = {"cache": str}
    attr_defaults = {"cache": ""}
    traits = frozenset({"reads", "writes"})

    def verify_(self):
        p = self.ptr.type
        _check(p.is_tile and p.is_ptr, self, f"needs a tile of pointers, got {p}")
        _check_stage(self, self.buffer, self.index, p.shape, p.element.pointee, "the copied tile")
        if self.mask is not None:
            _check(self.mask.type == p.with_element(i1), self, "mask must be i1 of the pointer's shape")


class AsyncCommitOp(Operation):
    """Close the group of asynchronous copies this thread started since the last commit."""
    name = "async_commit"
    traits = frozenset({"writes"})


class AsyncWaitOp(Operation):
    """Wait until at most ``pending`` of this thread's committed copy groups are still in flight. In a pipelined
    loop, ``group`` (the copy group of the iteration it waits for, counted from 0) and ``ahead`` (groups the
    prologue committed) let passes that move copies recompute ``pending``."""
    name = "async_wait"
    attr_types = {"pending": int, "group": int, "ahead": int}
    attr_defaults = {"group": -1, "ahead": 0}
    traits = frozenset({"reads", "writes"})

    def verify_(self):
        _check(isinstance(self.attrs.get("pending"), int) and self.attrs["pending"] >= 0, self,
               "needs a non-negative 'pending' count")


class LocalLoadOp(Operation):
    """Stage ``index`` of ``buffer`` read into registers, in the result's layout."""
    name = "local_load"
    operand_names = ("buffer", "index")
    traits = frozenset({"reads"})

    def verify_(self):
        r = self.result.type
        _check(r.is_tile, self, f"must produce a tile, got {r}")
        _check_stage(self, self.buffer, self.index, r.shape, r.element, "the result")


class LocalStoreOp(Operation):
    """Registers of ``value`` written to stage ``index`` of ``buffer``; ``value`` may also be the bits of the
    buffer's elements as integers of their width (a copy through registers moves bits, never decoding them)."""
    name = "local_store"
    operand_names = ("value", "buffer", "index")
    traits = frozenset({"writes"})

    def verify_(self):
        v = self.value.type
        _check(v.is_tile, self, f"needs a tile, got {v}")
        e, be = v.element, self.buffer.type.element
        bits = e.is_int and not be.is_int and e.bits == be.bits
        _check_stage(self, self.buffer, self.index, v.shape, be if bits else e, "the stored tile")


class LocalIndexOp(Operation):
    """Stage ``index`` of ``buffer`` as a one-stage buffer (a view: the same bytes): how one stage of a ring is
    handed to its readers, views of it (``local_trans``) and instructions that read shared memory themselves
    (warpgroup matrix units)."""
    name = "local_index"
    operand_names = ("buffer", "index")
    traits = PURE | {"view"}

    def verify_(self):
        b, r = self.buffer.type, self.result.type
        _check(_is_buffer(b) and _is_buffer(r), self, f"needs and makes shared buffers, got {b} -> {r}")
        _check(self.index.type == i32, self, f"stage index must be i32, got {self.index.type}")
        _check(r.shape == (1,) + b.tile_shape and r.element == b.element and r.layout == b.layout, self,
               f"result must be one stage of {b}")


class LocalTransOp(Operation):
    """The same bytes as ``buffer`` seen with its tile dimensions permuted (``order`` as ``trans``: view dimension
    ``i`` is the buffer's dimension ``order[i]``; the stage dimension stays first): a transposed operand costs
    nothing once it is in shared memory. The result's layout is the buffer's, permuted
    (``SharedLayout.permuted``), so every element keeps its address."""
    name = "local_trans"
    operand_names = ("buffer",)
    attr_types = {"order": tuple}
    traits = PURE | {"view"}

    @staticmethod
    def view_type(t, order):
        order = tuple(order)
        shape = (t.num_buffers,) + tuple(t.tile_shape[d] for d in order)
        return SharedBufferType(shape, t.element, t.layout.permuted(order))

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [cls.view_type(operands[0].type, attrs["order"])]

    def verify_(self):
        b = self.buffer.type
        _check(_is_buffer(b), self, f"needs a shared buffer, got {b}")
        order = tuple(self.attrs["order"])
        _check(sorted(order) == list(range(len(b.tile_shape))), self, f"bad order {order}")
        _check(self.result.type == self.view_type(b, order), self,
               f"result must be {self.view_type(b, order)}, got {self.result.type}")


class FenceAsyncSharedOp(Operation):
    """Order this thread's ordinary shared-memory writes before reads by asynchronous units (matrix units,
    copy engines) that a following barrier releases."""
    name = "fence_async_shared"
    traits = frozenset({"writes"})


class WarpGroupDotOp(Operation):
    """``a @ b + acc`` on warpgroup matrix units (gir only): ``b`` (and ``a``, unless it is a register tile in
    the matrix-unit operand layout) is a one-stage shared buffer; ``acc`` and the result use the version-3
    matrix-unit layout. When the op returns at most ``pending`` of this warpgroup's dots are still running (-1:
    no wait at all): with ``pending`` != 0 the result may only feed the next such dot until a
    ``warp_group_dot_wait`` hands it over. ``use_acc`` (optional i1 scalar): where false the units compute
    ``a @ b`` without reading ``acc`` (the instruction's scale-d), so a loop that restarts its accumulator (a
    flattened persistent matmul) keeps it in the units instead of selecting zeros in registers."""
    name = "warp_group_dot"
    operand_names = ("a", "b", "acc", "use_acc?")
    attr_types = {"input_precision": str, "max_num_imprecise_acc": int, "pending": int}
    attr_defaults = {"pending": 0}
    traits = frozenset({"reads", "writes"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [operands[2].type]

    def verify_(self):
        a, b, c = self.a.type, self.b.type, self.acc.type
        _check(_is_buffer(b) and b.num_buffers == 1, self, f"b must be a one-stage shared buffer, got {b}")
        ash = a.tile_shape if _is_buffer(a) else a.shape
        _check(c.is_tile and len(c.shape) == 2 and ash == (c.shape[0], b.tile_shape[0]) and
               b.tile_shape[1] == c.shape[1], self, f"shapes do not multiply: {a} x {b} -> {c}")
        _check(self.result.type == c, self, "result must have the accumulator's type")


class WarpGroupDotWaitOp(Operation):
    """Wait until at most ``pending`` warpgroup dots are running; the operands (their results) come back
    usable as the results. ``hw`` false: an earlier wait already retired them, only the hand-over remains."""
    name = "warp_group_dot_wait"
    operand_names = ("*values",)
    attr_types = {"pending": int, "hw": bool}
    attr_defaults = {"pending": 0, "hw": True}
    traits = frozenset({"reads", "writes"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [o.type for o in operands]


# ---------------------------------------------------------------------------------------------------------------
# tensor copy engines (gir only): descriptors in global memory, copies completed through shared-memory barriers
# ---------------------------------------------------------------------------------------------------------------
class TensormapCreateOp(Operation):
    """Write a tensor copy engine's descriptor of the tensor ``base``/``shape``/``strides`` (as in
    ``descriptor_load``, without offsets) moving ``box`` blocks (outermost first) into shared memory with
    swizzle ``swizzle`` (bytes: 0, 32, 64 or 128) to this program's slot ``slot`` of the kernel's global
    scratch; the result is the descriptor's global address (i64)."""
    name = "tensormap_create"
    operand_names = ("base", "*dims")
    attr_types = {"box": tuple, "swizzle": int, "padding": str, "slot": int}
    attr_defaults = {"padding": "zero", "slot": 0}
    traits = frozenset({"writes"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [i64]

    def verify_(self):
        n = len(self.attrs["box"])
        _check(isinstance(self.base.type, PointerType), self, f"needs a scalar pointer base, got {self.base.type}")
        _check(len(self.dims) == 2 * n, self, f"needs {n} shape and {n} stride operands")
        _check(self.attrs["swizzle"] in (0, 32, 64, 128), self, "swizzle must be 0, 32, 64 or 128 bytes")
        _check(self.result.type == i64, self, "the result is the descriptor's address (i64)")


class TmaCopyOp(Operation):
    """Start copying the block at ``coords`` (one i32 per dimension, outermost first; out-of-bounds elements
    are filled) of the tensor that descriptor ``desc`` describes into stage ``index`` of ``buffer``, when
    ``pred``; one thread issues it and announces ``announce`` bytes (-1: its own) to stage ``index`` of
    ``barriers``, whose phase then completes when they have all arrived: copies sharing a barrier let the first
    announce all their bytes and the others 0. Rows wider than the swizzle span go as one copy per column
    block of the buffer's layout."""
    name = "tma_copy"
    operand_names = ("buffer", "index", "barriers", "desc", "pred", "*coords")
    attr_types = {"announce": int}
    attr_defaults = {"announce": -1}
    traits = frozenset({"reads", "writes"})

    def verify_(self):
        _check(_is_buffer(self.buffer.type) and _is_buffer(self.barriers.type), self, "needs shared buffers")
        _check(self.desc.type == i64 and self.pred.type == i1, self, "desc must be i64 and pred i1")
        _check(len(self.coords) == len(self.buffer.type.tile_shape), self, "one coordinate per tile dimension")


class TmaStoreOp(Operation):
    """Copy stage ``index`` of ``buffer`` to the block at ``coords`` (i32 per dimension, outermost first) of the
    tensor descriptor ``desc`` describes (out-of-bounds elements dropped), and wait until it has read the stage;
    every thread's writes to the stage must be fenced (``fence_async_shared``) and joined by a barrier first."""
    name = "tma_store"
    operand_names = ("buffer", "index", "desc", "*coords")
    traits = frozenset({"reads", "writes"})

    def verify_(self):
        _check(_is_buffer(self.buffer.type), self, "needs a shared buffer")
        _check(self.desc.type == i64, self, "desc must be i64")
        _check(len(self.coords) == len(self.buffer.type.tile_shape), self, "one coordinate per tile dimension")


class MBarrierInitOp(Operation):
    """Initialise every stage of ``barriers`` (a shared buffer of i64) to expect one arrival per phase."""
    name = "mbarrier_init"
    operand_names = ("barriers",)
    traits = frozenset({"writes"})


class MBarrierWaitOp(Operation):
    """Wait until stage ``index`` of ``barriers`` has completed the phase of parity ``phase`` (i32 0/1): the
    copies that phase counted are then visible to this thread."""
    name = "mbarrier_wait"
    operand_names = ("barriers", "index", "phase")
    traits = frozenset({"reads", "writes"})


class MBarrierInvalOp(Operation):
    """End of ``barriers``' use as barriers (before their bytes are reused)."""
    name = "mbarrier_inval"
    operand_names = ("barriers",)
    traits = frozenset({"writes"})


# ---------------------------------------------------------------------------------------------------------------
# buffers and their views
# ---------------------------------------------------------------------------------------------------------------
def buffer_root(v):
    """The ``local_alloc`` whose bytes shared-buffer value ``v`` views (through ``local_index`` and
    ``local_trans``), or None (a block argument, say)."""
    while isinstance(v, OpResult) and "view" in v.op.traits:
        v = v.op.operands[0]
    return v.op if isinstance(v, OpResult) and isinstance(v.op, LocalAllocOp) else None


def buffer_users(v):
    """(op, operand index) for every op that reads or writes the bytes of buffer value ``v``, views followed
    (the views themselves are not listed)."""
    out, todo = [], [v]
    while todo:
        x = todo.pop()
        for user, idx in x.uses:
            if "view" in user.traits:
                todo.append(user.result)
            else:
                out.append((user, idx))
    return out
