"""Loads, stores and atomics through tensors of pointers: cache and eviction hints checked, masks and ``other``
broadcast, bools stored as bytes, and float atomic max/min built from integer atomics.

Block pointers and tensor descriptors reach these same ops once expanded (``semantic_block_pointers.py``).
"""
from __future__ import annotations

from . import core as tlc
from .core import _unwrap, block_ptr, block_type, dtype, pointer_type, tensor


class MemoryRules:
    """Pointer loads, stores and atomics, for :class:`~tilec.language.semantic.Semantic`."""

    LOAD_CACHE = ("", ".ca", ".cg", ".cv")
    STORE_CACHE = ("", ".wb", ".cg", ".cs", ".wt")
    EVICTION = ("", "evict_normal", "evict_first", "evict_last")

    def _as_element(self, v, elt: dtype) -> tensor:
        """``v`` as a value of pointee type ``elt``: Python scalars are materialised directly in ``elt``, tensors
        cast to it."""
        v = _unwrap(v)
        return self.cast(self.to_tensor(v, None if isinstance(v, tensor) else elt), elt)

    def _pointer_and_mask(self, ptr, mask, what):
        ptr = self.to_tensor(ptr)
        if not ptr.dtype.is_ptr():
            raise TypeError(f"{what} needs a pointer, got {ptr.dtype!r}")
        if isinstance(ptr.dtype.element_ty, block_type):
            raise TypeError(f"{what} of block pointers is not supported yet")
        mask = _unwrap(mask)
        if mask is not None:
            mask = self.to_tensor(mask)
            if not mask.dtype.is_bool():
                raise TypeError(f"{what} mask must be a boolean (int1) tensor, got {mask.dtype!r}")
            if not ptr.type.is_block() and mask.type.is_block():
                raise ValueError(f"{what}: a tensor mask needs a tensor of pointers, got a scalar pointer")
            if mask.shape != ptr.shape:
                shape = self.broadcast_shapes(ptr.shape, mask.shape)
                ptr, mask = self.broadcast_to(ptr, shape), self.broadcast_to(mask, shape)
        return ptr, mask

    def load(self, ptr, mask=None, other=None, cache_modifier="", eviction_policy="", volatile=False,
             boundary_check=(), padding_option="") -> tensor:
        cache, evict, volatile = _unwrap(cache_modifier) or "", _unwrap(eviction_policy) or "", _unwrap(volatile)
        if cache not in self.LOAD_CACHE:
            raise ValueError(f"load cache_modifier must be one of {self.LOAD_CACHE}, got {cache!r}")
        if evict not in self.EVICTION:
            raise ValueError(f"eviction_policy must be one of {self.EVICTION}, got {evict!r}")
        ptr = _unwrap(ptr)
        padding = _unwrap(padding_option) or ""
        if isinstance(ptr, block_ptr):
            if _unwrap(mask) is not None or _unwrap(other) is not None:
                raise ValueError("load from a block pointer takes boundary_check/padding_option, not mask/other")
            if padding not in ("", "zero", "nan"):
                raise ValueError(f"padding_option must be 'zero' or 'nan', got {padding!r}")
            ptr, mask = self._expand_block_ptr(ptr, boundary_check)
            if mask is not None and padding:
                other = 0 if padding == "zero" else float("nan")
        elif _unwrap(boundary_check) or padding:
            raise ValueError("boundary_check/padding_option are only for block pointers (tl.make_block_ptr)")
        ptr, mask = self._pointer_and_mask(ptr, mask, "load")
        other = _unwrap(other)
        if other is not None and mask is None:
            raise ValueError("load: `other` needs a `mask`")
        elt = ptr.dtype.element_ty
        is_bool = elt.is_bool()
        if is_bool:  # bools live in memory as bytes
            elt = tlc.int8
            ptr = self.cast(ptr, pointer_type(elt, ptr.dtype.address_space))
        operands = [ptr.handle]
        if mask is not None:
            operands.append(mask.handle)
        if other is not None:
            o = self.broadcast_to(self._as_element(other, elt), ptr.shape)
            operands.append(o.handle)
        ty = ptr.type.with_element(elt)
        out = tensor(self.b.create("load", operands, ty, cache=cache, eviction=evict, volatile=bool(volatile)), ty)
        return self.cast(out, tlc.int1) if is_bool else out

    def store(self, ptr, value, mask=None, cache_modifier="", eviction_policy="", boundary_check=()):
        cache, evict = _unwrap(cache_modifier) or "", _unwrap(eviction_policy) or ""
        if cache not in self.STORE_CACHE:
            raise ValueError(f"store cache_modifier must be one of {self.STORE_CACHE}, got {cache!r}")
        if evict not in self.EVICTION:
            raise ValueError(f"eviction_policy must be one of {self.EVICTION}, got {evict!r}")
        ptr = _unwrap(ptr)
        if isinstance(ptr, block_ptr):
            if _unwrap(mask) is not None:
                raise ValueError("store to a block pointer takes boundary_check, not mask")
            bshape = tuple(ptr.block_shape)
            ptr, mask = self._expand_block_ptr(ptr, boundary_check)
            v = _unwrap(value)
            if isinstance(v, tensor) and v.shape != bshape:
                raise ValueError(f"store: value of shape {list(v.shape)} does not match the block {list(bshape)}")
        elif _unwrap(boundary_check):
            raise ValueError("boundary_check is only for block pointers (tl.make_block_ptr)")
        ptr, mask = self._pointer_and_mask(ptr, mask, "store")
        if getattr(ptr.dtype, "const", False):
            raise TypeError("Cannot store to a constant pointer (a tl.const parameter)")
        value = _unwrap(value)
        elt = ptr.dtype.element_ty
        if isinstance(value, tensor) and value.shape and value.shape != ptr.shape:
            # a tile stores through pointers of its own rank (size-1 dimensions broadcast); a lower-rank tile is
            # not silently repeated over extra dimensions, as in Triton
            if len(value.shape) != len(ptr.shape):
                raise ValueError(f"Cannot broadcast, rank mismatch: store of a value of shape {list(value.shape)} "
                                 f"through pointers of shape {list(ptr.shape)}")
        if elt.is_bool():
            elt = tlc.int8
            ptr = self.cast(ptr, pointer_type(elt, ptr.dtype.address_space))
        value = self.broadcast_to(self._as_element(value, elt), ptr.shape)
        operands = [ptr.handle, value.handle] + ([mask.handle] if mask is not None else [])
        self.b.create("store", operands, None, cache=cache, eviction=evict)

    ATOMIC_SEM = ("acq_rel", "acquire", "release", "relaxed")
    ATOMIC_SCOPE = ("gpu", "cta", "sys")

    def atomic_rmw(self, kind, ptr, val, mask=None, sem=None, scope=None) -> tensor:
        sem_, scope_ = _unwrap(sem) or "acq_rel", _unwrap(scope) or "gpu"
        p = self.to_tensor(_unwrap(ptr))
        if kind in ("max", "min") and p.dtype.is_ptr() and p.dtype.element_ty in (tlc.float32, tlc.float64):
            return self._float_atomic_minmax(kind, p, val, mask, sem_, scope_)
        if sem_ not in self.ATOMIC_SEM:
            raise ValueError(f"atomic sem must be one of {self.ATOMIC_SEM}, got {sem_!r}")
        if scope_ not in self.ATOMIC_SCOPE:
            raise ValueError(f"atomic scope must be one of {self.ATOMIC_SCOPE}, got {scope_!r}")
        ptr, mask = self._pointer_and_mask(ptr, mask, f"atomic_{kind}")
        elt = ptr.dtype.element_ty
        if elt.is_bool() or elt.is_fp8() or (kind in ("and", "or", "xor") and not elt.is_int()):
            raise TypeError(f"atomic_{kind} does not support {elt!r}")
        val = _unwrap(val)
        if isinstance(val, tensor) and ptr.type.is_block() and val.shape != ptr.shape:
            shape = self.broadcast_shapes(ptr.shape, val.shape)
            ptr = self.broadcast_to(ptr, shape)
            mask = None if mask is None else self.broadcast_to(mask, shape)
        val = self.broadcast_to(self._as_element(val, elt), ptr.shape)
        ops = [ptr.handle, val.handle] + ([mask.handle] if mask is not None else [])
        return tensor(self.b.create("atomic_rmw", ops, val.type, kind=kind, sem=sem_, scope=scope_), val.type)

    def _float_atomic_minmax(self, kind, ptr, val, mask, sem, scope) -> tensor:
        """Triton's float atomic max/min, built on integer atomics over the bit patterns: IEEE floats of one sign
        order like their bits read as signed ints when non-negative and in reverse of their bits read as unsigned
        ints when negative, so max is a signed max for non-negative values and an unsigned min for negative ones
        (min the mirror image). A NaN value takes neither branch and leaves memory alone; -0.0 counts as
        non-negative."""
        elt = ptr.dtype.element_ty
        bits = elt.primitive_bitwidth
        sint, uint = (tlc.int32, tlc.uint32) if bits == 32 else (tlc.int64, tlc.uint64)
        ptr, mask = self._pointer_and_mask(ptr, mask, f"atomic_{kind}")
        val = self._as_element(val, elt)
        if ptr.shape != val.shape:
            shape = self.broadcast_shapes(ptr.shape, val.shape)
            ptr, val = self.broadcast_to(ptr, shape), self.broadcast_to(val, shape)
            mask = None if mask is None else self.broadcast_to(mask, shape)
        nonneg = self.compare("ge", val, 0.0)
        neg = self.compare("lt", val, 0.0)
        if mask is not None:
            nonneg, neg = self.logical_and(mask, nonneg), self.logical_and(mask, neg)
        # max: non-negative -> signed max, negative -> unsigned min; min: non-negative -> signed min, negative ->
        # unsigned max
        signed_kind, unsigned_kind = ("max", "min") if kind == "max" else ("min", "max")
        sp = self.cast(ptr, pointer_type(sint, ptr.dtype.address_space))
        up = self.cast(ptr, pointer_type(uint, ptr.dtype.address_space))
        a = self.atomic_rmw(signed_kind, sp, self.cast(val, sint, bitcast=True), nonneg, sem, scope)
        b = self.atomic_rmw(unsigned_kind, up, self.cast(val, uint, bitcast=True), neg, sem, scope)
        old = self.where(nonneg, self.cast(a, elt, bitcast=True), self.cast(b, elt, bitcast=True))
        return old

    def atomic_cas(self, ptr, cmp, val, sem=None, scope=None) -> tensor:
        sem_, scope_ = _unwrap(sem) or "acq_rel", _unwrap(scope) or "gpu"
        ptr, _ = self._pointer_and_mask(ptr, None, "atomic_cas")
        elt = ptr.dtype.element_ty
        if elt.is_fp8():
            raise TypeError(f"atomic_cas does not support {elt!r}")
        cmp = self.broadcast_to(self._as_element(cmp, elt), ptr.shape)
        val = self.broadcast_to(self._as_element(val, elt), ptr.shape)
        return tensor(self.b.create("atomic_cas", [ptr.handle, cmp.handle, val.handle], val.type, sem=sem_,
                                    scope=scope_), val.type)
