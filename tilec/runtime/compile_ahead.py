"""Compiling an autotuner's candidate configs ahead, in parallel worker processes.

Tuning compiles every config before timing it; one after another, that is most of a first tuning's time. Before
timing, the autotuner asks here: the variants its configs need are found by a dry run of each config's warmup
(``misses.collecting``: ``JITFunction._compile`` records the miss instead of compiling), those already in the on-disk
cache are dropped, and the rest are compiled into that cache by ``compile_worker`` processes and this one. The
timing loop then compiles as before and finds each variant there. Nothing else changes: a variant a worker could
not compile (an error, a kernel the worker cannot import) is compiled in this process, which reports any error
exactly as without workers.

Workers are used only where they can be faster: at least two variants to compile, an idle CPU besides this
process's (by the load average), the on-disk cache on, and a kernel a fresh interpreter can import by module and
qualified name (not one defined in a ``__main__`` script, an exec'd string or a closure).
``TILEC_AUTOTUNE_COMPILE_WORKERS=N`` forces N workers whenever anything needs compiling (0: never).
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile

from .. import cache, stage_files
from ..backends import get_backend
from ..pipeline import _compile_source, cache_key
from .compile_batch import claim, write_jobs
from .misses import collecting, recording  # noqa: F401  (the dry run whose misses are compiled here)

ENV = "TILEC_AUTOTUNE_COMPILE_WORKERS"

def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def workers_for(n_jobs: int) -> int:
    """How many worker processes, besides this one, compile ``n_jobs`` variants (0: this process alone, as the
    timing loop does)."""
    if n_jobs < 1:
        return 0
    setting = os.environ.get(ENV, "").strip()
    if setting:
        try:
            return max(0, min(int(setting), n_jobs))
        except ValueError:
            pass  # not a number: the automatic choice
    if n_jobs < 2:
        return 0
    return max(0, min(_idle_cpus(), n_jobs - 1))  # this process compiles too


def _idle_cpus() -> int:
    """CPUs nobody else is using (this process counts as busy): a worker on a busy CPU only slows the tuning
    down, since starting one costs an interpreter's imports."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 1.0
    return int(_cpus() - max(load, 1.0))


def reachable(fn) -> bool:
    """Whether a fresh interpreter finds ``fn`` again by module and qualified name."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        return False
    mod = sys.modules.get(module)
    return mod is not None and getattr(mod, "__spec__", None) is not None and bool(getattr(mod, "__file__", None))


def _job(fn, src, target, options):
    """(cache key, picklable job for a worker), or None when the variant cannot or need not go to a worker."""
    if options.get("ir_override") is not None or not reachable(fn):
        return None
    key = cache_key(src, target, get_backend(target).parse_options(dict(options)))
    if cache.contains(key) or stage_files.variant_has_overrides(key[:12]):
        return None
    job = (fn.__module__, fn.__qualname__, fn.cache_key, src.signature, src.constexprs, src.attrs, target, options)
    try:
        pickle.dumps(job)
    except Exception:  # noqa: BLE001  (a constexpr no worker can receive)
        return None
    return key, job


def plan(found) -> list:
    """(recorded miss, job) for the misses ``found`` that can go to workers, one per distinct variant."""
    jobs = {}
    for miss in found:
        j = _job(*miss)
        if j is not None:
            jobs.setdefault(j[0], (miss, j[1]))
    return list(jobs.values())


def run_batch(batch: list, n: int):
    """Compile ``batch`` ((miss, job) pairs) into the cache with ``n`` worker processes and this one: each job
    goes to whichever claims it first, so this process compiles while the workers start and none waits idle."""
    # a worker starts no workers of its own (importing a kernel's module may tune something)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path), **{ENV: "0"})
    with tempfile.TemporaryDirectory(prefix="tilec-compile-") as folder:
        write_jobs(folder, [job for _, job in batch])
        procs = [subprocess.Popen([sys.executable, "-m", "tilec.runtime.compile_worker", folder], env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for _ in range(n)]
        try:
            for i, ((fn, src, target, options), _) in enumerate(batch):
                if claim(folder, i):
                    try:
                        # not compile_source: the timing loop's cache hit tells the compile observers
                        _compile_source(src, target, options)
                    except Exception:  # noqa: BLE001  (compiled again by the timing loop, which reports it)
                        pass
        finally:
            for p in procs:
                p.wait()


def compile_ahead(found) -> int:
    """Compile the variants of recorded misses ``found`` in parallel where that pays; how many workers ran."""
    if not cache.enabled():
        return 0
    batch = plan(found)
    n = workers_for(len(batch))
    if n:
        run_batch(batch, n)
    return n
