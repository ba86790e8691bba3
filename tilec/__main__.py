"""``python -m tilec``: run a Triton program on tilec (``run script.py [args]`` / ``run -m module [args]``).

The script runs as Python would run it (``__name__ == "__main__"``, ``sys.argv`` = the script and its arguments,
its directory first on ``sys.path``) with ``tilec.compat`` installed, so its ``import triton`` gets tilec.
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback

from .version import TRITON_API_VERSION, __version__
from . import compat


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tilec", description="tilec: a tile compiler for Triton-language "
                                "kernels, written in Python.")
    p.add_argument("--version", action="version", version=f"tilec {__version__} (Triton {TRITON_API_VERSION} API)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    r = sub.add_parser("run", help="run a Triton script (or -m module) with 'import triton' resolving to tilec",
                       description="Run a Triton program unmodified on tilec. Environment: TILEC_BACKEND=cpu|cuda, "
                       "TILEC_INTERPRET=1 (or TRITON_INTERPRET=1), "
                       "TILEC_PRINT_AUTOTUNING=1, TILEC_AUTOTUNE_PROGRESS=0, TILEC_CACHE_AUTOTUNING=1, "
                       "TILEC_CACHE_DIR, TILEC_ALWAYS_COMPILE=1, TILEC_BENCH_MAX_POINTS=N (perf_report runs the "
                       "first N x values of each benchmark).")
    r.add_argument("-m", dest="module", metavar="MODULE", help="run a module as 'python -m MODULE' would")
    r.add_argument("target", nargs="?", help="the script to run")
    r.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    return p


def run(target=None, args=(), module=None) -> None:
    """Run a script path (or a module by name) as ``__main__`` with the Triton compatibility layer installed."""
    compat.install()
    if module is not None:
        sys.argv = [module, *args]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return
    path = os.path.abspath(target)
    if not os.path.exists(path):
        raise SystemExit(f"python -m tilec run: can't open file '{target}': no such file")
    sys.argv = [target, *args]
    sys.path.insert(0, path if os.path.isdir(path) else os.path.dirname(path))
    runpy.run_path(target, run_name="__main__")


def run_reporting(**kw) -> int:
    """Run; on an uncaught exception print the traceback from the program's own frames (as python would, without
    this launcher's) and exit with status 1."""
    try:
        run(**kw)
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - reported like the interpreter does
        tb = e.__traceback__
        ours = {os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>"}
        while tb is not None and tb.tb_next is not None and (
                tb.tb_frame.f_code.co_filename in ours or os.path.abspath(tb.tb_frame.f_code.co_filename) in ours):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        return 1
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser()
    # everything after the script (or -m module) belongs to it, options included
    if argv[:1] == ["run"] and len(argv) > 1 and not argv[1].startswith("-") and argv[1] not in ("-m",):
        return run_reporting(target=argv[1], args=argv[2:])
    if argv[:2] == ["run", "-m"] and len(argv) > 2:
        return run_reporting(module=argv[2], args=argv[3:])
    ns = parser.parse_args(argv)
    if ns.command != "run":
        parser.print_help()
        return 0 if ns.command is None and not argv else 2
    if ns.module is None and ns.target is None:
        parser.error("run: give a script to run (python -m tilec run script.py [args]) or -m MODULE")
    if ns.module is not None:
        return run_reporting(module=ns.module, args=[a for a in [ns.target, *ns.args] if a is not None])
    return run_reporting(target=ns.target, args=ns.args)


if __name__ == "__main__":
    sys.exit(main())
