"""Fused row softmax: one program per row reads the row once, keeps it in registers, writes it once."""
import numpy as np

import tilec
import tilec.language as tl
from common import bench, device, row_stride, to_device, to_numpy


@tilec.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, num / den, mask=mask)


def softmax(x):
    rows, cols = x.shape
    out = np.empty_like(x) if isinstance(x, np.ndarray) else x.new_empty(x.shape)
    softmax_kernel[(rows,)](out, x, row_stride(x), row_stride(out), cols, BLOCK=tilec.next_power_of_2(cols))
    return out


def numpy_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main(rows=1823, cols=781, timing=True):
    dev = device()
    xh = np.random.default_rng(0).standard_normal((rows, cols), dtype=np.float32)
    out = to_numpy(softmax(to_device(xh, dev)))
    ref = numpy_softmax(xh.astype(np.float64))
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-7)
    print(f"softmax of {rows}x{cols} on {dev}: ok")
    if timing:
        x = to_device(xh, dev)
        t = bench(lambda: softmax(x), dev=dev)
        tn = bench(lambda: numpy_softmax(xh))
        print(f"  tilec {t * 1e3:8.3f} ms   numpy {tn * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
