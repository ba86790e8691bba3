"""``tilec.language`` (``tl``): Triton's kernel language surface.

Types and values live in ``core.py``, the semantics in ``semantic.py``, the functions in ``standard.py``.
"""
from .core import (constexpr, tensor, dtype, pointer_type, block_type, void, int1, int8, int16, int32, int64,
                   uint8, uint16, uint32, uint64, float8e4nv, float8e5, float8e4b15, float16, bfloat16, float32, float64,
                   builtin, is_builtin, PropagateNan, block_ptr, pi32_t)
from .standard import (program_id, num_programs, arange, full, zeros, zeros_like, full_like, load, store, reshape,
                       view, trans, permute, expand_dims, broadcast_to, broadcast, cast, where, maximum, minimum,
                       clamp, fma, abs, exp, exp2, log, log2, sqrt, rsqrt, sin, cos, floor, ceil, erf, sqrt_rn,
                       sigmoid, fdiv, cdiv, sum, max, min, xor_sum, reduce, dot, multiple_of, max_contiguous,
                       max_constancy, static_assert, static_print, device_assert, device_print, debug_barrier,
                       static_range, range, argmax, argmin, cumsum, cumprod, associative_scan, atomic_add,
                       atomic_max, atomic_min, atomic_and, atomic_or, atomic_xor, atomic_xchg, atomic_cas, ravel,
                       swizzle2d, make_block_ptr, advance, join, split, interleave, cat, gather, flip, histogram,
                       sort, topk, softmax, reduce_or, div_rn, assume, add, sub, mul, map_elementwise,
                       TRITON_MAX_TENSOR_NUMEL, const, constexpr_type, condition)
from .standard import tl_tuple as tuple  # noqa: F401,A001
from .random import (randint, randint4x, rand, rand4x, randn, randn4x, umulhi, philox, philox_impl,  # noqa: F401
                     uint_to_uniform_float, pair_uniform_to_normal)
from .descriptor import (tensor_descriptor, make_tensor_descriptor, load_tensor_descriptor,  # noqa: F401
                         store_tensor_descriptor)
from .scaled_dot import dot_scaled  # noqa: F401
from .inline_asm import inline_asm_elementwise  # noqa: F401
from . import semantic, standard, core  # noqa: F401


from . import math  # noqa: E402
from . import extra  # noqa: E402,F401

__all__ = [n for n in dir() if not n.startswith("_")]
