"""The ``tl.*`` functions kernels call. Each is a thin builtin forwarding to the active Semantic, so adding an op
to the language is one short function here (plus its rule in ``semantic.py`` when it has new semantics)."""
from __future__ import annotations

import builtins

from .core import builtin, current, tensor, tensor_method, _unwrap
from . import core as _core


# -- ids and creation ----------------------------------------------------------------------------------------------
@builtin
def program_id(axis):
    return current().program_id(axis)


@builtin
def num_programs(axis):
    return current().num_programs(axis)


@builtin
def arange(start, end):
    return current().arange(start, end)


@builtin
def full(shape, value, dtype):
    return current().full(shape, value, dtype)


@builtin
def zeros(shape, dtype):
    return current().full(shape, 0, dtype)


@builtin
def zeros_like(input):
    return current().full(input.shape, 0, input.dtype)


@builtin
def full_like(input, value):
    return current().full(input.shape, value, input.dtype)


# -- memory ------------------------------------------------------------------------------------------------------
@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False):
    return current().load(pointer, mask, other, cache_modifier, eviction_policy, volatile, boundary_check,
                          padding_option)


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    return current().store(pointer, value, mask, cache_modifier, eviction_policy, boundary_check)


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    return current().make_block_ptr(base, shape, strides, offsets, block_shape, order)


@builtin
def advance(base, offsets):
    return current().advance(base, offsets)


# -- shape -------------------------------------------------------------------------------------------------------
def _one_or_many(args: tuple):
    """``f(x, 2, 3)`` and ``f(x, (2, 3))`` both mean the sequence (2, 3)."""
    if len(args) == 1 and isinstance(_unwrap(args[0]), (tuple, list)):
        return _unwrap(args[0])
    return args


@builtin
@tensor_method
def reshape(input, *shape, can_reorder=False):
    shape = _one_or_many(shape)
    return current().reshape(input, shape, can_reorder)


@builtin
@tensor_method
def ravel(input):
    return current().reshape(input, (input.numel,))


@builtin
@tensor_method
def view(input, *shape):
    return reshape(input, *shape)


@builtin
@tensor_method
def trans(input, *dims):
    dims = _one_or_many(dims)
    return current().trans(input, dims or None)


@builtin
@tensor_method
def permute(input, *dims):
    return trans(input, *dims)


@builtin
@tensor_method
def expand_dims(input, axis):
    """Insert size-1 dimensions; with several axes, each (negative ones too) refers to the result's rank."""
    axis = _unwrap(axis)
    if isinstance(axis, (tuple, list)):
        rank = len(current().to_tensor(input).shape) + len(axis)
        axes = []
        for a in (_unwrap(a) for a in axis):
            if not isinstance(a, int) or not -rank <= a < rank:
                raise ValueError(f"invalid axis {a}. Expected {-rank} <= axis < {rank}")
            axes.append(a + rank if a < 0 else a)
        if len(set(axes)) != len(axes):
            raise ValueError(f"expand_dims received duplicate axes, normalized axes = {axes}")
        for a in sorted(axes):
            input = current().expand_dims(input, a)
        return input
    return current().expand_dims(input, axis)


@builtin
@tensor_method
def broadcast_to(input, *shape):
    shape = _one_or_many(shape)
    return current().broadcast_to(current().to_tensor(input), tuple(_unwrap(s) for s in shape))


@builtin
def broadcast(input, other):
    s = current()
    return s.broadcast_pair(s.to_tensor(input), s.to_tensor(other))


# -- elementwise -------------------------------------------------------------------------------------------------
@builtin
def cast(input, dtype, fp_downcast_rounding=None, bitcast=False):
    return current().cast(input, dtype, fp_downcast_rounding=fp_downcast_rounding, bitcast=bitcast)


@builtin
def where(condition, x, y):
    return current().where(condition, x, y)


@builtin
def maximum(x, y, propagate_nan=False):
    return current().minmax("max", x, y, _unwrap(propagate_nan))


@builtin
def minimum(x, y, propagate_nan=False):
    return current().minmax("min", x, y, _unwrap(propagate_nan))


