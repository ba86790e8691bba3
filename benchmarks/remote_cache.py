"""The shared remote kernel cache, measured: a fresh process's first launch of the bench matmul (the tutorial
kernel of ``gpu_tc_kernels.py``, fp16) with a cold cache, a warm remote and a warm local directory; and N
processes autotuning one kernel (``tune_kernels.tuned_matmul``, 8 configs) at once, each with its own local
directory (a machine of a fleet), without and with a shared remote.

    PYTHONPATH=. python benchmarks/remote_cache.py [--device cpu|cuda] [--runs 5] [--procs 8] [--only first|fleet]

The remote is the Redis server at ``TILEC_REDIS_URL`` when set, else a ``redis-server`` started here on a free
loopback port when one is on PATH, else the stand-in of ``resp_standin.py`` (said in the output). Needs the
``redis`` client (``pip install redis``); ``--device cuda`` needs torch with CUDA. Every figure is from fresh
processes; modes alternate and medians are printed.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# -- children ----------------------------------------------------------------------------------------------------
def _timed_builds():
    """Count and time every compile this process does (``pipeline._build`` runs only on a miss of every level)."""
    import tilec.pipeline as P
    spent = {"n": 0, "s": 0.0}
    build = P._build

    def timed(*a, **k):
        t0 = time.perf_counter()
        try:
            return build(*a, **k)
        finally:
            spent["n"] += 1
            spent["s"] += time.perf_counter() - t0
    P._build = timed
    return spent


def _arrays(device, shapes, dtype):
    import numpy as np
    rng = np.random.default_rng(0)
    out = [rng.standard_normal(s).astype(dtype) for s in shapes]
    if device == "cuda":
        import torch
        out = [torch.from_numpy(a).cuda() for a in out]
    return out


def _sync(device):
    if device == "cuda":
        import torch
        torch.cuda.synchronize()


def child_first(device):
    t_start = time.perf_counter()
    import importlib.util
    from tilec import cache, compat
    spent = _timed_builds()
    compat.install()
    spec = importlib.util.spec_from_file_location("gpu_tc_kernels", os.path.join(HERE, "gpu_tc_kernels.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    n = 1024 if device == "cuda" else 256
    a, b, c = _arrays(device, [(n, n)] * 3, "float16")
    st = (lambda x: x.stride()) if device == "cuda" else (lambda x: [s // 2 for s in x.strides])
    cfg = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3) if device == "cuda" \
        else dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
    grid = ((n // cfg["BLOCK_M"]) * (n // cfg["BLOCK_N"]),)
    _sync(device)
    t0 = time.perf_counter()
    mod.matmul_kernel[grid](a, b, c, n, n, n, *st(a), *st(b), *st(c), **cfg)
    _sync(device)
    t1 = time.perf_counter()
    print(json.dumps({"first_launch_s": t1 - t0, "process_s": t1 - t_start, "compiles": spent["n"],
                      "compile_s": spent["s"], "stats": cache.stats()}))


def child_tune(device):
    sys.path.insert(0, HERE)
    from tilec import cache
    spent = _timed_builds()
    from tune_kernels import tuned_matmul
    n = 128
    if device == "cuda":
        a, b = _arrays(device, [(n, n)] * 2, "float16")
        (c,) = _arrays(device, [(n, n)], "float32")
    else:
        a, b, c = _arrays(device, [(n, n)] * 3, "float32")
    t0 = time.perf_counter()
    tuned_matmul[lambda m: (n // m["BM"], n // m["BN"])](a, b, c, n, n, n)
    _sync(device)
    print(json.dumps({"tune_s": time.perf_counter() - t0, "compiles": spent["n"], "compile_s": spent["s"],
                      "stats": cache.stats()}))


# -- the parent --------------------------------------------------------------------------------------------------
class Remote:
    """The Redis server the runs share: the configured one, a redis-server started here, or the stand-in."""

    def __init__(self, workdir):
        self.proc = self.standin = None
        url = os.environ.get("TILEC_REDIS_URL")
        if url:
            self.url, self.kind = url, f"the Redis server at TILEC_REDIS_URL"
        elif shutil.which("redis-server"):
            import socket
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            self.proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                          "--appendonly", "no", "--dir", workdir], stdout=subprocess.DEVNULL)
            self.url = f"redis://127.0.0.1:{port}/0"
            version = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()
            self.kind = "redis-server " + next((v[2:] for v in version if v.startswith("v=")), "?") + " on loopback"
        else:
            sys.path.insert(0, HERE)
            from resp_standin import RespStandIn
            self.standin = RespStandIn()
            self.url = self.standin.start()
            self.kind = "the in-process stand-in of resp_standin.py (no redis-server here)"
        import redis
        self.client = redis.Redis.from_url(self.url, protocol=2)
        for _ in range(200):
            try:
                self.client.ping()
                break
            except Exception:  # noqa: BLE001  (starting)
                time.sleep(0.02)

    def flush(self):
        self.client.flushall()

    def close(self):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()
        if self.standin is not None:
            self.standin.stop()


def spawn(role, device, local_dir, remote_url=None):
    env = dict(os.environ, TILEC_CACHE_DIR=local_dir, TILEC_AUTOTUNE_COMPILE_WORKERS="0",
               PYTHONPATH=os.pathsep.join([ROOT, HERE, os.environ.get("PYTHONPATH", "")]))
    for k in ("TILEC_REMOTE_CACHE_BACKEND", "TILEC_ALWAYS_COMPILE"):
        env.pop(k, None)
    if remote_url:
        env.update(TILEC_REMOTE_CACHE_BACKEND="redis", TILEC_REDIS_URL=remote_url)
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), role, "--device", device], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(proc):
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(err)
    return json.loads(out.strip().splitlines()[-1])


def first_launch(remote, device, runs, tmp):
    rows = {"cold, no remote": [], "cold, remote on (compile + publish)": [], "warm remote, empty local": [],
            "warm local": []}
    for r in range(runs):
        remote.flush()
        d = [tempfile.mkdtemp(dir=tmp) for _ in range(3)]
        rows["cold, no remote"].append(result(spawn("_first", device, d[0])))
        rows["cold, remote on (compile + publish)"].append(result(spawn("_first", device, d[1], remote.url)))
        rows["warm remote, empty local"].append(result(spawn("_first", device, d[2], remote.url)))
        rows["warm local"].append(result(spawn("_first", device, d[2], remote.url)))
    print(f"\nFirst launch of the bench matmul in a fresh process ({device}; medians of {runs} runs)")
    print(f"| {'cache':38} | first launch | whole process | compiles |")
    print(f"|{'-' * 40}|--------------|---------------|----------|")
    for name, rs in rows.items():
        print(f"| {name:38} | {statistics.median(x['first_launch_s'] for x in rs):9.3f} s  "
              f"| {statistics.median(x['process_s'] for x in rs):10.3f} s  | {rs[0]['compiles']:8} |")


def fleet(remote, device, runs, procs, tmp):
    modes = {"no sharing (local directories only)": None, "shared remote": remote.url}
    rows = {m: [] for m in modes}
    for _ in range(runs):
        for mode, url in modes.items():
            remote.flush()
            t0 = time.perf_counter()
            ps = [spawn("_tune", device, tempfile.mkdtemp(dir=tmp), url) for _ in range(procs)]
            rs = [result(p) for p in ps]
            wall = time.perf_counter() - t0
            rows[mode].append({"wall": wall, "compile_s": sum(r["compile_s"] for r in rs),
                               "compiles": sum(r["compiles"] for r in rs),
                               "tune_s": statistics.median(r["tune_s"] for r in rs),
                               "wait_s": sum(r["stats"].get("remote_wait_s", 0) for r in rs),
                               "errors": sum(r["stats"].get("remote_errors", 0) for r in rs)})
            if os.environ.get("BENCH_VERBOSE"):
                print(mode, [r["stats"] for r in rs])
    print(f"\n{procs} processes autotuning tune_kernels.tuned_matmul (8 configs) at once ({device}; medians of "
          f"{runs} runs)")
    print("| mode | compiles | compile time, all processes | tuning time per process | all done (wall) |")
    print("|---|---|---|---|---|")
    for mode, rs in rows.items():
        med = lambda k: statistics.median(x[k] for x in rs)  # noqa: E731
        print(f"| {mode} | {med('compiles'):.0f} | {med('compile_s'):.2f} s | {med('tune_s'):.2f} s "
              f"| {med('wall'):.2f} s |")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("role", nargs="?", default="all", choices=["all", "_first", "_tune"])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--only", choices=["first", "fleet"])
    a = ap.parse_args(argv)
    if a.role == "_first":
        return child_first(a.device)
    if a.role == "_tune":
        return child_tune(a.device)
    with tempfile.TemporaryDirectory(prefix="tilec-remote-bench-") as tmp:
        remote = Remote(tmp)
        try:
            print(f"remote: {remote.kind}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
                  f"{time.strftime('%Y-%m-%d')}")
            if a.device == "cuda":
                import torch
                print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
            if a.only in (None, "first"):
                first_launch(remote, a.device, a.runs, tmp)
            if a.only in (None, "fleet"):
                fleet(remote, a.device, a.runs, a.procs, tmp)
        finally:
            remote.close()


if __name__ == "__main__":
    main()
