"""Vector add: the hello world of tile kernels. Runs on a GPU when torch sees one, else on the CPU."""
import numpy as np

import tilec
import tilec.language as tl
from common import bench, device, empty_like, to_device, to_numpy


@tilec.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x, y, block=1024):
    out = empty_like(x, "cpu") if isinstance(x, np.ndarray) else x.new_empty(x.shape)
    n = x.shape[0]
    add_kernel[(tilec.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    return out


def main(n=98_432, timing=True):
    dev = device()
    rng = np.random.default_rng(0)
    xh = rng.random(n, dtype=np.float32)
    yh = rng.random(n, dtype=np.float32)
    x, y = to_device(xh, dev), to_device(yh, dev)
    out = to_numpy(add(x, y))
    np.testing.assert_allclose(out, xh.astype(np.float64) + yh, rtol=1e-6)
    print(f"vector add of {n} floats on {dev}: ok")
    if timing:
        t = bench(lambda: add(x, y), dev=dev)
        tn = bench(lambda: np.add(xh, yh))
        print(f"  tilec {t * 1e3:8.3f} ms   numpy {tn * 1e3:8.3f} ms")


if __name__ == "__main__":
    main()
