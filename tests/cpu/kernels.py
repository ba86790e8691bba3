"""tir kernels used by the CPU tests and timings, built with the Builder."""
from __future__ import annotations

from tilec.ir import ops
from tilec.ir import types as T

from .helpers import (P, addptr, arange, binop, cast, cmp, const, kernel, load, pid, reduce,
                      splat, store, unop, ptr_tile_2d)


def vector_add(block=1024, dtype=T.f32):
    def body(b, x, y, o, n):
        offs = binop(b, "add", binop(b, "mul", splat(b, pid(b), (block,)), splat(b, const(b, block, T.i32), (block,))),
                     arange(b, block))
        m = cmp(b, "lt", offs, splat(b, n, (block,)))
        a = load(b, addptr(b, splat(b, x, (block,)), offs), m)
        c = load(b, addptr(b, splat(b, y, (block,)), offs), m)
        store(b, addptr(b, splat(b, o, (block,)), offs), binop(b, "add", a, c), m)
    return kernel("add_kernel", [("x", P(dtype)), ("y", P(dtype)), ("o", P(dtype)), ("n", T.i32)], body)


def _max(b, a, x):
    return binop(b, "max", a, x)


def _sum(b, a, x):
    return binop(b, "add", a, x)


def softmax(block):
    """One row per program: out = exp(x - max) / sum(exp(x - max))."""
    def body(b, x, o, stride, ncols):
        row = binop(b, "mul", pid(b), stride)
        offs = arange(b, block)
        m = cmp(b, "lt", offs, splat(b, ncols, (block,)))
        off = binop(b, "add", splat(b, row, (block,)), offs)
        v = load(b, addptr(b, splat(b, x, (block,)), off), m, splat(b, const(b, float("-inf"), T.f32), (block,)))
        mx = reduce(b, v, 0, _max)
        num = unop(b, "exp", binop(b, "sub", v, splat(b, mx, (block,))))
        den = reduce(b, num, 0, _sum)
        store(b, addptr(b, splat(b, o, (block,)), off), binop(b, "div", num, splat(b, den, (block,))), m)
    return kernel("softmax_kernel", [("x", P(T.f32)), ("o", P(T.f32)), ("stride", T.i32), ("ncols", T.i32)], body)


def layer_norm(block, eps=1e-5):
    """One row per program: (x - mean) / sqrt(var + eps) * w + b, in two passes over the row."""
    def body(b, x, o, w, bb, stride, n):
        row = binop(b, "mul", pid(b), stride)
        offs = arange(b, block)
        m = cmp(b, "lt", offs, splat(b, n, (block,)))
        zero = splat(b, const(b, 0.0, T.f32), (block,))
        off = binop(b, "add", splat(b, row, (block,)), offs)
        v = load(b, addptr(b, splat(b, x, (block,)), off), m, zero)
        nf = cast(b, n, T.f32)
        mean = binop(b, "div", reduce(b, v, 0, _sum), nf)
        d = b.op(ops.SelectOp, m, binop(b, "sub", v, splat(b, mean, (block,))), zero)
        var = binop(b, "div", reduce(b, binop(b, "mul", d, d), 0, _sum), nf)
        rstd = unop(b, "rsqrt", binop(b, "add", var, const(b, eps, T.f32)))
        wv = load(b, addptr(b, splat(b, w, (block,)), offs), m)
        bv = load(b, addptr(b, splat(b, bb, (block,)), offs), m)
        y = binop(b, "add", binop(b, "mul", binop(b, "mul", d, splat(b, rstd, (block,))), wv), bv)
        store(b, addptr(b, splat(b, o, (block,)), off), y, m)
    return kernel("layer_norm", [("x", P(T.f32)), ("o", P(T.f32)), ("w", P(T.f32)), ("b", P(T.f32)),
                                 ("stride", T.i32), ("n", T.i32)], body)


def matmul(bm, bn, bk, in_t=T.f32):
    """C[M,N] = A[M,K] @ B[K,N] (row-major, contiguous), grid (cdiv(M,bm), cdiv(N,bn)), masked edges."""
    def body(b, a_p, b_p, c_p, M, N, K):
        pm, pn = pid(b, 0), pid(b, 1)
        rm = binop(b, "mul", pm, const(b, bm, T.i32))
        rn = binop(b, "mul", pn, const(b, bn, T.i32))
        zero_acc = splat(b, const(b, 0.0, T.f32), (bm, bn))
        lb, ub, st = const(b, 0, T.i32), K, const(b, bk, T.i32)
        loop = b.for_(lb, ub, st, [zero_acc])
        with b.at_end(loop.body):
            k = loop.body.args[0]
            acc = loop.body.args[1]
            pa, ra, ca = ptr_tile_2d(b, a_p, bm, bk, K, rm, k)
            ma = b.op(ops.AndOp, cmp(b, "lt", ra, splat(b, M, (bm, bk))), cmp(b, "lt", ca, splat(b, K, (bm, bk))))
            zin = splat(b, const(b, 0.0, in_t), (bm, bk))
            av = load(b, pa, ma, zin)
            pb, rb, cb = ptr_tile_2d(b, b_p, bk, bn, N, k, rn)
            mb = b.op(ops.AndOp, cmp(b, "lt", rb, splat(b, K, (bk, bn))), cmp(b, "lt", cb, splat(b, N, (bk, bn))))
            bv = load(b, pb, mb, splat(b, const(b, 0.0, in_t), (bk, bn)))
            nacc = b.op(ops.DotOp, av, bv, acc)
            b.yield_(nacc)
        pc, rc, cc = ptr_tile_2d(b, c_p, bm, bn, N, rm, rn)
        mc = b.op(ops.AndOp, cmp(b, "lt", rc, splat(b, M, (bm, bn))), cmp(b, "lt", cc, splat(b, N, (bm, bn))))
        store(b, pc, loop.results[0], mc)
    return kernel("matmul_kernel", [("a", P(in_t)), ("b", P(in_t)), ("c", P(T.f32)), ("M", T.i32), ("N", T.i32),
                                    ("K", T.i32)], body)
