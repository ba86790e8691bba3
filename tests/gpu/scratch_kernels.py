"""Kernels with every kind of scratch shared-memory user (``tilec/gpu/scratch.py``), over a few layouts and
shapes each: layout conversions, transposes and reshapes across threads, gathers, reductions and scans across
warps (one and several operands, element sizes that differ), atomics handing results to other threads, and the
FMA dot. ``CASES``: name -> (source, number of warps); ``test_scratch_plan.py`` compiles them for several targets."""
import tilec
import tilec.language as tl


@tilec.jit
def transpose_kernel(X, Z, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(Z + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], tl.trans(x))


@tilec.jit
def reshape_kernel(X, Z, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    y = tl.reshape(x, (N, M))
    tl.store(Z + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], y + 1)


@tilec.jit
def column_sums_kernel(X, Z, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(Z + tl.arange(0, N), tl.sum(x, axis=0))


@tilec.jit
def total_kernel(X, Z, BLOCK: tl.constexpr):
    tl.store(Z, tl.sum(tl.load(X + tl.arange(0, BLOCK)), axis=0))


@tilec.jit
def max_with_index_kernel(X, Z, I, BLOCK: tl.constexpr):
    z, i = tl.max(tl.load(X + tl.arange(0, BLOCK)), axis=0, return_indices=True)
    tl.store(Z, z)
    tl.store(I, i)


@tilec.jit
def cumsum_kernel(X, Z, BM: tl.constexpr, BN: tl.constexpr, AX: tl.constexpr, REV: tl.constexpr):
    o = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(Z + o, tl.cumsum(tl.load(X + o), axis=AX, reverse=REV))


@tilec.jit
def _pair_max(a, i, b, j):
    return tl.where(a >= b, a, b), tl.where(a >= b, i, j)


@tilec.jit
def running_max_kernel(X, Z, I, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    z, i = tl.associative_scan((tl.load(X + o), o), 0, _pair_max)
    tl.store(Z + o, z)
    tl.store(I + o, i)


@tilec.jit
def gather_kernel(X, I, Z, M: tl.constexpr, N: tl.constexpr, P: tl.constexpr, Q: tl.constexpr,
                  AX: tl.constexpr):
    x = tl.load(X + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    io = tl.arange(0, P)[:, None] * Q + tl.arange(0, Q)[None, :]
    tl.store(Z + io, tl.gather(x, tl.load(I + io), AX))


@tilec.jit
def flip_kernel(X, Z, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(Z + o, tl.flip(tl.load(X + o)))


@tilec.jit
def tile_atomic_kernel(Z, X, Old, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Old + o, tl.atomic_add(Z + o, tl.load(X + o)))


@tilec.jit
def scalar_atomic_kernel(Z, Old, BLOCK: tl.constexpr):
    old = tl.atomic_add(Z, 1)
    tl.store(Old + tl.arange(0, BLOCK), tl.full((BLOCK,), 0, tl.int64) + old)


@tilec.jit
def lock_kernel(Lock, X):
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    tl.store(X, tl.load(X) + 1)
    tl.atomic_xchg(Lock, 0)


@tilec.jit
def fma_dot_kernel(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = tl.load(A + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(B + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(C + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], tl.dot(a, b, input_precision="ieee"))


@tilec.jit
def half_dot_kernel(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """The matrix units' accumulator converted for the store (sm_90: whole fragments with stmatrix)."""
    a = tl.load(A + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(B + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(C + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], tl.dot(a, b).to(tl.float16))


@tilec.jit
def int_dot_kernel(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = tl.load(A + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(B + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(C + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], tl.dot(a, b, out_dtype=tl.int32))


@tilec.jit
def batched_dot_kernel(X, Y, Z, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    b = tl.arange(0, B)[:, None, None]
    a = tl.load(X + b * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    w = tl.load(Y + b * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    o = b * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :]
    tl.store(Z + o, tl.dot(a, w, input_precision="ieee"))


def _src(kernel, signature, **constexprs):
    return tilec.ASTSource(kernel, signature, constexprs=constexprs)


CASES = {
    "transpose f32 64x32": (_src(transpose_kernel, "*fp32:16,*fp32:16", M=64, N=32), 4),
    "transpose f16 128x64": (_src(transpose_kernel, "*fp16:16,*fp16:16", M=128, N=64), 8),
    "transpose i8 16x16": (_src(transpose_kernel, "*i8:16,*i8:16", M=16, N=16), 4),
    "reshape f32 32x8": (_src(reshape_kernel, "*fp32:16,*fp32:16", M=32, N=8), 4),
    "column sums f32 256x4": (_src(column_sums_kernel, "*fp32:16,*fp32:16", M=256, N=4), 8),
    "column sums f16 64x64": (_src(column_sums_kernel, "*fp16:16,*fp16:16", M=64, N=64), 4),
    "total i64 1024": (_src(total_kernel, "*i64:16,*i64:16", BLOCK=1024), 4),
    "max with index u8 64": (_src(max_with_index_kernel, "*u8:16,*u8:16,*i32:16", BLOCK=64), 2),
    "max with index f64 512": (_src(max_with_index_kernel, "*fp64:16,*fp64:16,*i32:16", BLOCK=512), 4),
    "cumsum i32 1024x2 rows": (_src(cumsum_kernel, "*i32:16,*i32:16", BM=1024, BN=2, AX=0, REV=False), 16),
    "cumsum f32 64x64 rows reversed": (_src(cumsum_kernel, "*fp32:16,*fp32:16", BM=64, BN=64, AX=0, REV=True), 4),
    "cumsum f32 32x128 columns": (_src(cumsum_kernel, "*fp32:16,*fp32:16", BM=32, BN=128, AX=1, REV=False), 8),
    "running max u8 256": (_src(running_max_kernel, "*u8:16,*u8:16,*i32:16", BLOCK=256), 4),
    "gather f32 axis 0": (_src(gather_kernel, "*fp32:16,*i32:16,*fp32:16", M=32, N=16, P=64, Q=16, AX=0), 4),
    "gather f16 axis 1": (_src(gather_kernel, "*fp16:16,*i64:16,*fp16:16", M=16, N=64, P=16, Q=32, AX=1), 4),
    "flip f32 1024": (_src(flip_kernel, "*fp32:16,*fp32:16", N=1024), 4),
    "tile atomic f32 16": (_src(tile_atomic_kernel, "*fp32:16,*fp32:16,*fp32:16", BLOCK=16), 4),
    "tile atomic i64 64": (_src(tile_atomic_kernel, "*i64:16,*i64:16,*i64:16", BLOCK=64), 4),
    "scalar atomic i64": (_src(scalar_atomic_kernel, "*i64:16,*i64:16", BLOCK=128), 4),
    "lock": (_src(lock_kernel, "*i32:16,*i32:16"), 4),
    "fma dot f32 32x32x16": (_src(fma_dot_kernel, "*fp32:16,*fp32:16,*fp32:16", M=32, N=32, K=16), 4),
    "f16 dot 64x64x32": (_src(half_dot_kernel, "*fp16:16,*fp16:16,*fp16:16", M=64, N=64, K=32), 4),
    "int8 dot 16x64x32": (_src(int_dot_kernel, "*i8:16,*i8:16,*i32:16", M=16, N=64, K=32), 4),
    "fma dot f32 batched 2x16x16x32": (_src(batched_dot_kernel, "*fp32:16,*fp32:16,*fp32:16", B=2, M=16, N=16,
                                             K=32), 4),
}
