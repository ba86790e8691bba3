"""Shape-rearranging and data-dependent ops composed from the IR's existing ops.

join/split/interleave/cat/flip/histogram/sort/topk need no IR op of their own: each is built from ``select``,
``broadcast``, ``reshape``/``trans``, ``reduce`` and (flip) ``gather``. That keeps every backend (CPU, GPUs, the
evaluator) correct for free. ``gather`` is an op of its own (``Semantic.gather``) because composed it would be
a compare-and-pick reduction of ``n`` compares per element (a 1024 x 1024 intermediate for a 1024-element
``flip``). sort/topk come in two forms, chosen by the backend (``sort_network`` among the frontend options it
passes): ranks by comparison (:func:`_ranks`, quadratic in the axis, a few whole-tile ops) or a bitonic
network of pair exchanges (:func:`_pairs`: a reshape that gives each pair an axis of two, a reduction over
it), linear in the tile per step. ``histogram`` is ``n * bins`` by nature.

Values move only through ``where`` and reductions that pick one of their operands (no arithmetic), so every
composite is exact for every dtype, NaN payloads and -0.0 included.
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


def _pick(s, values: tensor, flags: tensor, axis: int) -> tensor:
    """Reduce ``axis`` keeping the value whose flag is set (the first one if several are)."""
    def combine(a, b):
        av, af = a
        bv, bf = b
        return [s.where(af, av, bv), s.logical_or(af, bf)]
    return s.reduce([values, flags], axis, combine)[0]


def _pairs(s, tensors, dim: int, j: int, combine) -> list:
    """Every pair of elements ``j`` apart along ``dim`` (positions ``i`` and ``i ^ j``, ``j`` a power of two)
    combined: ``combine(first, second)`` gets lists of the pair's two elements (lower position first) and returns
    a list; both positions get its results. A reshape that gives the pair its own axis of size 2, a reduction
    over that axis and a broadcast back: only reshapes, reductions and broadcasts, which every backend lowers
    in place (on a GPU the pair is in one thread's registers, across lanes of a warp, or across warps)."""
    shape = tensors[0].shape
    n = shape[dim]
    split = shape[:dim] + (n // (2 * j), 2, j) + shape[dim + 1:]
    ys = [s.reshape(t, split) for t in tensors]
    outs = s.reduce(ys, dim + 1, combine, keep_dims=True)
    return [s.reshape(s.broadcast_to(o, split), shape) for o in outs]


def _bit(s, shape, dim: int, bit: int) -> tensor:
    """True where the index along ``dim`` has ``bit`` (a power of two) set, over ``shape``."""
    i = s.iota(shape[dim], dim, len(shape))
    return s.broadcast_to(s.compare("ne", s.and_(i, bit), 0), shape)


def _merge_step(s, x: tensor, dim: int, j: int, flipped, first) -> tensor:
    """One compare-exchange step of a bitonic network: each pair ``j`` apart puts the element that ``first``
    orders first at its lower position, or at its higher one where ``flipped`` (an i1 tensor, or None) holds.
    ``first`` is a strict total order on the elements (integers), so the exchange is the same whichever of the
    pair a reduction sees first."""
    def combine(a, b):
        swap = first(b[0], a[0])
        return [s.where(swap, b[0], a[0]), s.where(swap, a[1], b[1])]
    lo, hi = _pairs(s, [x, x], dim, j, combine)
    take_lo = s.logical_not(_bit(s, x.shape, dim, j))
    if flipped is not None:
        take_lo = s.xor_(take_lo, flipped)
    return s.where(take_lo, lo, hi)


def _merge(s, x: tensor, dim: int, size: int, flipped, first) -> tensor:
    """Sort each bitonic run of ``size`` along ``dim`` (in ``first``'s order, reversed where ``flipped``)."""
    j = size // 2
    while j >= 1:
        x = _merge_step(s, x, dim, j, flipped, first)
        j //= 2
    return x


def _sorted_runs(s, x: tensor, dim: int, size: int, first) -> tensor:
    """Runs of ``size`` along ``dim`` sorted in ``first``'s order, every other run reversed (odd runs) unless a
    run spans the whole axis: a bitonic sorting network, ``log2(size) * (log2(size) + 1) / 2`` steps."""
    n = x.shape[dim]
    run = 2
    while run <= size:
        # runs of `run` alternate direction so that each pair of them forms a bitonic run of 2 * run
        flipped = _bit(s, x.shape, dim, run) if run < n else None
        x = _merge(s, x, dim, run, flipped, first)
        run *= 2
    return x


def _first_in(s, descending: bool):
    """``first(a, b)``: ``a`` goes before ``b``, for the integers the networks sort (values or float keys)."""
    return lambda a, b: s.compare("gt" if descending else "lt", a, b)


#: NaN bit patterns per sign of each float dtype (fp8e4b15 has none)
_NANS = {"fp16": (1 << 10) - 1, "bf16": (1 << 7) - 1, "fp32": (1 << 23) - 1, "fp64": (1 << 52) - 1,
         "fp8e5": 3, "fp8e4nv": 1, "fp8e4b15": 0}
_UINT = {8: tlc.uint8, 16: tlc.uint16, 32: tlc.uint32, 64: tlc.uint64}
_INT = {8: tlc.int8, 16: tlc.int16, 32: tlc.int32, 64: tlc.int64}


def _key_parts(s, x: tensor):
    w = x.dtype.primitive_bitwidth
    u, i = _UINT[w], _INT[w]
    low = s.to_tensor((1 << (w - 1)) - 1, u)
    shift = s.to_tensor((1 << (w - 1)) + _NANS[x.dtype.name], u)  # the lowest non-NaN pattern's key
    return w, u, i, low, shift


def _flip_magnitude(s, bits: tensor, w: int, i, low) -> tensor:
    """Negative patterns' magnitude bits inverted: sign-magnitude order becomes two's complement order (its own
    inverse)."""
    neg = s.cast(s.shr(s.cast(bits, i, bitcast=True), w - 1), bits.dtype, bitcast=True)
    return s.xor_(bits, s.and_(neg, low))


def _float_key(s, x: tensor) -> tensor:
    """An unsigned integer per float that orders as the float sorts (numpy's order, made total on bits: -0.0
    before 0.0, every NaN after +inf, NaNs by their bits): a bijection, so :func:`_float_of_key` gives every
    bit pattern back."""
    w, u, i, low, shift = _key_parts(s, x)
    return s.sub(_flip_magnitude(s, s.cast(x, u, bitcast=True), w, i, low), shift)


def _float_of_key(s, k: tensor, dt) -> tensor:
    w, u, i, low, shift = _key_parts(s, s.cast(k, dt, bitcast=True))
    return s.cast(_flip_magnitude(s, s.add(k, shift), w, i, low), dt, bitcast=True)


def _network(s, x: tensor, run):
    """``run(keys)`` on integers that order as ``x`` sorts (floats through their keys), then back."""
    if not x.dtype.is_floating():
        return run(x)
    return _float_of_key(s, run(_float_key(s, x)), x.dtype)


def _sort_dim(x: tensor, dim, what: str) -> int:
    dim = _unwrap(dim)
    if dim is None:
        return len(x.shape) - 1
    return _axis(x, dim, what)


def sort(s, x, dim=None, descending=False) -> tensor:
    """``x`` sorted along ``dim`` (default: the last); NaN sorts last ascending, first descending. Where the
    backend asks for it (``sort_network``: the GPUs, whose code is unrolled per thread) a bitonic network, as
    Triton's: ``O(n log^2 n)`` pair exchanges in place; else (the CPU's loop nests, the interpreter) ranks by
    comparison, ``n * n`` compares in a few whole-tile ops that compile in no time."""
    x = s.to_tensor(x)
    if not x.shape:
        return x
    dim = _sort_dim(x, dim, "sort")
    n = x.shape[dim]
    if n == 1:
        return x
    desc = bool(_unwrap(descending))
    if not s.options.get("sort_network"):
        return _scatter_by_rank(s, x, _ranks(s, x, dim, desc), dim, n)
    return _network(s, x, lambda keys: _sorted_runs(s, keys, dim, n, _first_in(s, desc)))


def topk(s, x, k, dim=None) -> tensor:
    """The ``k`` largest values along ``dim`` (default: the last), in descending order. As a network: runs of
    ``k`` sorted, then halved while longer than ``k`` (the element-wise larger of a run and its reversed
    neighbour holds their top ``k`` as a bitonic run, merged again), ``O(n log^2 k)`` pair exchanges."""
    x = s.to_tensor(x)
    k = _unwrap(k)
    dim = _sort_dim(x, dim, "topk")
    if not isinstance(k, int) or not 1 <= k <= x.shape[dim]:
        raise ValueError(f"topk: k must be a compile-time int in [1, {x.shape[dim]}], got {k!r}")
    s.check_block_shape((k,))
    if not s.options.get("sort_network"):
        return _scatter_by_rank(s, x, _ranks(s, x, dim, True), dim, k)
    first = _first_in(s, True)

    def run(x):
        x = _sorted_runs(s, x, dim, k, first)
        while x.shape[dim] > k:
            m = x.shape[dim]
            shape = x.shape[:dim] + (m // (2 * k), 2, k) + x.shape[dim + 1:]
            x = s.reduce(s.reshape(x, shape), dim + 1, lambda a, b: [s.where(first(b[0], a[0]), b[0], a[0])])
            x = s.reshape(x, x.shape[:dim] + (m // 2,) + x.shape[dim + 2:])
            x = _merge(s, x, dim, k, _bit(s, x.shape, dim, k) if m // 2 > k else None, first)
        return x
    return _network(s, x, run)


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
