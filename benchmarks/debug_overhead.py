"""What debug builds cost: the four example kernels launched as compiled normally and with ``debug=True`` (every
load/store/atomic bounds-checked, ``device_assert`` recorded). Prints a table; docs/debugging.md quotes it.

    python benchmarks/debug_overhead.py            # the sizes of benchmarks/cpu.py
    python benchmarks/debug_overhead.py --quick    # small sizes, a smoke run

Arrays live where ``examples/common.py`` puts them (a GPU through torch when present, else the CPU).
"""
import argparse
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "examples"))

import tilec  # noqa: E402
from common import bench, device, to_device  # noqa: E402
import layer_norm as ln  # noqa: E402
import matmul as mm  # noqa: E402
import softmax as sm  # noqa: E402
import vector_add as va  # noqa: E402


def timed(module, name, run, repeat):
    """Best time of ``run()`` with ``module.name`` as compiled normally, then as a debug build (same source)."""
    normal = getattr(module, name)
    checked = tilec.jit(normal.fn, debug=True)
    out = []
    for k in (normal, checked):
        setattr(module, name, k)
        try:
            out.append(bench(run, repeat=repeat, dev=dev))
        finally:
            setattr(module, name, normal)
    return out


def main():
    global dev
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    q = ap.parse_args().quick
    dev = device()
    rng = np.random.default_rng(0)
    rows = []

    n = (1 << (20 if q else 24)) - 3
    x, y = (to_device(rng.random(n, dtype=np.float32), dev) for _ in range(2))
    rows.append((f"vector add fp32 n=2^{n.bit_length()}-3", *timed(va, "add_kernel", lambda: va.add(x, y), 10)))

    r, c = (512, 1000) if q else (4096, 1000)
    s = to_device(rng.standard_normal((r, c), dtype=np.float32), dev)
    rows.append((f"softmax fp32 {r}x{c}", *timed(sm, "softmax_kernel", lambda: sm.softmax(s), 10)))

    r, c = (256, 4000) if q else (2048, 4000)
    xl = to_device(rng.standard_normal((r, c), dtype=np.float32), dev)
    w, b = (to_device(rng.random(c, dtype=np.float32), dev) for _ in range(2))
    rows.append((f"layer norm fp32 {r}x{c}", *timed(ln, "layer_norm_fwd", lambda: ln.layer_norm(xl, w, b), 10)))

    m = 250 if q else 1000
    a, bb = (to_device(rng.standard_normal((m, m), dtype=np.float32), dev) for _ in range(2))
    rows.append((f"matmul fp32 {m}^3", *timed(mm, "matmul_kernel", lambda: mm.matmul(a, bb), 5)))

    print(f"\ntilec debug builds on {dev} ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)")
    print(f"{'kernel':30} {'normal ms':>10} {'debug ms':>10} {'overhead':>9}")
    for name, t0, t1 in rows:
        print(f"{name:30} {t0 * 1e3:10.3f} {t1 * 1e3:10.3f} {t1 / t0:8.2f}x")


dev = "cpu"

if __name__ == "__main__":
    main()
