"""Type promotion and casts: which element type a binary op computes in, how Python scalars become tensors of
it, and how a value converts to another dtype (fp8e4b15 through float16, bools through a comparison).

These rules are the ones every other family of the :class:`~tilec.language.semantic.Semantic` leans on, so they
sit apart from the ops that use them.
"""
from __future__ import annotations

import numbers

from . import core as tlc
from .core import _unwrap, dtype, tensor

_I32 = (-2**31, 2**31 - 1)
_I64 = (-2**63, 2**63 - 1)


def scalar_type_of(v):
    """tl type of a Python scalar the way Triton materialises it."""
    if isinstance(v, bool):
        return tlc.int1
    if isinstance(v, numbers.Integral):
        v = int(v)
        if _I32[0] <= v <= _I32[1]:
            return tlc.int32
        if 0 <= v < 2**32:
            return tlc.uint32
        if _I64[0] <= v <= _I64[1]:
            return tlc.int64
        if 0 <= v < 2**64:
            return tlc.uint64
        raise ValueError(f"integer {v} does not fit in 64 bits")
    if isinstance(v, numbers.Real):
        # float32 unless float32 would lose the value: a finite non-zero magnitude outside float32's normal range
        # (1e50, 1e-40) is float64, as in Triton
        a = abs(float(v))
        if a == 0.0 or a != a or a == float("inf") or _F32_NORMAL[0] <= a <= _F32_NORMAL[1]:
            return tlc.float32
        return tlc.float64
    raise TypeError(f"cannot use {type(v).__name__} value {v!r} as a tensor")


_F32_NORMAL = (2.0 ** -126, (2 - 2.0 ** -23) * 2.0 ** 127)


def _fits(value, ty) -> bool:
    if not ty.is_int() or ty.is_bool():
        return True
    bits = ty.int_bitwidth
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if ty.is_int_signed() else (0, (1 << bits) - 1)
    return lo <= value <= hi


