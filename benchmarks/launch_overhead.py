"""CPU launch overhead: microseconds per cached launch of a tiny kernel (1 element, grid (1,)), through
``kernel[grid](...)`` and through the ``CompiledKernel``, and the README's 98k-element add against numpy.

    python benchmarks/launch_overhead.py [--repeat 7]

Each figure is the minimum over repeats of the mean over many launches (the machine's noise only adds)."""
from __future__ import annotations

import argparse
import timeit

import numpy as np

import tilec
import tilec.language as tl


@tilec.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def per_call(fn, number, repeat):
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args(argv)
    x = np.ones(1, np.float32)
    y, o = x.copy(), x.copy()
    small = per_call(lambda: add_kernel[(1,)](x, y, o, 1, BLOCK=16), 20000, a.repeat)
    ck = add_kernel.warmup(x, y, o, 1, BLOCK=16, grid=(1,))
    direct = per_call(lambda: ck[(1,)](x, y, o, 1), 20000, a.repeat)
    X = np.random.rand(98_432).astype(np.float32)
    Y, O = np.random.rand(98_432).astype(np.float32), np.empty(98_432, np.float32)
    grid = (tilec.cdiv(X.size, 1024),)
    big = per_call(lambda: add_kernel[grid](X, Y, O, X.size, BLOCK=1024), 2000, a.repeat)
    ref = per_call(lambda: np.add(X, Y), 2000, a.repeat)
    assert np.allclose(O, X + Y)
    print(f"launch, 1 element, grid (1,):  {small * 1e6:7.2f} us")
    print(f"CompiledKernel[(1,)](...):     {direct * 1e6:7.2f} us")
    print(f"98,432-element add:            {big * 1e3:7.4f} ms   numpy {ref * 1e3:7.4f} ms   ({ref / big:.2f}x numpy)")


if __name__ == "__main__":
    main()
