"""Vector add: the hello world of tile kernels. Runs on a GPU when torch sees one, else on the CPU."""
import time

import numpy as np

import tilec
import tilec.language as tl
from common import device, empty_like, to_device, to_numpy


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


def per_call(fns: dict, dev: str = "cpu", warmup: int = 200, rounds: int = 51, batch: int = 20) -> dict:
    """Median seconds per call of each of ``fns`` (name -> function). A call takes tens of microseconds, near the
    clock's and the scheduler's grain, so each sample times a batch of calls; the functions' batches take turns,
    so a machine that slows down midway slows them all alike. Each function first runs ``warmup`` times: a
    launch's first runs compile, measure its programs and start the thread pool, and numpy's figure is a warm one
    too."""
    sync = (lambda: __import__("torch").cuda.synchronize()) if dev == "cuda" else (lambda: None)
    for fn in fns.values():
        for _ in range(warmup):
            fn()
        sync()
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(batch):
                fn()
            sync()
            samples[name].append((time.perf_counter() - t0) / batch)
    return {name: sorted(s)[len(s) // 2] for name, s in samples.items()}


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
        t = per_call({"tilec": lambda: add(x, y), "numpy": lambda: np.add(xh, yh)}, dev)
        print(f"  tilec {t['tilec'] * 1e3:8.3f} ms   numpy {t['numpy'] * 1e3:8.3f} ms   (median per call)")


if __name__ == "__main__":
    main()
