"""Reductions and scans: the generic ``reduce``/``scan`` over a combine function, and the named ones built on
them (``sum``, ``max``, ``argmax``, ``cumsum``...) with the accumulator types Triton uses.
"""
from __future__ import annotations

from . import core as tlc
from .core import _unwrap, block_type, dtype, tensor


class ReductionRules:
    """Reductions and scans, for :class:`~tilec.language.semantic.Semantic`."""

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
