"""Shape-rearranging and data-dependent ops composed from the IR's existing ops.

join/split/interleave/cat/flip/histogram/sort/topk need no IR op of their own: each is built from ``select``,
``broadcast``, ``reshape``/``trans``, ``reduce`` and (flip) ``gather``. That keeps every backend (CPU, GPUs, the
evaluator) correct for free. ``gather`` is an op of its own (``Semantic.gather``) because composed it would be
a compare-and-pick reduction of ``n`` compares per element (a 1024 x 1024 intermediate for a 1024-element
``flip``). sort/topk rank by comparison, quadratic in the sorted axis; ``histogram`` is ``n * bins`` by nature.

The key building block is :func:`_pick`: a reduction over an axis whose combine keeps the element whose flag is
set. It moves values exactly (no arithmetic), so it is correct for every dtype, NaN payloads and -0.0 included.
"""
from __future__ import annotations

from . import core as tlc
from .core import tensor, _unwrap


def _axis(x: tensor, axis, what: str) -> int:
    axis = _unwrap(axis)
    rank = len(x.shape)
    if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < rank:
        raise ValueError(f"{what}: axis {axis!r} out of range for a tensor of shape {list(x.shape)}")
    return axis % rank


def _pick(s, values: tensor, flags: tensor, axis: int) -> tensor:
    """Reduce ``axis`` keeping the value whose flag is set (the first one if several are)."""
    def combine(a, b):
        av, af = a
        bv, bf = b
        return [s.where(af, av, bv), s.logical_or(af, bf)]
    return s.reduce([values, flags], axis, combine)[0]


def join(s, a, b) -> tensor:
    """A new minor dimension of size 2 holding ``a`` at 0 and ``b`` at 1 (after broadcasting)."""
    a, b = s.to_tensor(a), s.to_tensor(b)
    if a.dtype != b.dtype:
        raise TypeError(f"join needs two tensors of one dtype, got {a.dtype!r} and {b.dtype!r}")
    a, b = s.broadcast_pair(a, b)
    rank = len(a.shape)
    shape = a.shape + (2,)
    a, b = (s.broadcast_to(s.expand_dims(v, rank), shape) for v in (a, b))
    first = s.compare("eq", s.broadcast_to(s.iota(2, rank, rank + 1), shape), 0)
    return s.where(first, a, b)


def split(s, a) -> tuple:
    """The inverse of :func:`join`: two tensors from a minor dimension of size 2."""
    a = s.to_tensor(a)
    if not a.shape or a.shape[-1] != 2:
        raise ValueError(f"split needs a tensor whose last dimension is 2, got shape {list(a.shape)}")
    axis = len(a.shape) - 1
    first = s.reduce(a, axis, lambda x, y: [x[0]])
    second = s.reduce(a, axis, lambda x, y: [y[0]])
    return first, second


def interleave(s, a, b) -> tensor:
    """``a`` and ``b`` interleaved along their last dimension (``a0 b0 a1 b1 ...``)."""
    j = join(s, a, b)
    shape = j.shape[:-2] + (j.shape[-2] * 2,) if len(j.shape) > 1 else (2,)
    return s.reshape(j, shape)


def cat(s, a, b, dim=0) -> tensor:
    """``a`` then ``b`` along ``dim`` (the result's size there must be a power of two, as every tile's is)."""
    a, b = s.to_tensor(a), s.to_tensor(b)
    if a.shape != b.shape or not a.shape:
        raise ValueError(f"cat needs two tensors of one shape, got {list(a.shape)} and {list(b.shape)}")
    if a.dtype != b.dtype:
        a, b = s.binary_operands(a, b, arithmetic=False)
    dim = _axis(a, dim, "cat")
    rank = len(a.shape)
    j = join(s, a, b)                                   # (..., 2)
    order = list(range(rank + 1))
    order.insert(dim, order.pop())                      # the pair axis just before `dim`
    j = s.trans(j, tuple(order))
    shape = list(a.shape)
    shape[dim] *= 2
    return s.reshape(j, tuple(shape))


def flip(s, x, dim=None) -> tensor:
    """``x`` reversed along ``dim`` (the last dimension when ``dim`` is None, as in Triton)."""
    x = s.to_tensor(x)
    if not x.shape:
        return x
    d = len(x.shape) - 1 if _unwrap(dim) is None else _axis(x, dim, "flip")
    n = x.shape[d]
    if n == 1:
        return x
    rev = s.sub(n - 1, s.iota(n, d, len(x.shape)))
    return s.gather(x, s.broadcast_to(rev, x.shape), d)


