"""CPU benchmark: tilec vs numpy for the four example kernels, plus cold compile times. Prints a table.

    python benchmarks/cpu.py            # full sizes (the figures in docs/performance.md)
    python benchmarks/cpu.py --quick    # small sizes, a smoke run
"""
import argparse
import os
import platform
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "examples"))
os.environ.setdefault("TILEC_BACKEND", "cpu")

import tilec  # noqa: E402
from common import bench  # noqa: E402
import layer_norm as ln  # noqa: E402
import matmul as mm  # noqa: E402
import softmax as sm  # noqa: E402
import vector_add as va  # noqa: E402


def cold_compile(fn, run) -> float:
    """Seconds for the first call of ``run`` with an empty disk cache (compile + one launch); call it before any
    other launch of ``fn`` so the in-memory cache is empty too."""
    old = os.environ.get("TILEC_CACHE_DIR")
    os.environ["TILEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilec-bench-")
    t0 = time.perf_counter()
    run()
    dt = time.perf_counter() - t0
    if old is None:
        del os.environ["TILEC_CACHE_DIR"]
    else:
        os.environ["TILEC_CACHE_DIR"] = old
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    q = ap.parse_args().quick
    rng = np.random.default_rng(0)
    rows = []

    n = 1 << (20 if q else 24)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    tc = cold_compile(va.add_kernel, lambda: va.add(x, y))
    t, tn = bench(lambda: va.add(x, y)), bench(lambda: np.add(x, y))
    rows.append((f"vector add fp32 n=2^{n.bit_length() - 1}", t, tn, f"{3 * 4 * n / t / 1e9:.1f} GB/s", tc))

    r, c = (512, 1024) if q else (4096, 1024)
    s = rng.standard_normal((r, c), dtype=np.float32)
    tc = cold_compile(sm.softmax_kernel, lambda: sm.softmax(s))
    t, tn = bench(lambda: sm.softmax(s)), bench(lambda: sm.numpy_softmax(s))
    rows.append((f"softmax fp32 {r}x{c}", t, tn, f"{2 * 4 * r * c / t / 1e9:.1f} GB/s", tc))

    r, c = (256, 4096) if q else (2048, 4096)
    xl = rng.standard_normal((r, c), dtype=np.float32)
    w, b = rng.random(c, dtype=np.float32), rng.random(c, dtype=np.float32)
    tc = cold_compile(ln.layer_norm_fwd, lambda: ln.layer_norm(xl, w, b))
    t, tn = bench(lambda: ln.layer_norm(xl, w, b)), bench(lambda: ln.numpy_layer_norm(xl, w, b))
    rows.append((f"layer norm fp32 {r}x{c}", t, tn, f"{2 * 4 * r * c / t / 1e9:.1f} GB/s", tc))

    m = 256 if q else 1024
    a, bb = rng.standard_normal((m, m), dtype=np.float32), rng.standard_normal((m, m), dtype=np.float32)
    tc = cold_compile(mm.matmul_kernel, lambda: mm.matmul(a, bb))
    t, tn = bench(lambda: mm.matmul(a, bb), repeat=5), bench(lambda: a @ bb, repeat=5)
    rows.append((f"matmul fp32 {m}^3", t, tn, f"{2 * m ** 3 / t / 1e9:.1f} GFLOP/s", tc))

    print(f"\ntilec {tilec.__version__ if hasattr(tilec, '__version__') else ''} on {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, numpy {np.__version__}")
    print(f"{'kernel':28} {'tilec ms':>10} {'numpy ms':>10} {'tilec/numpy speed':>18} {'tilec rate':>16} "
          f"{'cold compile s':>15}")
    for name, t, tn, rate, tc in rows:
        print(f"{name:28} {t * 1e3:10.3f} {tn * 1e3:10.3f} {tn / t:17.2f}x {rate:>16} {tc:15.3f}")


if __name__ == "__main__":
    main()
