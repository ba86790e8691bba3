"""Elementwise ops: arithmetic, bitwise and logical operators, comparisons, math functions, ``where``, and
``inline_asm_elementwise``.

Each one promotes and broadcasts its operands through the promotion and shape rules, then emits one op; what
is special about an operator (pointer arithmetic, ``/`` on integers, shifts keeping their left operand's
signedness) is said here once.
"""
from __future__ import annotations

from . import core as tlc
from .core import _unwrap, block_type, tensor
from .semantic_promotion import scalar_type_of
from ..ir.asm_operands import check_counts, check_packing, parse_constraints


class ElementwiseRules:
    """Operators and elementwise functions, for :class:`~tilec.language.semantic.Semantic`."""

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

    def truediv(self, x, y, ieee_rounding: bool = False) -> tensor:
        """``x / y``: ``fdiv`` (a GPU may compute an f32 quotient within 2 ulp, as Triton's ``div.full.f32``), or
        ``div``, correctly rounded, with ``ieee_rounding`` and for f64 (Triton's ``div.rn.f64``)."""
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
        if ieee_rounding or x.dtype.is_fp64():
            return self._emit("div", x, y)
        return self._emit("fdiv", x, y)

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

    def inline_asm(self, asm: str, constraints: str, args, dtypes, is_pure: bool, pack: int):
        """``tl.inline_asm_elementwise``: the arguments broadcast to one shape (no type promotion, as in Triton),
        the results take that shape; the constraint string must name every operand the packing gives
        (``ir/asm_operands.py``). Returns one tensor per dtype."""
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
