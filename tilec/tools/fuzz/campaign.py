"""One seed from start to end (generate, run, shrink on failure), and many seeds over worker processes.

Workers are separate processes, recycled every few hundred kernels (each compiled kernel keeps its JIT code
alive). A worker that dies (a segfault in compiled code) or hangs takes its seed down with it: the seed is then
re-run alone in a fresh process and reported as a ``crash``.
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

from .generate import FEATURES, generate
from .repro import repro_script
from .runner import run_kernel
from .shrink import shrink


@dataclass
class SeedResult:
    seed: int
    status: str            # ok / invalid / mismatch / error / crash
    detail: str = ""
    repro: str = ""        # the shrunk kernel as a script (failures only)
    seconds: float = 0.0
    nodes: int = 0
    features: list = field(default_factory=list)


def check_seed(seed: int, backends=("interp", "cpu"), features=FEATURES, do_shrink=True,
               shrink_budget: float = 240.0) -> SeedResult:
    t0 = time.monotonic()
    k = generate(seed, features)
    out = run_kernel(k, backends)
    res = SeedResult(seed, out.status, out.detail)
    if out.failed:
        sig = out.signature()
        small = k
        if do_shrink:
            small = shrink(k, lambda c: _fails_alike(c, backends, sig), budget_s=shrink_budget)
        final = run_kernel(small, backends)
        res.detail = final.detail if final.failed else out.detail
        res.repro = repro_script(small, final if final.failed else out)
    res.seconds = time.monotonic() - t0
    return res


def _fails_alike(k, backends, sig) -> bool:
    try:
        return run_kernel(k, backends).signature() == sig
    except Exception:  # noqa: BLE001 - a variant the runner itself cannot handle is not the same failure
        return False


def _worker_init():
    os.environ.setdefault("TILEC_ALWAYS_COMPILE", "1")


def _run_chunk(seeds, backends, features, do_shrink, shrink_budget):
    return [check_seed(s, backends, features, do_shrink, shrink_budget) for s in seeds]


def _alone(seed, backends, features, do_shrink, timeout) -> SeedResult:
    """Re-run one seed in a fresh process; a crash or hang there is the seed's own."""
    cmd = [sys.executable, "-m", "tilec.tools.fuzz", "--seed", str(seed), "-n", "1", "-j", "0", "--quiet",
           "--backends", ",".join(backends), "--features", ",".join(sorted(features))]
    if not do_shrink:
        cmd.append("--no-shrink")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return SeedResult(seed, "crash", f"hang: no result within {timeout}s")
    if r.returncode < 0 or r.returncode > 1:
        tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
        return SeedResult(seed, "crash", f"exit status {r.returncode}: " + " | ".join(tail))
    status = "ok"
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            status = line.split()[2]
    return SeedResult(seed, status, r.stdout[-2000:])


def run_many(seeds, backends=("interp", "cpu"), features=FEATURES, jobs=2, do_shrink=True, shrink_budget=240.0,
             deadline: float | None = None, chunk=10, on_result=None, hang_timeout=600.0):
    """Check ``seeds`` on ``jobs`` worker processes (0: in this process); ``on_result`` sees each SeedResult as it
    arrives. Stops submitting new work at ``deadline`` (a ``time.monotonic()`` value)."""
    seeds = list(seeds)
    results = []

    def report(r):
        results.append(r)
        if on_result:
            on_result(r)

    if jobs == 0:
        for s in seeds:
            if deadline is not None and time.monotonic() > deadline:
                break
            report(check_seed(s, backends, features, do_shrink, shrink_budget))
        return results
    chunks = [seeds[i:i + chunk] for i in range(0, len(seeds), chunk)]
    ctx = multiprocessing.get_context("spawn")
    while chunks:
        pool = cf.ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_worker_init, max_tasks_per_child=20)
        pending, orphans = {}, []
        try:
            while chunks or pending:
                while chunks and len(pending) < 2 * jobs and (deadline is None or time.monotonic() < deadline):
                    c = chunks.pop(0)
                    f = pool.submit(_run_chunk, c, backends, features, do_shrink, shrink_budget)
                    pending[f] = (c, time.monotonic())
                if not pending:
                    chunks = []
                    break
                done, _ = cf.wait(pending, timeout=30, return_when=cf.FIRST_COMPLETED)
                for f in done:
                    c, _ = pending.pop(f)
                    try:
                        for r in f.result():
                            report(r)
                    except cf.process.BrokenProcessPool:
                        orphans.append(c)
                if orphans or any(time.monotonic() - t > hang_timeout for c, t in pending.values()):
                    orphans += [c for c, _ in pending.values()]
                    pending.clear()
                    break
        finally:
            if orphans:
                for p in list((getattr(pool, "_processes", None) or {}).values()):
                    p.terminate()
            pool.shutdown(wait=not orphans, cancel_futures=True)
        # every seed that was in flight when a worker died or hung is re-run alone: the culprit fails on its own
        for c in orphans:
            for s in c:
                report(_alone(s, backends, features, do_shrink, hang_timeout))
    return results
