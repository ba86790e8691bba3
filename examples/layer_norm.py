"""Layer-norm forward: one program per row, looping over the row in blocks (three passes over the row)."""
import numpy as np

import tilec
import tilec.language as tl
from common import bench, device, empty, row_stride, to_device, to_numpy


@tilec.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        acc += x * x
    var = tl.sum(acc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


def layer_norm(x, w, b, eps=1e-5, block=1024):
    rows, cols = x.shape
    y = empty(x.shape, np.float32, like=x)
    mean = empty(rows, np.float32, like=x)
    rstd = empty(rows, np.float32, like=x)
    layer_norm_fwd[(rows,)](x, y, w, b, mean, rstd, row_stride(x), cols, eps,
                            BLOCK=min(block, tilec.next_power_of_2(cols)))
    return y, mean, rstd


def numpy_layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def main(rows=1151, cols=2999, timing=True):
    dev = device()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    w = rng.random(cols, dtype=np.float32)
    b = rng.random(cols, dtype=np.float32)
    xd, wd, bd = (to_device(a, dev) for a in (x, w, b))
    y, mean, rstd = (to_numpy(a) for a in layer_norm(xd, wd, bd))
    ref = numpy_layer_norm(x.astype(np.float64), w, b)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(axis=1), rtol=1e-4, atol=1e-5)
    print(f"layer norm of {rows}x{cols} on {dev}: ok")
    if timing:
        t = bench(lambda: layer_norm(xd, wd, bd), dev=dev)
        tn = bench(lambda: numpy_layer_norm(x, w, b))
        print(f"  tilec {t * 1e3:8.3f} ms   numpy {tn * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
