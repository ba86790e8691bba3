"""Compile wall time of an autotuner's 8 configs (a 128x128 matmul, tiles of 32 and 64: ``tune_kernels.py``),
each run in a fresh process and kernel cache, with compile workers off and on, alternating:

    python benchmarks/autotune_compile.py [--runs 3] [--workers 1]

``--workers`` is ``TILEC_AUTOTUNE_COMPILE_WORKERS`` for the parallel runs (workers besides the tuning process)."""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ONE = """
import time, numpy as np
from tune_kernels import tuned_matmul
a = np.random.rand(128, 128).astype(np.float32); c = np.empty((128, 128), np.float32)
t0 = time.perf_counter()
tuned_matmul.warmup(a, a, c, 128, 128, 128, grid=(1,))
print(time.perf_counter() - t0)
"""


def one(workers: str) -> float:
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TILEC_CACHE_DIR=d, TILEC_AUTOTUNE_COMPILE_WORKERS=workers,
                   PYTHONPATH=os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
        out = subprocess.run([sys.executable, "-c", ONE], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", default="1")
    a = ap.parse_args(argv)
    seq, par = [], []
    for _ in range(a.runs):
        seq.append(one("0"))
        par.append(one(a.workers))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"8 configs, sequential:             median {statistics.median(seq):.2f} s  {[round(t, 2) for t in seq]}")
    print(f"8 configs, {a.workers} worker(s) + this process: median {statistics.median(par):.2f} s  "
          f"{[round(t, 2) for t in par]}")


if __name__ == "__main__":
    main()
