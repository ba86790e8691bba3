"""The language's semantics, in one place: type promotion, broadcasting, argument checks, and which ops to emit.

Everything reaches the program through ``self.b``, a builder with a tiny protocol, so the same rules drive both
the IR code generator (``tilec.frontend.tir_builder.TirBuilder``) and a future numpy interpreter:

- ``b.constant(value, ty)`` -> handle of a scalar or tile constant of tl type ``ty``;
- ``b.create(opname, operands, ty, **attrs)`` -> handle of the op's single result (``ty`` None: no result);
- ``b.reduce(srcs, axis, result_types, combine)`` -> handles; ``combine(acc_handles, x_handles)`` builds the
  combine function with this same Semantic and returns handles;
- ``b.scan(srcs, axis, reverse, combine)`` -> handles, the same way for inclusive scans;
- ``b.inline_asm(asm, constraints, operands, types, pure, pack)`` -> handles of target assembly's results (a
  builder that cannot run assembly refuses it here).

Errors are ``TypeError``/``ValueError`` with a user-facing message; the code generator attaches the location.
"""
from __future__ import annotations

import numbers
import os
import sys

from . import core as tlc
from .core import _unwrap, block_ptr, block_type, dtype, pointer_type, tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tilec/
_I32 = (-2**31, 2**31 - 1)
_I64 = (-2**63, 2**63 - 1)


def is_pow2(n) -> bool:
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


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


