"""Compile time against tile size, per GPU target: ``tl.sort`` of N elements, an N x N fp32 transpose (pointer
arithmetic: loaded by rows, stored by columns), a row sum of an N x N tile, an N x N x 64 fp16 dot. Each
compile runs in a fresh process with an empty kernel cache; the table gives its CPU time (the process and its
children: ptxas, so a shared machine's load does not inflate it) and wall time, and the CPU microseconds per
tile element, which stays roughly flat when compile time is linear in the tile. Tiles past the lowering's
budget are refused up front with a located error ("refused").

    python benchmarks/compile_time.py [--targets cuda:90,hip:gfx942,hip:gfx1100] [--kinds sort,transpose,...]
                                      [--sizes 256,1024,4096] [--timeout 600]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

KERNELS = '''
import tilec
import tilec.language as tl


@tilec.jit
def sort_kernel(X, Y, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(Y + o, tl.sort(tl.load(X + o)))


@tilec.jit
def transpose_kernel(X, Y, N: tl.constexpr):
    r = tl.arange(0, N)[:, None]
    c = tl.arange(0, N)[None, :]
    tl.store(Y + c * N + r, tl.load(X + r * N + c))


@tilec.jit
def row_sum_kernel(X, Y, N: tl.constexpr):
    r = tl.arange(0, N)[:, None]
    c = tl.arange(0, N)[None, :]
    tl.store(Y + tl.arange(0, N), tl.sum(tl.load(X + r * N + c), axis=1))


@tilec.jit
def dot_kernel(A, B, C, N: tl.constexpr, K: tl.constexpr):
    r = tl.arange(0, N)[:, None]
    c = tl.arange(0, N)[None, :]
    k = tl.arange(0, K)
    a = tl.load(A + r * K + k[None, :])
    b = tl.load(B + k[:, None] * N + c)
    tl.store(C + r * N + c, tl.dot(a, b))
'''

ONE = '''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import tilec
import tilec.errors
from compile_time_kernels import sort_kernel, transpose_kernel, row_sum_kernel, dot_kernel
kind, n, target, warps = sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
backend, _, arch = target.partition(":")
t = tilec.Target(backend, int(arch) if backend == "cuda" else arch, 32 if backend == "cuda" or
                 arch.startswith(("gfx10", "gfx11", "gfx12")) else 64)
src = {"sort": lambda: tilec.ASTSource(sort_kernel, "*fp32,*fp32", constexprs={"N": n}),
       "transpose": lambda: tilec.ASTSource(transpose_kernel, "*fp32,*fp32", constexprs={"N": n}),
       "row_sum": lambda: tilec.ASTSource(row_sum_kernel, "*fp32,*fp32", constexprs={"N": n}),
       "dot": lambda: tilec.ASTSource(dot_kernel, "*fp16,*fp16,*fp32", constexprs={"N": n, "K": 64})}[kind]()
out = {}
try:
    k = tilec.compile(src, t, {"num_warps": warps})
    out["regs"] = k.metadata.get("num_regs") or k.metadata.get("num_vgprs")
    out["spill"] = k.metadata.get("spill_stores", 0)
except tilec.errors.TilecError as e:  # refused up front (a located error), or a resource limit
    out["refused"] = getattr(e, "message", str(e)).split(";")[0].split(": use ")[0][:110]
print(json.dumps(out))
'''

ELEMENTS = {"sort": lambda n: n, "transpose": lambda n: n * n, "row_sum": lambda n: n * n,
            "dot": lambda n: n * n}
DEFAULT_SIZES = {"sort": [256, 1024, 4096, 16384, 65536], "transpose": [64, 128, 256, 512],
                 "row_sum": [64, 128, 256, 512], "dot": [32, 64, 128, 256]}


def one(kind, n, target, warps, timeout, kernels_dir):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TILEC_CACHE_DIR=cache, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, "-c", ONE, kernels_dir, kind, str(n), target, str(warps)], env=env,
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"timeout": timeout}
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:160], "cpu": cpu, "wall": wall}
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out.update(cpu=cpu, wall=wall)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default="cuda:90,hip:gfx942,hip:gfx1100")
    ap.add_argument("--kinds", default="sort,transpose,row_sum,dot")
    ap.add_argument("--sizes", default="", help="comma-separated sizes for every kind (default: per kind)")
    ap.add_argument("--warps", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=600)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as kernels_dir:
        with open(os.path.join(kernels_dir, "compile_time_kernels.py"), "w") as fh:
            fh.write(KERNELS)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {a.warps} warps")
        print("| kind | N | elements | target | CPU s | wall s | CPU µs / element | registers | spilled bytes |")
        print("|---|---|---|---|---|---|---|---|---|")
        for kind in a.kinds.split(","):
            sizes = [int(s) for s in a.sizes.split(",")] if a.sizes else DEFAULT_SIZES[kind]
            for target in a.targets.split(","):
                for n in sizes:
                    r = one(kind, n, target, a.warps, a.timeout, kernels_dir)
                    el = ELEMENTS[kind](n)
                    if "timeout" in r:
                        print(f"| {kind} | {n} | {el} | {target} | > {a.timeout} (timed out) | | | | |")
                    elif "refused" in r or "error" in r:
                        why = r.get("refused") or r.get("error")
                        print(f"| {kind} | {n} | {el} | {target} | {r['cpu']:.2f} | {r['wall']:.2f} | refused: "
                              f"{why} | | |")
                    else:
                        print(f"| {kind} | {n} | {el} | {target} | {r['cpu']:.2f} | {r['wall']:.2f} | "
                              f"{1e6 * r['cpu'] / el:.0f} | {r.get('regs')} | {r.get('spill')} |")
                    sys.stdout.flush()


if __name__ == "__main__":
    main()