def histogram(s, x, num_bins, mask=None) -> tensor:
    """int32 counts of the values ``0 .. num_bins-1`` in the 1-d integer tensor ``x`` (others are ignored)."""
    x = s.to_tensor(x)
    num_bins = _unwrap(num_bins)
    if len(x.shape) != 1 or not x.dtype.is_int():
        raise TypeError(f"histogram needs a 1-d integer tensor, got {x.type}")
    if not isinstance(num_bins, int) or num_bins < 1:
        raise TypeError(f"histogram num_bins must be a positive compile-time int, got {num_bins!r}")
    n = x.shape[0]
    shape = (n, num_bins)
    xv = s.broadcast_to(s.expand_dims(s.cast(x, tlc.int64), 1), shape)
    hit = s.compare("eq", xv, s.broadcast_to(s.expand_dims(s.arange(0, num_bins), 0), shape))
    mask = _unwrap(mask)
    if mask is not None:
        hit = s.logical_and(hit, s.broadcast_to(s.expand_dims(s.cast(s.to_tensor(mask), tlc.int1), 1), shape))
    return s.sum(s.cast(hit, tlc.int32), 0)


def _before(s, a: tensor, b: tensor, descending: bool) -> tensor:
    """Strict total order of values: ``a`` sorts before ``b``; NaN is the greatest float (numpy's order)."""
    if descending:
        a, b = b, a
    lt = s.compare("lt", a, b)
    if a.dtype.is_floating():
        lt = s.logical_or(lt, s.logical_and(s.compare("eq", a, a), s.compare("ne", b, b)))
    return lt


def _ranks(s, x: tensor, dim: int, descending: bool) -> tensor:
    """Each element's position in the sorted order along ``dim`` (ties broken by index, so a permutation)."""
    rank = len(x.shape)
    shape = list(x.shape)
    shape.insert(dim + 1, x.shape[dim])                 # dim: element i, dim+1: element j
    shape = tuple(shape)
    xi = s.broadcast_to(s.expand_dims(x, dim + 1), shape)
    xj = s.broadcast_to(s.expand_dims(x, dim), shape)
    n = x.shape[dim]
    ii = s.broadcast_to(s.iota(n, dim, rank + 1), shape)
    jj = s.broadcast_to(s.iota(n, dim + 1, rank + 1), shape)
    tie = s.logical_and(s.logical_not(_before(s, xi, xj, descending)),
                        s.logical_and(s.logical_not(_before(s, xj, xi, descending)), s.compare("lt", jj, ii)))
    earlier = s.logical_or(_before(s, xj, xi, descending), tie)
    return s.sum(s.cast(earlier, tlc.int32), dim + 1)


def _scatter_by_rank(s, x: tensor, ranks: tensor, dim: int, k: int) -> tensor:
    """``out[r] = x[i]`` where ``ranks[i] == r``, for ``r < k``, along ``dim``."""
    rank = len(x.shape)
    shape = list(x.shape)
    shape[dim] = k
    shape.insert(dim + 1, x.shape[dim])                 # dim: output slot r, dim+1: source i
    shape = tuple(shape)
    vals = s.broadcast_to(s.expand_dims(x, dim), shape)
    rk = s.broadcast_to(s.expand_dims(ranks, dim), shape)
    hit = s.compare("eq", rk, s.broadcast_to(s.iota(k, dim, rank + 1), shape))
    return _pick(s, vals, hit, dim + 1)


def _sort_dim(x: tensor, dim, what: str) -> int:
    dim = _unwrap(dim)
    if dim is None:
        return len(x.shape) - 1
    return _axis(x, dim, what)


def sort(s, x, dim=None, descending=False) -> tensor:
    """``x`` sorted along ``dim`` (default: the last); NaN sorts last ascending, first descending."""
    x = s.to_tensor(x)
    if not x.shape:
        return x
    dim = _sort_dim(x, dim, "sort")
    desc = bool(_unwrap(descending))
    return _scatter_by_rank(s, x, _ranks(s, x, dim, desc), dim, x.shape[dim])


def topk(s, x, k, dim=None) -> tensor:
    """The ``k`` largest values along ``dim`` (default: the last), in descending order."""
    x = s.to_tensor(x)
    k = _unwrap(k)
    dim = _sort_dim(x, dim, "topk")
    if not isinstance(k, int) or not 1 <= k <= x.shape[dim]:
        raise ValueError(f"topk: k must be a compile-time int in [1, {x.shape[dim]}], got {k!r}")
    s.check_block_shape((k,))
    return _scatter_by_rank(s, x, _ranks(s, x, dim, True), dim, k)


def softmax(s, x, dim=None, keep_dims=False, ieee_rounding=False) -> tensor:
    """exp(x - max) / sum(exp(x - max)) along ``dim`` (default 0)."""
    x = s.to_tensor(x)
    dim = 0 if _unwrap(dim) is None else _unwrap(dim)
    z = s.sub(x, s.max(x, dim, True))
    num = s.math("exp", z)
    return s.truediv(num, s.sum(num, dim, True))


def reduce_or(s, x, axis=None, keep_dims=False) -> tensor:
    x = s.to_tensor(x)
    if not x.dtype.is_int():
        raise TypeError(f"reduce_or needs integers, got {x.dtype!r}")
    return s.reduce(x, axis, lambda a, b: [s.or_(a[0], b[0])], keep_dims)


__all__ = ["join", "split", "interleave", "cat", "flip", "histogram", "sort", "topk", "softmax",
           "reduce_or"]
