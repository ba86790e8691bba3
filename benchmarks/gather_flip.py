"""``tl.flip`` of 1024 float32 elements (one ``gather`` op): compile time for CUDA (PTX and ptxas, no GPU needed)
and CPU run time per program next to a plain copy of the same rows.

    python benchmarks/gather_flip.py [--archs 80,90] [--rows 256] [--repeat 5]

Run times are the minimum over repeats of the mean over launches (noise only adds); compile times are one
compile each (``TILEC_ALWAYS_COMPILE``: no cache)."""
from __future__ import annotations

import argparse
import os
import time
import timeit

import numpy as np

import tilec
import tilec.language as tl

N = 1024


@tilec.jit
def flip_rows(X, Z, N: tl.constexpr):
    o = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(Z + o, tl.flip(tl.load(X + o)))


@tilec.jit
def copy_rows(X, Z, N: tl.constexpr):
    o = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(Z + o, tl.load(X + o))


def cuda_compile(arch: int):
    x = np.zeros(N, np.float32)
    _, _, src = flip_rows.specialize(flip_rows._bind((x, x), {"N": N}))
    t = time.perf_counter()
    k = tilec.compile(src, tilec.Target("cuda", arch, 32), {})
    return time.perf_counter() - t, k.metadata


def per_row(kernel, rows: int, repeat: int) -> float:
    x = np.random.default_rng(0).standard_normal((rows, N)).astype(np.float32)
    z = np.zeros_like(x)
    kernel[(rows,)](x, z, N=N)
    if kernel is flip_rows:
        assert (z == x[:, ::-1]).all()
    return min(timeit.repeat(lambda: kernel[(rows,)](x, z, N=N), number=20, repeat=repeat)) / 20 / rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--archs", default="80,90")
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    os.environ["TILEC_ALWAYS_COMPILE"] = "1"
    for arch in (int(s) for s in a.archs.split(",") if s):
        seconds, md = cuda_compile(arch)
        print(f"CUDA sm_{arch}: flip of {N} f32 compiles in {seconds:.2f} s (registers {md.get('num_regs')}, "
              f"spilled bytes {md.get('spill_stores')}, shared {md.get('shared')} bytes)")
    flip, copy = per_row(flip_rows, a.rows, a.repeat), per_row(copy_rows, a.rows, a.repeat)
    print(f"CPU: {a.rows} programs of {N} f32: flip {flip * 1e6:.2f} us per program, copy {copy * 1e6:.2f} us")


if __name__ == "__main__":
    main()
