"""Shapes and tile creation: broadcasting, ``expand_dims``, indexing with ``None``, reshapes, transposes,
``gather``, and the ops that make a tile from nothing (``arange``, ``full``) or from the grid (``program_id``).

Every shape rule of the language is here, so the arithmetic, memory and reduction families only ask for a
shape to be reconciled and never check one themselves.
"""
from __future__ import annotations

from . import core as tlc
from .core import _unwrap, block_type, dtype, tensor
from .semantic_promotion import _I32, scalar_type_of


def is_pow2(n) -> bool:
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


class ShapeRules:
    """Broadcasting, reshaping and tile creation, for :class:`~tilec.language.semantic.Semantic`."""

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