@builtin
def clamp(x, min, max, propagate_nan=False):
    return minimum(maximum(x, min, propagate_nan), max, propagate_nan)


@builtin
def fma(x, y, z):
    return current().fma(x, y, z)


@builtin
@tensor_method
def abs(x):
    return current().abs(x)


def _math(name):
    def f(x):
        return current().math(name, x)
    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} (Triton: fp32/fp64 only)."
    return builtin(tensor_method(f))


exp, exp2, log, log2, sqrt, rsqrt = (_math(n) for n in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt"))
sin, cos, floor, ceil, erf, sqrt_rn, sigmoid = (_math(n) for n in ("sin", "cos", "floor", "ceil", "erf",
                                                                   "sqrt_rn", "sigmoid"))


@builtin
def fdiv(x, y, ieee_rounding=False):
    return current().truediv(x, y, ieee_rounding=bool(_unwrap(ieee_rounding)))


@builtin
def cdiv(x, div):
    x, div = _unwrap(x), _unwrap(div)
    if not isinstance(x, tensor) and not isinstance(div, tensor):
        return (x + div - 1) // div
    return (x + div - 1) // div


@builtin
def swizzle2d(i, j, size_i, size_j, size_g):
    """Re-map a row-major (i, j) grid position to column-major order within groups of ``size_g`` rows
    (better cache reuse for tiled matmuls)."""
    i, j, size_i, size_j, size_g = (_unwrap(v) for v in (i, j, size_i, size_j, size_g))
    ij = i * size_j + j
    size_gj = size_g * size_j
    off_i = (ij // size_gj) * size_g
    rows = size_i - off_i
    g = minimum(rows, size_g) if isinstance(rows, tensor) or isinstance(size_g, tensor) else builtins.min(rows, size_g)
    ij = ij % size_gj
    return off_i + ij % g, ij // g


# -- reductions, dot ---------------------------------------------------------------------------------------------
@builtin
@tensor_method
def sum(input, axis=None, keep_dims=False, dtype=None):
    return current().sum(input, axis, _unwrap(keep_dims), dtype)


def _extreme(name: str, largest: bool):
    """``tl.max`` / ``tl.min``: one reduction that differs only in which end it keeps (and its tensor method)."""
    def f(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False,
          propagate_nan=False):
        sem = current()
        if _unwrap(return_indices):
            return sem.arg_extreme(input, axis, _unwrap(keep_dims), largest, _unwrap(return_indices_tie_break_left))
        return getattr(sem, name)(input, axis, _unwrap(keep_dims), _unwrap(propagate_nan))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The {'largest' if largest else 'smallest'} element along ``axis`` (all when None); with " \
                "``return_indices``, ``(values, indices)``."
    return builtin(tensor_method(f))


def _arg_extreme(name: str, largest: bool):
    """``tl.argmax`` / ``tl.argmin``: the index of :func:`_extreme`'s element."""
    def f(input, axis, tie_break_left=True, keep_dims=False):
        return current().arg_extreme(input, axis, _unwrap(keep_dims), largest, _unwrap(tie_break_left))[1]
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The index of the {'largest' if largest else 'smallest'} element along ``axis``."
    return builtin(tensor_method(f))


max, min = _extreme("max", True), _extreme("min", False)
argmax, argmin = _arg_extreme("argmax", True), _arg_extreme("argmin", False)


@builtin
@tensor_method
def cumsum(input, axis=0, reverse=False, dtype=None):
    return current().cumsum(input, axis, reverse, dtype)


@builtin
@tensor_method
def cumprod(input, axis=0, reverse=False):
    return current().cumprod(input, axis, reverse)


@builtin
@tensor_method
def associative_scan(input, axis, combine_fn, reverse=False):
    """``combine_fn`` is a @jit function of 2N scalars returning N (like ``tl.reduce``'s)."""
    sem = current()
    caller = sem.call_combine
    return sem.scan(input, axis, lambda accs, xs: caller(combine_fn, accs + xs), reverse)


def _atomic(kind):
    def f(pointer, val, mask=None, sem=None, scope=None):
        return current().atomic_rmw(kind, pointer, val, mask, sem, scope)
    f.__name__ = f.__qualname__ = f"atomic_{kind}"
    f.__doc__ = f"Atomic {kind}; returns the old values."
    return builtin(f)


atomic_add, atomic_max, atomic_min = _atomic("add"), _atomic("max"), _atomic("min")
atomic_and, atomic_or, atomic_xor, atomic_xchg = _atomic("and"), _atomic("or"), _atomic("xor"), _atomic("xchg")


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    return current().atomic_cas(pointer, cmp, val, sem, scope)


@builtin
@tensor_method
def xor_sum(input, axis=None, keep_dims=False):
    return current().xor_sum(input, axis, _unwrap(keep_dims))


@builtin
@tensor_method
def reduce(input, axis, combine_fn, keep_dims=False):
    """``combine_fn`` is a @jit function of 2N scalars returning N; the code generator supplies the caller."""
    sem = current()
    caller = sem.call_combine  # installed by the code generator
    return sem.reduce(input, axis, lambda accs, xs: caller(combine_fn, accs + xs), _unwrap(keep_dims))


@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None, max_num_imprecise_acc=None,
        out_dtype=_core.float32):
    return current().dot(input, other, acc, input_precision, allow_tf32, max_num_imprecise_acc, out_dtype)


# -- hints, compile-time helpers, debugging -----------------------------------------------------------------------
@builtin
def multiple_of(input, values):
    return current().hint(input, "divisibility", values)


@builtin
def max_contiguous(input, values):
    return current().hint(input, "contiguity", values)


@builtin
def max_constancy(input, values):
    return current().hint(input, "constancy", values)


@builtin
def static_assert(cond, msg=""):
    cond = _unwrap(cond)
    if isinstance(cond, tensor):
        raise TypeError("static_assert needs a compile-time condition; use tl.device_assert for runtime values")
    if not cond:
        raise AssertionError(f"static_assert failed{': ' + str(_unwrap(msg)) if msg else ''}")


@builtin
def static_print(*values, sep=" ", end="\n"):
    print(*[_unwrap(v) for v in values], sep=sep, end=end)


@builtin
def device_assert(cond, msg=""):
    return current().device_assert(cond, msg)


@builtin
def device_print(prefix, *args, hex=False):
    return current().device_print(prefix, *args, hex=hex)


@builtin
def debug_barrier():
    current().b.create("barrier", [], None)


class static_range:
    """``for i in tl.static_range(...)``: the loop is unrolled at compile time; ``i`` is a Python int."""

    def __init__(self, arg1, arg2=None, step=None):
        a1, a2, st = _unwrap(arg1), _unwrap(arg2), _unwrap(step)
        self.start, self.end = (0, a1) if a2 is None else (a1, a2)
        self.step = 1 if st is None else st
        for v in (self.start, self.end, self.step):
            if not isinstance(v, int):
                raise TypeError(f"static_range bounds must be compile-time ints, got {v!r}")

    def __iter__(self):
        return iter(builtins.range(self.start, self.end, self.step))


class range:  # noqa: A001 - Triton's name
    """``for i in tl.range(...)``: a runtime loop; ``num_stages`` asks the pipeliner for that many stages;
    ``flatten`` asks GPU compiles to run it and the one loop inside it as one loop (``passes/flatten_loops.py``).
    ``warp_specialize``: tilec does not split a block's warps into copying and computing ones; what that gains
    around a loop nest (the next outer iteration's copies in flight while this one's dots run) flattening gives,
    so it asks for ``flatten`` too (a loop with no loop inside is pipelined as it is)."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None, flatten=False,
                 warp_specialize=False, disallow_acc_multi_buffer=False):
        self.start, self.end = (0, arg1) if arg2 is None else (arg1, arg2)
        self.step = 1 if step is None else step
        self.num_stages = _unwrap(num_stages)
        self.flatten = bool(_unwrap(flatten)) or bool(_unwrap(warp_specialize))

    def __iter__(self):  # only the interpreter iterates; compiled loops become `for` ops
        return iter(builtins.range(int(_unwrap(self.start)), int(_unwrap(self.end)), int(_unwrap(self.step))))



# -- composed shape and data-movement ops (see composite.py) -------------------------------------------------------
from . import composite as _composite  # noqa: E402


@builtin
@tensor_method
def join(a, b):
    return _composite.join(current(), a, b)


@builtin
@tensor_method
def split(a):
    return _composite.split(current(), a)


@builtin
def interleave(a, b):
    return _composite.interleave(current(), a, b)


@builtin
def cat(input, other, can_reorder=False, dim=0):
    """Concatenation along ``dim``. tilec always keeps the elements in order, which every ``can_reorder`` allows."""
    return _composite.cat(current(), input, other, dim)


@builtin
@tensor_method
def gather(src, index, axis):
    return current().gather(src, index, axis)


@builtin
@tensor_method
def flip(x, dim=None):
    return _composite.flip(current(), x, dim)


@builtin
@tensor_method
def histogram(input, num_bins, mask=None):
    return _composite.histogram(current(), input, num_bins, mask)


@builtin
@tensor_method
def sort(x, dim=None, descending=False):
    return _composite.sort(current(), x, dim, descending)


@builtin
@tensor_method
def topk(x, k, dim=None):
    return _composite.topk(current(), x, k, dim)


@builtin
@tensor_method
def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    return _composite.softmax(current(), x, dim, keep_dims, ieee_rounding)


@builtin
@tensor_method
def reduce_or(input, axis=None, keep_dims=False):
    return _composite.reduce_or(current(), input, axis, _unwrap(keep_dims))


@builtin
def div_rn(x, y):
    """Division rounded to nearest even (``/`` may be within 2 ulp on a GPU, as in Triton)."""
    return current().truediv(x, y, ieee_rounding=True)


@builtin
def assume(cond):
    """A promise that the scalar ``cond`` holds (``llvm.assume``; ``x % 16 == 0`` tells the GPU backends that
    ``x`` is a multiple of 16); a compile-time False is an error."""
    return current().assume(cond)


@builtin
def add(x, y, sanitize_overflow=True):
    return current().add(x, y)


@builtin
def sub(x, y, sanitize_overflow=True):
    return current().sub(x, y)


@builtin
def mul(x, y, sanitize_overflow=True):
    return current().mul(x, y)


@builtin
def map_elementwise(scalar_fn, *args, pack=1):
    """``scalar_fn`` (a @jit function of scalars) applied to every element of the broadcast ``args``. Its body is
    built once on whole tiles, which is the same computation for straight-line elementwise code."""
    s = current()
    ts = [s.to_tensor(_unwrap(a)) for a in args]
    shape = ()
    for t in ts:
        shape = s.broadcast_shapes(shape, t.shape)
    ts = [s.broadcast_to(t, shape) for t in ts]
    out = s.call_combine(scalar_fn, ts)
    return out[0] if len(out) == 1 else tuple(out)


TRITON_MAX_TENSOR_NUMEL = _core.TRITON_MAX_TENSOR_NUMEL


@builtin
def condition(cond, disable_licm=False):
    """A while-loop condition with scheduling hints (``disable_licm``); the value is ``cond`` itself."""
    return cond


@builtin
def tl_tuple(args=()):
    """``tl.tuple((a, b))``: a tuple of kernel values (the same as a Python tuple inside kernels)."""
    return builtins.tuple(_unwrap(args))


tl_tuple.__name__ = tl_tuple.__qualname__ = "tuple"



class const:
    """Annotation of a read-only pointer parameter (``p: tl.const``): stores through it are compile errors."""


class constexpr_type:
    """The type of a compile-time value (``tl.constexpr_type(3)``)."""

    def __init__(self, value=None):
        self.value = _unwrap(value)

    def __repr__(self):
        return f"constexpr_type[{self.value!r}]"


def _logical(name):
    def f(input, other):
        return getattr(current(), name)(input, other)
    f.__name__ = f.__qualname__ = name.rstrip("_")
    f.__doc__ = f"Elementwise {name.replace('_', ' ')} of truth values (``x.{name}(y)``)."
    return builtin(tensor_method(f))


logical_and, logical_or = _logical("logical_and"), _logical("logical_or")