class Semantic:
    def __init__(self, builder, options=None):
        self.b = builder
        self.options = options or {}

    # -------------------------------------------------------------------------------------------------------
    # conversions of Python values
    # -------------------------------------------------------------------------------------------------------
    MIN_DOT_SIZE = 16  # compiled dots tile by 16 (the interpreter takes any size)

    def to_tensor(self, v, ty=None) -> tensor:
        v = _unwrap(v)
        if isinstance(v, tensor):
            return v
        if ty is None:
            ty = scalar_type_of(v)
        if isinstance(v, bool) or (ty.is_floating() and isinstance(v, numbers.Real)):
            v = float(v) if ty.is_floating() else bool(v)
        elif isinstance(v, numbers.Integral) and ty.is_int():
            v = int(v)
        elif isinstance(v, numbers.Real) and ty.is_int():
            raise TypeError(f"cannot convert {v!r} to {ty!r} implicitly")
        elif not isinstance(v, numbers.Number):
            raise TypeError(f"cannot use {type(v).__name__} value {v!r} as a tensor")
        return tensor(self.b.constant(v, ty), ty)

    def to_bool(self, x: tensor) -> bool:
        raise TypeError("a runtime tensor has no compile-time truth value; use a runtime `if` (scalars only) "
                        "or tl.where")

    def to_index(self, x: tensor) -> int:
        raise TypeError("a runtime tensor cannot be used where a compile-time int is needed")

    # -------------------------------------------------------------------------------------------------------
    # type promotion
    # -------------------------------------------------------------------------------------------------------
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

    # -------------------------------------------------------------------------------------------------------
    # shapes
    # -------------------------------------------------------------------------------------------------------
    def broadcast_shapes(self, a: tuple, b: tuple) -> tuple:
        if len(a) < len(b):
            a = (1,) * (len(b) - len(a)) + tuple(a)
        elif len(b) < len(a):
            b = (1,) * (len(a) - len(b)) + tuple(b)
        out = []
        for i, (p, q) in enumerate(zip(a, b)):
            if p != q and p != 1 and q != 1:
                raise ValueError(f"cannot broadcast shapes {list(a)} and {list(b)}: dimension {i} is {p} vs {q}")
            out.append(q if p == 1 else p)
        return tuple(out)

    def broadcast_to(self, x: tensor, shape: tuple) -> tensor:
        shape = tuple(shape)
        if x.shape == shape:
            return x
        if not x.type.is_block():
            if not shape:
                return x
            return tensor(self.b.create("splat", [x.handle], block_type(x.dtype, shape)), block_type(x.dtype, shape))
        src = x.shape
        if len(src) > len(shape):
            raise ValueError(f"cannot broadcast shape {list(src)} to {list(shape)}")
        while len(x.shape) < len(shape):
            x = self.expand_dims(x, 0)
        for i, (p, q) in enumerate(zip(x.shape, shape)):
            if p != q and p != 1:
                raise ValueError(f"cannot broadcast shape {list(src)} to {list(shape)} (dimension {i})")
        ty = block_type(x.dtype, shape)
        return tensor(self.b.create("broadcast", [x.handle], ty), ty)

    def broadcast_pair(self, x: tensor, y: tensor):
        if x.shape == y.shape:
            return x, y
        shape = self.broadcast_shapes(x.shape, y.shape)
        return self.broadcast_to(x, shape), self.broadcast_to(y, shape)

    def expand_dims(self, x: tensor, axis: int) -> tensor:
        x = self.to_tensor(x)
        axis = _unwrap(axis)
        rank = len(x.shape)
        if not isinstance(axis, int) or not -rank - 1 <= axis <= rank:
            raise ValueError(f"invalid axis {axis}. Expected {-rank - 1} <= axis < {rank + 1} (expand_dims of a "
                             f"rank-{rank} tensor)")
        axis = axis + rank + 1 if axis < 0 else axis
        if not x.type.is_block():
            ty = block_type(x.dtype, (1,))
            return tensor(self.b.create("splat", [x.handle], ty), ty)
        shape = list(x.shape)
        shape.insert(axis, 1)
        ty = block_type(x.dtype, shape)
        return tensor(self.b.create("expand_dims", [x.handle], ty, axis=axis), ty)

    def getitem(self, x: tensor, slices) -> tensor:
        if not isinstance(slices, tuple):
            slices = (slices,)
        slices = tuple(_unwrap(s) for s in slices)
        dim = 0
        for s in slices:
            if s is None:
                x = self.expand_dims(x, dim)
                dim += 1
            elif isinstance(s, slice) and s.start is None and s.stop is None and s.step is None:
                dim += 1  # ':' keeps a dimension (past the last one it is a no-op, as in Triton)
            else:
                raise TypeError(f"unsupported tensor index {s!r}: only None and ':' are supported")
        return x

    def reshape(self, x: tensor, shape, can_reorder=False) -> tensor:
        shape = tuple(_unwrap(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        n = 1
        for s in shape:
            if not isinstance(s, int) or isinstance(s, bool):
                raise TypeError(f"reshape's shape must be compile-time ints (tl.constexpr), got {s!r}")
            n *= s
        if n != x.numel:
            raise ValueError(f"cannot reshape {list(x.shape)} ({x.numel} elements) to {list(shape)}")
        if not x.shape:  # a scalar into a one-element tile is a splat
            return self.broadcast_to(x, shape)
        if x.shape == shape:
            return x
        ty = block_type(x.dtype, shape) if shape else x.dtype
        return tensor(self.b.create("reshape", [x.handle], ty), ty)

    def trans(self, x: tensor, dims) -> tensor:
        rank = len(x.shape)
        if dims is None or dims == () or dims == []:
            if rank != 2:
                raise ValueError(f"trans without dims needs a 2-d tensor, got shape {list(x.shape)}")
            dims = (1, 0)
        dims = tuple(_unwrap(d) for d in dims)
        if sorted(dims) != list(range(rank)):
            raise ValueError(f"trans dims {list(dims)} are not a permutation of {rank} dimensions")
        ty = block_type(x.dtype, [x.shape[d] for d in dims])
        return tensor(self.b.create("trans", [x.handle], ty, order=dims), ty)

    def gather(self, src, index, axis) -> tensor:
        """``out[..., i, ...] = src[..., index[..., i, ...], ...]`` along ``axis``; other dimensions must match.
        One ``gather`` op: an indexed read per element (indices outside the axis are undefined, as in Triton)."""
        src, index = self.to_tensor(src), self.to_tensor(index)
        if not index.dtype.is_int() or index.dtype.is_bool():
            raise TypeError(f"gather index must be an integer tensor, got {index.dtype!r}")
        if len(src.shape) != len(index.shape) or not src.shape:
            raise ValueError(f"gather: src {list(src.shape)} and index {list(index.shape)} need one rank >= 1")
        rank = len(src.shape)
        ax = _unwrap(axis)
        if not isinstance(ax, int) or isinstance(ax, bool) or not -rank <= ax < rank:
            raise ValueError(f"gather: axis {ax!r} out of range for a tensor of shape {list(src.shape)}")
        ax %= rank
        for d, (p, q) in enumerate(zip(src.shape, index.shape)):
            if d != ax and p != q:
                raise ValueError(f"gather: src {list(src.shape)} and index {list(index.shape)} differ in dimension {d}")
        ty = block_type(src.dtype, index.shape)
        return tensor(self.b.create("gather", [src.handle, index.handle], ty, axis=ax), ty)

    def check_block_shape(self, shape):
        for i, s in enumerate(shape):
            if not isinstance(s, int):
                raise TypeError(f"shape element {i} must be a compile-time int, got {s!r}")
            if not is_pow2(s):
                raise ValueError(f"shape element {i} must be a power of 2, got {s}")
        block_type(tlc.int32, shape)  # the element count, refused as Triton words it

    # -------------------------------------------------------------------------------------------------------
    # casts
    # -------------------------------------------------------------------------------------------------------
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

    # -------------------------------------------------------------------------------------------------------
    # arithmetic
    # -------------------------------------------------------------------------------------------------------
    def _emit(self, op, x: tensor, y: tensor, **attrs) -> tensor:
        return tensor(self.b.create(op, [x.handle, y.handle], x.type, **attrs), x.type)

    def add(self, x, y) -> tensor:
        x, y = self.binary_operands(x, y, True, True)
        if x.dtype.is_ptr() and y.dtype.is_ptr():
            raise TypeError("cannot add two pointers")
        if y.dtype.is_ptr():
            x, y = y, x
        if x.dtype.is_ptr():
            return tensor(self.b.create("addptr", [x.handle, y.handle], x.type), x.type)
        return self._emit("add", x, y)

    def sub(self, x, y) -> tensor:
        x, y = self.binary_operands(x, y, True, False)
        if x.dtype.is_ptr():
            return tensor(self.b.create("addptr", [x.handle, self.neg(y).handle], x.type), x.type)
        return self._emit("sub", x, y)

    def mul(self, x, y) -> tensor:
        x, y = self.binary_operands(x, y)
        return self._emit("mul", x, y)

    def truediv(self, x, y) -> tensor:
        x, y = self.binary_operands(x, y, div_or_mod=True)
        xt, yt = x.dtype, y.dtype
        if xt.is_int() and yt.is_int():
            x, y = self.cast(x, tlc.float32), self.cast(y, tlc.float32)
        elif xt.is_floating() and yt.is_int():
            y = self.cast(y, xt)
        elif xt.is_int() and yt.is_floating():
            x = self.cast(x, yt)
        elif xt != yt:
            if xt.fp_mantissa_width > yt.fp_mantissa_width:
                y = self.cast(y, xt)
            else:
                x = self.cast(x, yt)
        return self._emit("div", x, y)

    def floordiv(self, x, y) -> tensor:
        x, y = self.binary_operands(x, y, div_or_mod=True)
        if not (x.dtype.is_int() and y.dtype.is_int()):
            raise TypeError(f"// needs integer operands, got {x.dtype!r} and {y.dtype!r}")
        return self._emit("div", x, y)

    def mod(self, x, y) -> tensor:
        x, y = self.binary_operands(x, y, div_or_mod=True)
        return self._emit("rem", x, y)

    def pow(self, x, y) -> tensor:
        x, y = self.binary_operands(x, y)
        if not x.dtype.is_floating():
            raise TypeError(f"** needs floating-point operands, got {x.dtype!r}")
        return self._emit("pow", x, y)

    def _bitwise(self, op, x, y) -> tensor:
        """Bitwise ops and shifts promote like arithmetic (a Python int adopts the tensor's type, so
        ``uint8 << 7`` stays uint8), then take the wider integer type."""
        xt = x.dtype if isinstance(_unwrap(x), tensor) else scalar_type_of(_unwrap(x))
        yt = y.dtype if isinstance(_unwrap(y), tensor) else scalar_type_of(_unwrap(y))
        if not (xt.is_int() and yt.is_int()):
            raise TypeError(f"invalid operands of type {xt!r} and {yt!r} for a bitwise operator (integers only)")
        xv, yv = _unwrap(x), _unwrap(y)
        if op in ("shl", "shr") and isinstance(xv, tensor) and isinstance(yv, tensor) and not xt.is_bool():
            # a shift keeps its left operand's signedness, in the wider width (int8 >> uint16 shifts arithmetically
            # in 16 bits)
            bits = max(xt.int_bitwidth, yt.int_bitwidth)
            rt = tlc.dtype(("int" if xt.is_int_signed() else "uint") + str(bits))
            x, y = self.cast(xv, rt), self.cast(yv, rt)
        x, y = self.binary_operands(x, y)
        rt = self.integer_promote(x.dtype, y.dtype)
        return self._emit(op, self.cast(x, rt), self.cast(y, rt))

    def and_(self, x, y):
        return self._bitwise("and", x, y)

    def or_(self, x, y):
        return self._bitwise("or", x, y)

    def xor_(self, x, y):
        return self._bitwise("xor", x, y)

    def shl(self, x, y):
        return self._bitwise("shl", x, y)

    def shr(self, x, y):
        return self._bitwise("shr", x, y)

    def logical_and(self, x, y):
        return self.and_(self.cast(x, tlc.int1), self.cast(y, tlc.int1))

    def logical_or(self, x, y):
        return self.or_(self.cast(x, tlc.int1), self.cast(y, tlc.int1))

    def logical_not(self, x):
        x = self.to_tensor(x)
        return self.compare("eq", x, 0 if not x.dtype.is_floating() else 0.0)

    def compare(self, pred, x, y) -> tensor:
        x, y = self.binary_operands(x, y, True, True, what="compare")
        if x.dtype != y.dtype:
            raise TypeError(f"cannot compare {x.dtype!r} with {y.dtype!r}")
        ty = x.type.with_element(tlc.int1)
        return tensor(self.b.create("cmp", [x.handle, y.handle], ty, predicate=pred), ty)

    def neg(self, x) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.is_ptr():
            raise TypeError("cannot negate a pointer")
        return self.unary("neg", x)

    def invert(self, x) -> tensor:
        x = self.to_tensor(x)
        if not x.dtype.is_int():
            raise TypeError(f"~ needs an integer operand, got {x.dtype!r}")
        return self.unary("not", x)

    def abs(self, x) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.is_int_unsigned() or x.dtype.is_bool():
            return x
        if x.dtype.is_fp8():  # clear the sign bit: exact for every fp8 value, NaNs included
            bits = self.cast(x, tlc.uint8, bitcast=True)
            return self.cast(self.and_(bits, 0x7F), x.dtype, bitcast=True)
        return self.unary("abs", x)

    def unary(self, op, x: tensor) -> tensor:
        return tensor(self.b.create(op, [x.handle], x.type), x.type)

    # float-only math: name -> allowed element types (None: any float)
    MATH_DTYPES = {"exp": ("fp32", "fp64"), "exp2": ("fp32", "fp64"), "log": ("fp32", "fp64"),
                   "log2": ("fp32", "fp64"), "sqrt": ("fp32", "fp64"), "rsqrt": ("fp32", "fp64"),
                   "sin": ("fp32", "fp64"), "cos": ("fp32", "fp64"), "sqrt_rn": ("fp32", "fp64"),
                   "floor": ("fp32", "fp64"), "ceil": ("fp32", "fp64"), "erf": ("fp32", "fp64"),
                   "tanh": ("fp32", "fp64"), "log1p": ("fp32", "fp64"), "expm1": ("fp32", "fp64"),
                   "sigmoid": ("fp32", "fp64"), "trunc": ("fp32", "fp64"), "round": ("fp32", "fp64")}

    def math(self, op, x) -> tensor:
        x = self.to_tensor(x)
        allowed = self.MATH_DTYPES.get(op)
        if allowed is not None and x.dtype.name not in allowed:
            raise TypeError(f"{op} expects {' or '.join(allowed)}, got {x.dtype}; convert with .to(tl.float32)")
        return self.unary(op, x)

    def minmax(self, op, x, y, propagate_nan=False) -> tensor:
        x, y = self.binary_operands(x, y)
        if x.dtype.is_floating():
            return self._emit(op, x, y, propagate_nan=bool(propagate_nan))
        return self._emit(op, x, y)

    def fma(self, x, y, z) -> tensor:
        x, y = self.binary_operands(x, y)
        x, z = self.binary_operands(x, z)
        x, y = self.binary_operands(x, y)
        return tensor(self.b.create("fma", [x.handle, y.handle, z.handle], x.type), x.type)

    def where(self, cond, x, y) -> tensor:
        cond = self.cast(self.to_tensor(cond), tlc.int1)
        x, y = self.binary_operands(x, y, True, True, what="select between")
        shape = self.broadcast_shapes(cond.shape, x.shape)
        cond, x, y = (self.broadcast_to(v, shape) for v in (cond, x, y))
        return tensor(self.b.create("select", [cond.handle, x.handle, y.handle], x.type), x.type)

    # -------------------------------------------------------------------------------------------------------
    # creation
    # -------------------------------------------------------------------------------------------------------
    def arange(self, start, end) -> tensor:
        start, end = _unwrap(start), _unwrap(end)
        if not isinstance(start, int) or not isinstance(end, int):
            raise TypeError(f"arange's arguments must be compile-time ints (tl.constexpr), got {start!r}, {end!r}")
        if not _I32[0] <= start <= _I32[1] or not _I32[0] <= end <= _I32[1]:
            raise ValueError("arange's arguments must fit in int32")
        if end <= start:
            raise ValueError(f"arange's end ({end}) must be greater than its start ({start})")
        if not is_pow2(end - start):
            raise ValueError(f"arange's range must be a power of 2, got {end - start}")
        ty = block_type(tlc.int32, (end - start,))
        return tensor(self.b.create("arange", [], ty, start=start, end=end), ty)

    def iota(self, n: int, axis: int, rank: int) -> tensor:
        """``arange(0, n)`` laid along ``axis`` of a rank-``rank`` tensor (size 1 elsewhere), for index
        arithmetic that broadcasts against that tensor. Built with ``expand_dims`` rather than a reshape, so that
        backends still see an ``arange`` (the CPU its stride, a GPU a slice of the anchor layout)."""
        idx = self.arange(0, n)
        for d in range(rank):
            if d != axis:
                idx = self.expand_dims(idx, d)
        return idx

    def full(self, shape, value, dt) -> tensor:
        shape = _unwrap(shape)
        shape = tuple(_unwrap(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        dt = _unwrap(dt)
        self.check_block_shape(shape)
        value = _unwrap(value)
        if isinstance(value, tensor):
            if value.shape:
                raise ValueError("full's value must be a scalar")
            return self.broadcast_to(self.cast(value, dt), shape)
        if dt is None:
            dt = scalar_type_of(value)
        if not isinstance(dt, dtype) or dt.is_block():
            raise TypeError(f"full needs a dtype, got {dt!r}")
        ty = block_type(dt, shape) if shape else dt
        v = float(value) if dt.is_floating() else (bool(value) if dt.is_bool() else int(value))
        return tensor(self.b.constant(v, ty), ty)

    def program_id(self, axis) -> tensor:
        return self._grid_query("program_id", axis)

    def num_programs(self, axis) -> tensor:
        return self._grid_query("num_programs", axis)

    def _grid_query(self, op, axis) -> tensor:
        axis = _unwrap(axis)
        if not isinstance(axis, int) or axis not in (0, 1, 2):
            raise ValueError(f"{op} axis must be 0, 1, or 2 but got {axis!r} (a compile-time int)")
        return tensor(self.b.create(op, [], tlc.int32, axis=axis), tlc.int32)

    # -------------------------------------------------------------------------------------------------------
    # memory
    # -------------------------------------------------------------------------------------------------------
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

    # -- block pointers: expanded here into pointer tiles and bounds masks ------------------------------------
    def make_block_ptr(self, base, shape, strides, offsets, block_shape, order) -> block_ptr:
        base = self.to_tensor(base)
        if not base.dtype.is_ptr() or base.shape:
            raise TypeError(f"make_block_ptr needs a scalar pointer base, got {base.type}")
        shape, strides, offsets = (list(_unwrap(v)) for v in (shape, strides, offsets))
        block_shape = [_unwrap(b) for b in _unwrap(block_shape)]
        order = [_unwrap(o) for o in _unwrap(order)]
        n = len(block_shape)
        if not (len(shape) == len(strides) == len(offsets) == n):
            raise ValueError(f"make_block_ptr: shape, strides, offsets and block_shape need {n} entries each")
        self.check_block_shape(block_shape)
        if sorted(order) != list(range(n)):
            raise ValueError(f"make_block_ptr: order {order} is not a permutation of {n} dimensions")
        shape = [self.cast(self.to_tensor(v), tlc.int64) for v in shape]
        strides = [self.cast(self.to_tensor(v), tlc.int64) for v in strides]
        offsets = [self.cast(self.to_tensor(v), tlc.int32) for v in offsets]
        return block_ptr(base, shape, strides, offsets, block_shape, order)

    def advance(self, bp, offsets) -> block_ptr:
        if not isinstance(bp, block_ptr):
            raise TypeError(f"advance needs a block pointer, got {type(bp).__name__}")
        offsets = list(_unwrap(offsets))
        if len(offsets) != len(bp.block_shape):
            raise ValueError(f"advance needs {len(bp.block_shape)} offsets, got {len(offsets)}")
        new = [o if (not isinstance(d, tensor) and d == 0) else self.add(o, self.cast(self.to_tensor(d), tlc.int32))
               for o, d in zip(bp.offsets, (_unwrap(d) for d in offsets))]
        return block_ptr(bp.base, bp.shape, bp.strides, new, bp.block_shape, bp.order)

    def _expand_block_ptr(self, bp: block_ptr, boundary_check):
        """The pointer tile of ``bp``'s block and the mask of its in-bounds elements along ``boundary_check``."""
        n = len(bp.block_shape)
        checks = sorted({_unwrap(d) for d in (_unwrap(boundary_check) or ())})
        for d in checks:
            if not isinstance(d, int) or not 0 <= d < n:
                raise ValueError(f"boundary_check dimension {d} out of range for a {n}-d block pointer")
        ptr, mask = bp.base, None
        for d in range(n):
            idx = self.add(self.iota(bp.block_shape[d], d, n), bp.offsets[d])
            ptr = self.add(ptr, self.mul(self.cast(idx, tlc.int64), bp.strides[d]))
            if d in checks:
                ok = self.logical_and(self.compare("ge", idx, 0),
                                      self.compare("lt", self.cast(idx, tlc.int64), bp.shape[d]))
                mask = ok if mask is None else self.logical_and(mask, ok)
        shape = tuple(bp.block_shape)
        return self.broadcast_to(ptr, shape), None if mask is None else self.broadcast_to(mask, shape)

    def descriptor_load(self, base, shape, strides, offsets, block_shape, padding) -> tensor:
        """A tensor descriptor's block at ``offsets``, as one ``descriptor_load`` op (see ``expand-descriptors``)."""
        offsets = [self.cast(self.to_tensor(_unwrap(o)), tlc.int32) for o in offsets]
        for o in offsets:
            if o.shape:
                raise ValueError(f"tensor descriptor offsets must be scalars, got a tensor of shape {list(o.shape)}")
        elt = base.dtype.element_ty
        # bools live in memory as bytes: the pointer load knows how; interpreted debug runs check pointer loads
        if elt.is_bool() or (getattr(self.b, "checks_pointer_accesses", False) and self.debug_enabled()):
            return self.expand_descriptor_load(base, shape, strides, offsets, block_shape, padding)
        ty = block_type(elt, list(block_shape))
        operands = [base.handle] + [v.handle for v in (*shape, *strides, *offsets)]
        return tensor(self.b.create("descriptor_load", operands, ty, block_shape=tuple(block_shape),
                                    padding=padding), ty)

    def descriptor_store(self, base, shape, strides, offsets, block_shape, value):
        """``value`` stored as a tensor descriptor's block at ``offsets``, as one ``descriptor_store`` op."""
        n = len(block_shape)
        bshape = tuple(block_shape)
        v = _unwrap(value)
        if isinstance(v, tensor) and v.shape != bshape:
            raise ValueError(f"store: value of shape {list(v.shape)} does not match the block {list(bshape)}")
        elt = base.dtype.element_ty
        if elt.is_bool() or (getattr(self.b, "checks_pointer_accesses", False) and self.debug_enabled()):
            bp = self.make_block_ptr(base, shape, strides, offsets, block_shape, tuple(reversed(range(n))))
            return self.store(bp, value, boundary_check=tuple(range(n)))
        offsets = [self.cast(self.to_tensor(_unwrap(o)), tlc.int32) for o in offsets]
        for o in offsets:
            if o.shape:
                raise ValueError(f"tensor descriptor offsets must be scalars, got a tensor of shape {list(o.shape)}")
        v = self.broadcast_to(self._as_element(v, elt), bshape)
        operands = [base.handle, v.handle] + [x.handle for x in (*shape, *strides, *offsets)]
        self.b.create("descriptor_store", operands, None, block_shape=bshape)

    def expand_descriptor_load(self, base, shape, strides, offsets, block_shape, padding) -> tensor:
        """What ``descriptor_load`` means: a block-pointer load with every dimension bounds-checked."""
        n = len(block_shape)
        bp = self.make_block_ptr(base, shape, strides, offsets, block_shape, tuple(reversed(range(n))))
        return self.load(bp, boundary_check=tuple(range(n)), padding_option=padding)

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

    # -------------------------------------------------------------------------------------------------------
    # reductions and dot
    # -------------------------------------------------------------------------------------------------------
    def reduce(self, inputs, axis, combine, keep_dims=False):
        """Generic reduction: ``combine(accs, xs)`` gets lists of scalar tensors and returns a list."""
        single = isinstance(inputs, tensor)
        inputs = [inputs] if single else list(inputs)
        axis = _unwrap(axis)
        if axis is None:  # everything; keep_dims keeps every dimension as 1
            rank = len(inputs[0].shape)
            inputs = [self.reshape(x, (x.numel,)) for x in inputs]
            outs = self.reduce(inputs, 0, combine, False)
            if keep_dims and rank:
                outs = [self.reshape(o, (1,) * rank) for o in outs]
            return outs[0] if single else tuple(outs)
        shape = inputs[0].shape
        if not shape:
            raise ValueError("cannot reduce a scalar")
        for x in inputs:
            if x.shape != shape:
                raise ValueError("reduce inputs must share one shape")
        if not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
            raise ValueError(f"reduction axis {axis} out of range for shape {list(shape)}")
        axis %= len(shape)
        rshape = shape[:axis] + shape[axis + 1:]
        rtypes = [block_type(x.dtype, rshape) if rshape else x.dtype for x in inputs]

        handles = self.b.reduce([x.handle for x in inputs], axis, rtypes, self._combine_region(inputs, combine))
        outs = [tensor(h, t) for h, t in zip(handles, rtypes)]
        if keep_dims:
            outs = [self.expand_dims(o, axis) for o in outs]
        return outs[0] if single else tuple(outs)

    def _combine_region(self, inputs, combine):
        """The builder's combine callback for a reduce or scan over ``inputs``: wraps handles as scalar tensors,
        runs ``combine`` and casts its results back to the inputs' element types."""
        def region(acc_handles, x_handles):
            accs = [tensor(h, x.dtype) for h, x in zip(acc_handles, inputs)]
            xs = [tensor(h, x.dtype) for h, x in zip(x_handles, inputs)]
            res = combine(accs, xs)
            res = [res] if isinstance(res, tensor) or not isinstance(res, (tuple, list)) else list(res)
            return [self.cast(self.to_tensor(r, x.dtype), x.dtype).handle for r, x in zip(res, inputs)]
        return region

    def scan(self, inputs, axis, combine, reverse=False):
        """Generic inclusive scan along ``axis``; ``combine`` as for :meth:`reduce`."""
        single = isinstance(inputs, tensor)
        inputs = [inputs] if single else list(inputs)
        axis = _unwrap(axis)
        shape = inputs[0].shape
        if not shape:
            raise ValueError("cannot scan a scalar")
        if not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
            raise ValueError(f"scan axis {axis} out of range for shape {list(shape)}")
        axis %= len(shape)

        handles = self.b.scan([x.handle for x in inputs], axis, bool(_unwrap(reverse)),
                              self._combine_region(inputs, combine))
        outs = [tensor(h, x.type) for h, x in zip(handles, inputs)]
        return outs[0] if single else tuple(outs)

    def cumsum(self, x, axis=0, reverse=False, dtype=None):
        x = self.to_tensor(x)
        dt = self._sum_dtype(x.dtype, _unwrap(dtype))
        if dt is not None:
            x = self.cast(x, dt)
        return self.scan(x, axis, lambda a, b: [self.add(a[0], b[0])], reverse)

    def cumprod(self, x, axis=0, reverse=False):
        x = self.to_tensor(x)
        if x.dtype.is_bf16():
            x = self.cast(x, tlc.float32)
        return self.scan(x, axis, lambda a, b: [self.mul(a[0], b[0])], reverse)

    def arg_extreme(self, x, axis, keep_dims, largest, tie_break_left=True):
        """(value, index) of the max/min along ``axis``; ties pick the smallest index."""
        x = self.to_tensor(x)
        axis = _unwrap(axis)
        if axis is None:
            rank = len(x.shape)
            outs = self.arg_extreme(self.reshape(x, (x.numel,)), 0, False, largest, tie_break_left)
            if keep_dims and rank:
                outs = tuple(self.reshape(o, (1,) * rank) for o in outs)
            return outs
        if not x.shape:
            raise ValueError("cannot reduce a scalar")
        if not isinstance(axis, int) or not -len(x.shape) <= axis < len(x.shape):
            raise ValueError(f"reduction axis {axis} out of range for shape {list(x.shape)}")
        axis %= len(x.shape)
        idx = self.broadcast_to(self.iota(x.shape[axis], axis, len(x.shape)), x.shape)
        pred = "gt" if largest else "lt"

        def combine(a, b):
            av, ai = a
            bv, bi = b
            better = self.compare(pred, bv, av)
            tie = self.logical_and(self.compare("eq", bv, av), self.compare("lt", bi, ai))
            if x.dtype.is_floating():  # NaN wins, like numpy's argmax
                better = self.logical_or(better, self.logical_and(self.compare("ne", bv, bv),
                                                                  self.compare("eq", av, av)))
            take = self.logical_or(better, tie) if tie_break_left else better
            return [self.where(take, bv, av), self.where(take, bi, ai)]

        return self.reduce([x, idx], axis, combine, keep_dims)

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

    def _sum_dtype(self, t: dtype, dt):
        """The type sums and products accumulate in: ``dt`` when given; float32 for bfloat16 (as Triton: a bf16
        accumulator loses a bit per add); 32 bits for narrow integers."""
        if dt is not None:
            return dt
        if t.is_bf16():
            return tlc.float32
        if t.is_int() and t.int_bitwidth < 32:
            return tlc.uint32 if t.is_int_unsigned() else tlc.int32
        return None

    def sum(self, x, axis=None, keep_dims=False, dtype=None):
        x = self.to_tensor(x)
        if x.dtype.is_ptr():
            raise TypeError(f"sum needs numbers, got pointers ({x.dtype})")
        dt = self._sum_dtype(x.dtype, _unwrap(dtype))
        if dt is not None:
            x = self.cast(x, dt)
        return self.reduce(x, axis, lambda a, b: [self.add(a[0], b[0])], keep_dims)

    def max(self, x, axis=None, keep_dims=False, propagate_nan=False):
        return self._reduce_minmax("max", x, axis, keep_dims, propagate_nan)

    def min(self, x, axis=None, keep_dims=False, propagate_nan=False):
        return self._reduce_minmax("min", x, axis, keep_dims, propagate_nan)

    def _reduce_minmax(self, op, x, axis, keep_dims, propagate_nan):
        """max/min reductions; bools and narrow ints reduce in 32 bits, as Triton's do."""
        x = self.to_tensor(x)
        if x.dtype.is_bool() or (x.dtype.is_int() and x.dtype.int_bitwidth < 32):
            x = self.cast(x, tlc.uint32 if x.dtype.is_int_unsigned() else tlc.int32)
        return self.reduce(x, axis, lambda a, b: [self.minmax(op, a[0], b[0], propagate_nan)], keep_dims)

    def xor_sum(self, x, axis=None, keep_dims=False):
        x = self.to_tensor(x)
        if not x.dtype.is_int():
            raise TypeError(f"xor_sum needs integers, got {x.dtype!r}")
        return self.reduce(x, axis, lambda a, b: [self.xor_(a[0], b[0])], keep_dims)

    INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee")

    def dot(self, a, b, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
            out_dtype=tlc.float32) -> tensor:
        a, b, acc = self.to_tensor(a), self.to_tensor(b), _unwrap(acc)
        out_dtype = _unwrap(out_dtype)
        input_precision, allow_tf32 = _unwrap(input_precision), _unwrap(allow_tf32)
        if input_precision is not None and allow_tf32 is not None:
            raise ValueError("pass only one of input_precision and allow_tf32")
        if input_precision is None:
            if allow_tf32 is not None:
                input_precision = "tf32" if allow_tf32 else "ieee"
            else:
                input_precision = self.options.get("default_dot_input_precision", "tf32")
        if input_precision not in self.INPUT_PRECISIONS:
            raise ValueError(f"input_precision must be one of {self.INPUT_PRECISIONS}, got {input_precision!r}")
        ra, rb = len(a.shape), len(b.shape)
        if ra not in (2, 3) or ra != rb:
            raise ValueError(f"dot needs two 2-d (or 3-d) tensors, got shapes {list(a.shape)} and {list(b.shape)}")
        if a.shape[-1] != b.shape[-2]:
            raise ValueError(f"dot shape mismatch: {list(a.shape)} @ {list(b.shape)} (inner dimensions "
                             f"{a.shape[-1]} and {b.shape[-2]} differ)")
        if ra == 3 and a.shape[0] != b.shape[0]:
            raise ValueError(f"dot batch dimensions differ: {a.shape[0]} and {b.shape[0]}")
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        lo = self.options.get("min_dot_size", self.MIN_DOT_SIZE)
        if m < lo or n < lo or k < lo:
            raise ValueError(f"dot needs every dimension >= {lo}, got M={m}, N={n}, K={k}")
        if a.dtype.is_fp8e4b15() or b.dtype.is_fp8e4b15():  # exact in float16
            a, b = self.cast(a, tlc.float16), self.cast(b, tlc.float16)
        at, bt = a.dtype, b.dtype
        if at != bt:
            if at.is_floating() and bt.is_floating() and at.primitive_bitwidth != bt.primitive_bitwidth:
                raise TypeError(f"dot operands must share one dtype, got {at!r} and {bt!r}")
            if not (at.is_fp8() and bt.is_fp8()):
                raise TypeError(f"dot operands must share one dtype, got {at!r} and {bt!r}")
        if at.is_int():
            if at != tlc.int8:
                raise TypeError(f"integer dot needs int8 operands, got {at!r}")
            out = tlc.int32
        else:
            if not at.is_floating():
                raise TypeError(f"dot needs numeric operands, got {at!r}")
            if not isinstance(out_dtype, dtype) or not out_dtype.is_floating():
                raise TypeError(f"dot out_dtype must be a floating-point dtype, got {out_dtype!r}")
            if at.is_fp32() or at.is_fp64():
                out = at if at.is_fp64() else tlc.float32
            else:
                out = out_dtype
            if input_precision != "ieee" and not at.is_fp32():
                input_precision = "ieee"
        shape = a.shape[:-2] + (m, n)
        rty = block_type(out, shape)
        if acc is None:
            acc = tensor(self.b.constant(0 if out.is_int() else 0.0, rty), rty)
        else:
            acc = self.to_tensor(acc)
            if acc.shape != shape:
                raise ValueError(f"dot acc has shape {list(acc.shape)}, expected {list(shape)}")
            if acc.dtype != out:
                raise TypeError(f"dot acc has dtype {acc.dtype!r}, expected {out!r}")
        imprecise = _unwrap(max_num_imprecise_acc) or 0
        return tensor(self.b.create("dot", [a.handle, b.handle, acc.handle], rty, input_precision=input_precision,
                                    max_num_imprecise_acc=int(imprecise)), rty)

    # -------------------------------------------------------------------------------------------------------
    # hints, debugging
    # -------------------------------------------------------------------------------------------------------
    def hint(self, x, kind, values) -> tensor:
        x = self.to_tensor(x)
        values = _unwrap(values)
        values = tuple(_unwrap(v) for v in (values if isinstance(values, (tuple, list)) else (values,)))
        rank = max(1, len(x.shape))
        if len(values) != rank:
            raise ValueError(f"{kind} needs {rank} value(s) for a tensor of shape {list(x.shape)}, got {len(values)}")
        for v in values:
            if not isinstance(v, int) or v < 1:
                raise TypeError(f"{kind} values must be positive compile-time ints, got {v!r}")
        return tensor(self.b.create("hint", [x.handle], x.type, **{kind: values}), x.type)

    def inline_asm(self, asm: str, constraints: str, args, dtypes, is_pure: bool, pack: int):
        """``tl.inline_asm_elementwise``: the arguments broadcast to one shape (no type promotion, as in Triton),
        the results take that shape; the constraint string must name every operand the packing gives
        (``ir/asm_operands.py``). Returns one tensor per dtype."""
        from ..ir.asm_operands import check_counts, check_packing, parse_constraints
        xs = [self.to_tensor(a) for a in args]
        shape = ()
        for x in xs:
            shape = self.broadcast_shapes(shape, x.shape)
        xs = [self.broadcast_to(x, shape) for x in xs]
        numel = 1
        for d in shape:
            numel *= d
        if numel % pack:
            raise ValueError(f"inline_asm_elementwise: pack={pack} does not divide the {numel} elements of "
                             f"shape {list(shape)}")
        bits = lambda t: 64 if t.is_ptr() else 8 if t.is_bool() else t.primitive_bitwidth  # noqa: E731
        for t in [x.dtype for x in xs] + list(dtypes):
            check_packing(bits(t), pack, repr(t))
        c = parse_constraints(constraints)
        check_counts(c, [bits(x.dtype) for x in xs], [bits(t) for t in dtypes], pack, constraints)
        tys = [block_type(t, shape) if shape else t for t in dtypes]
        handles = self.b.inline_asm(asm, c.llvm(), [x.handle for x in xs], tys, bool(is_pure), pack)
        return [tensor(h, t) for h, t in zip(handles, tys)]

    def debug_enabled(self) -> bool:
        """``device_assert`` is checked only in debug builds: ``debug=True`` (jit or launch) or TILEC_DEBUG=1."""
        d = self.options.get("debug")
        if d is None:
            d = os.environ.get("TILEC_DEBUG", "0") not in ("", "0")
        return bool(d)

    def source_location(self) -> str:
        """``file:line`` of the kernel statement being built (compiled) or run (interpreted)."""
        loc = getattr(getattr(self.b, "ir", None), "loc", None)
        if loc is not None:
            return f"{loc.file}:{loc.line}"
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
            f = f.f_back
        return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<kernel>"

    def device_assert(self, cond, msg=""):
        if not self.debug_enabled():
            return
        cond = self.cast(self.to_tensor(cond), tlc.int1)
        text = str(_unwrap(msg)) or "assertion failed"
        self.b.create("assert", [cond.handle], None, message=f"{self.source_location()}: {text}")

    def assume(self, cond):
        """``tl.assume``: a runtime promise (``llvm.assume``); a compile-time False is an error, True nothing."""
        c = _unwrap(cond)
        if not isinstance(c, tensor):
            if not c:
                raise AssertionError("tl.assume of a condition that is false at compile time")
            return None
        if c.shape:
            raise TypeError(f"tl.assume needs a scalar condition, got a tensor of shape {list(c.shape)}")
        c = self.cast(c, tlc.int1) if c.dtype != tlc.int1 else c
        self.b.create("assume", [c.handle], None)
        return None

    def device_print(self, prefix, *args, hex=False):
        handles = [self.to_tensor(a).handle for a in args]
        self.b.create("print", handles, None, prefix=str(_unwrap(prefix)), hex=bool(_unwrap(hex)))
