"""``python -m tilec.tools.fuzz --seed S -n N --backends interp,cpu[,cuda][,cpu:debug]``: check seeds S .. S+N-1.

Each failing seed is shrunk and printed as a standalone script (also written to ``--out DIR``); the last line
counts the kernels run and the failures by kind. The exit status is 1 when any seed failed.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

from .campaign import run_many
from .generate import FEATURES
from .runner import launcher_for


def parse(argv=None):
    p = argparse.ArgumentParser(prog="python -m tilec.tools.fuzz", description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    p.add_argument("-n", type=int, default=100, help="number of seeds (default 100)")
    p.add_argument("--backends", default="interp,cpu", help="comma-separated; the first is the reference; NAME:debug runs NAME's debug build")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes (0: run in this process)")
    p.add_argument("--features", default=None, help=f"comma-separated subset of: {','.join(sorted(FEATURES))}")
    p.add_argument("--no-shrink", action="store_true", help="report failures without shrinking them")
    p.add_argument("--shrink-budget", type=float, default=240.0, help="seconds to spend shrinking one failure")
    p.add_argument("--time-limit", type=float, default=None, help="stop starting new seeds after this many seconds")
    p.add_argument("--out", default=None, help="directory for the reproducer scripts of failures")
    p.add_argument("--quiet", action="store_true", help="print failures and the summary only")
    return p.parse_args(argv)


def main(argv=None) -> int:
    """The fuzzer's command line. Every kernel it makes is new, so caching them would only fill the disk: it
    compiles afresh while it runs (``TILEC_ALWAYS_COMPILE``), and puts the caller's setting back after (a caller
    in the same process, a test among them, must not be left without its on-disk cache)."""
    old = os.environ.get("TILEC_ALWAYS_COMPILE")
    os.environ.setdefault("TILEC_ALWAYS_COMPILE", "1")
    try:
        return _main(parse(argv))
    finally:
        if old is None:
            os.environ.pop("TILEC_ALWAYS_COMPILE", None)


def _main(a) -> int:
    backends = tuple(b.strip() for b in a.backends.split(",") if b.strip())
    features = set(FEATURES if a.features is None else (f.strip() for f in a.features.split(",") if f.strip()))
    unknown = features - FEATURES
    if unknown:
        print(f"unknown features: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    try:
        for b in backends:
            launcher_for(b)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    if any(b.partition(":")[0] == "cuda" for b in backends) and os.environ.get("TILEC_FUZZ_CUDA_FP8") != "1":
        features.discard("fp8")  # fp8 on CUDA: TILEC_FUZZ_CUDA_FP8=1 while its campaigns are being triaged
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    counts = collections.Counter()
    t0 = time.monotonic()
    deadline = t0 + a.time_limit if a.time_limit else None

    def on_result(r):
        counts[r.status] += 1
        print(f"RESULT {r.seed} {r.status}", flush=True)
        if r.status in ("mismatch", "error", "crash"):
            print(f"--- seed {r.seed}: {r.status}\n{r.detail}\n{r.repro}", flush=True)
            if a.out and r.repro:
                with open(os.path.join(a.out, f"seed_{r.seed}.py"), "w") as f:
                    f.write(r.repro)
        elif r.status == "invalid" and not a.quiet:
            print(f"--- seed {r.seed}: invalid (every backend refused it): {r.detail}", flush=True)
        total = sum(counts.values())
        if not a.quiet and total % 50 == 0:
            print(f"... {total} kernels, {time.monotonic() - t0:.0f}s, {dict(counts)}", file=sys.stderr, flush=True)

    run_many(range(a.seed, a.seed + a.n), backends, frozenset(features), jobs=a.jobs, do_shrink=not a.no_shrink,
             shrink_budget=a.shrink_budget, deadline=deadline, on_result=on_result)
    total = sum(counts.values())
    failed = counts["mismatch"] + counts["error"] + counts["crash"]
    print(f"kernels run: {total}; ok: {counts['ok']}; invalid: {counts['invalid']}; mismatches: "
          f"{counts['mismatch']}; errors: {counts['error']}; crashes: {counts['crash']} "
          f"({time.monotonic() - t0:.0f}s, backends {','.join(backends)})", flush=True)
    return 1 if failed else 0
