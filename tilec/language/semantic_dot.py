"""``tl.dot``: operand shapes and dtypes checked, the input precision chosen, the accumulator typed.

The longest single rule of the language, kept in a file of its own.
"""
from __future__ import annotations

from . import core as tlc
from .core import _unwrap, block_type, dtype, tensor


class DotRules:
    """Matrix products, for :class:`~tilec.language.semantic.Semantic`."""

    MIN_DOT_SIZE = 16  # compiled dots tile by 16 (the interpreter takes any size)
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
