"""A worker process of ``compile_ahead``: ``python -m tilec.runtime.compile_worker FOLDER``.

It compiles every job of the batch in ``FOLDER/jobs`` that no other process has claimed yet (the tuning process
compiles from the same batch while its workers start) into the on-disk kernel cache, where the tuning's own
compile then finds it. A job names its kernel by module and qualified name. The worker is started as a plain
module, so the parent's ``__main__`` script is never run again. A failure is not reported: the parent compiles
that variant itself and reports its error exactly as it always does.
"""
from __future__ import annotations

import importlib
import sys

from ..compiler import ASTSource
from ..pipeline import compile_source
from .compile_batch import claim, read_jobs
from .jit import JITFunction


def find_kernel(module: str, qualname: str, fn_key: str):
    """The ``JITFunction`` at ``module.qualname`` (through any autotune/heuristics wrappers), or None when it
    cannot be found or its source is not the one the parent compiles (``fn_key``, its ``cache_key``)."""
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    for _ in range(16):
        if isinstance(obj, JITFunction) or not hasattr(obj, "fn"):
            break
        obj = obj.fn
    if not isinstance(obj, JITFunction) or obj.cache_key != fn_key:
        return None
    return obj


def compile_job(job) -> bool:
    """Compile one job into the cache; True when it compiled."""
    module, qualname, fn_key, signature, constexprs, attrs, target, options = job
    try:
        fn = find_kernel(module, qualname, fn_key)
        if fn is None:
            return False
        compile_source(ASTSource(fn, signature, constexprs, attrs), target, options)
        return True
    except Exception:  # noqa: BLE001  (the parent compiles it again and reports the error)
        return False


def main(argv=None):
    folder = (argv or sys.argv[1:])[0]
    for i, job in enumerate(read_jobs(folder)):
        if claim(folder, i):
            compile_job(job)


if __name__ == "__main__":
    main()