class PromotionRules:
    """Binary-operand promotion and casts, for :class:`~tilec.language.semantic.Semantic`."""

    @staticmethod
    def integer_promote(a: dtype, b: dtype) -> dtype:
        """C's usual arithmetic conversions on (bitwidth, signedness)."""
        sa, sb = a.is_int_signed(), b.is_int_signed()
        if sa == sb:
            return a if a.int_bitwidth > b.int_bitwidth else b
        if not sa:
            return a if a.int_bitwidth >= b.int_bitwidth else b
        return b if b.int_bitwidth >= a.int_bitwidth else a

    def computation_type(self, a: dtype, a_weak: bool, b: dtype, b_weak: bool, div_or_mod: bool) -> dtype:
        """Element type a binary arithmetic op computes in. ``*_weak``: the operand is a Python scalar, which
        adopts the tensor's type when its kind (bool < integer < float) is not above the tensor's."""
        if a_weak != b_weak:
            s, t = (a, b) if a_weak else (b, a)
            if s.kind_rank <= t.kind_rank:
                if div_or_mod and t in (tlc.float16, tlc.bfloat16):
                    return tlc.float32
                return t
        if a.is_fp64() or b.is_fp64():
            return tlc.float64
        if a.is_fp32() or b.is_fp32():
            return tlc.float32
        if a.is_fp16() or b.is_fp16():
            return tlc.float32 if div_or_mod else tlc.float16
        if a.is_bf16() or b.is_bf16():
            if div_or_mod or not (a.is_bf16() and b.is_bf16()):
                return tlc.float32
            return tlc.bfloat16
        if a.is_fp8e4b15() or b.is_fp8e4b15():
            return tlc.float16  # no IR float type: computed in float16, which holds every value
        if a.is_fp8() and b.is_fp8():
            return a if a == b else tlc.float16
        if a.is_fp8() or b.is_fp8():
            return a if a.is_fp8() else b
        if not (a.is_int() and b.is_int()):
            raise TypeError(f"unexpected operand types {a!r} and {b!r}")
        if div_or_mod and a.is_int_signed() != b.is_int_signed():
            raise TypeError(f"Cannot use /, //, or % with {a!r} and {b!r} because they have different "
                            "signedness; cast one of them first")
        return self.integer_promote(a, b)

    def binary_operands(self, x, y, allow_x_ptr=False, allow_y_ptr=False, arithmetic=True, div_or_mod=False,
                        what="add"):
        """Convert Python scalars, check pointer use, cast to the common type and broadcast to one shape.
        ``what`` names the operation in the error for a pointer paired with a float."""
        x, y = _unwrap(x), _unwrap(y)
        x_weak, y_weak = not isinstance(x, tensor), not isinstance(y, tensor)
        xt = scalar_type_of(x) if x_weak else x.dtype
        yt = scalar_type_of(y) if y_weak else y.dtype
        for t, other, allow in ((xt, yt, allow_x_ptr), (yt, xt, allow_y_ptr)):
            if t.is_ptr():
                if not allow:
                    raise TypeError(f"cannot use a pointer ({t}) here")
                if other.is_floating():
                    if what == "add":
                        raise TypeError(f"cannot add a floating-point offset ({other!r}) to a pointer")
                    raise TypeError(f"cannot {what} a pointer and a floating-point value ({other!r})")
        if arithmetic and not xt.is_ptr() and not yt.is_ptr():
            rt = self.computation_type(xt, x_weak, yt, y_weak, div_or_mod)
            for weak, v in ((x_weak, x), (y_weak, y)):
                if weak and rt.is_int() and not rt.is_bool() and isinstance(v, numbers.Number):
                    if v < 0 and rt.is_int_unsigned():
                        raise ValueError(f"cannot combine an unsigned {rt!r} tensor with the negative scalar "
                                         f"{v}; cast one of them explicitly")
                    if isinstance(v, numbers.Integral) and not _fits(int(v), rt):
                        raise ValueError(f"scalar {v} is out of range for {rt!r}")
            x = self.to_tensor(x, rt) if x_weak else self.cast(x, rt)
            y = self.to_tensor(y, rt) if y_weak else self.cast(y, rt)
        else:
            x, y = self.to_tensor(x), self.to_tensor(y)
        return self.broadcast_pair(x, y)

    def cast(self, x, dst: dtype, fp_downcast_rounding=None, bitcast=False) -> tensor:
        x = self.to_tensor(x)
        dst = _unwrap(dst)
        if not isinstance(dst, dtype) or dst.is_block():
            raise TypeError(f"cast target must be a dtype, got {dst!r}")
        src = x.dtype
        dst_ty = x.type.with_element(dst)
        if src == dst:
            return x
        if bitcast and src.is_ptr() and dst.is_ptr():  # pointers to pointers: only the pointee changes
            bitcast = False
        if bitcast:
            if src.primitive_bitwidth != dst.primitive_bitwidth:
                raise ValueError(f"cannot bitcast {src!r} ({src.primitive_bitwidth} bits) to {dst!r} "
                                 f"({dst.primitive_bitwidth} bits)")
            if src.ir_name is not None and src.ir_name == dst.ir_name:  # one IR type (fp8e4b15 and uint8)
                return tensor(x.handle, dst_ty)
            return tensor(self.b.create("bitcast", [x.handle], dst_ty), dst_ty)
        if src.is_fp8e4b15():
            return self.cast(self._e4b15_to_f16(x), dst, fp_downcast_rounding)
        if dst.is_fp8e4b15():
            return self._f16_to_e4b15(self.cast(x, tlc.float16))
        if dst.is_bool() and not src.is_ptr():
            zero = self.to_tensor(0 if src.is_int() else 0.0, src)
            return self.compare("ne", x, self.broadcast_to(zero, x.shape))
        if src.is_ptr() != dst.is_ptr() and not (src.is_ptr() and dst == tlc.int64 or
                                                dst.is_ptr() and src.is_int()):
            raise TypeError(f"cannot cast {src!r} to {dst!r}")
        rounding = _unwrap(fp_downcast_rounding)
        attrs = {}
        if rounding is not None:
            if not (src.is_floating() and dst.is_floating() and dst.primitive_bitwidth < src.primitive_bitwidth):
                raise ValueError("fp_downcast_rounding is only for floating-point down-casts")
            if rounding not in ("rtne", "rtz"):
                raise ValueError(f"fp_downcast_rounding must be 'rtne' or 'rtz', got {rounding!r}")
            attrs["rounding"] = rounding
        if dst.is_ptr() and src.is_int() and src != tlc.int64:
            x = self.cast(x, tlc.int64)
        return tensor(self.b.create("cast", [x.handle], dst_ty, **attrs), dst_ty)

    def _e4b15_to_f16(self, x: tensor) -> tensor:
        """fp8e4b15 -> float16, exactly: both have exponent bias 15, so the code's sign, exponent and mantissa
        move into place (subnormals included)."""
        b = self.cast(self.cast(x, tlc.uint8, bitcast=True), tlc.uint16)
        h = self.or_(self.shl(self.and_(b, 0x80), 8), self.shl(self.and_(b, 0x7F), 7))
        return self.cast(h, tlc.float16, bitcast=True)

    def _f16_to_e4b15(self, h: tensor) -> tensor:
        """float16 -> fp8e4b15: the mantissa rounded to nearest even, magnitudes past the largest code (1.875)
        saturate to it, NaN included."""
        bits = self.cast(h, tlc.uint16, bitcast=True)
        sign = self.shr(self.and_(bits, 0x8000), 8)
        mag = self.and_(bits, 0x7FFF)
        rounded = self.shr(self.add(self.add(mag, 0x3F), self.and_(self.shr(mag, 7), 1)), 7)
        code = self.or_(sign, self.minmax("min", rounded, 0x7F, False))
        return self.cast(self.cast(code, tlc.uint8), tlc.float8e4b15, bitcast=True)
