"""The command line of the viewer: run a script as ``python -m tilec run`` would, record what it compiles, and
write the pages. Exit status: the script's when it failed, 2 for bad usage (or nothing compiled), else 0."""
from __future__ import annotations

import argparse
import os
import sys

from ..collect import run_script
from .page import write_pages
from .record import recording


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tilec.tools.view",
                                 description="Run a script; write a pass-by-pass HTML page per kernel variant.",
                                 epilog="Arguments after -- go to the script. TILEC_DUMP_HTML=DIR does the same "
                                        "for any program.")
    ap.add_argument("script", help="the Python script to run (as __main__, with 'import triton' giving tilec)")
    ap.add_argument("--kernel", action="append", metavar="NAME", help="only this kernel (repeatable)")
    ap.add_argument("-o", "--out", default="tilec_view", help="folder of the pages (default: tilec_view)")
    argv = list(sys.argv[1:] if argv is None else argv)
    script_args = []
    if "--" in argv:
        i = argv.index("--")
        argv, script_args = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)
    if not os.path.isfile(a.script):
        print(f"tilec: no such script: {a.script}", file=sys.stderr)
        return 2
    with recording() as rec:
        status = run_script(a.script, script_args)
    variants = rec.complete()
    if a.kernel:
        known = sorted({v.kernel for v in variants})
        variants = [v for v in variants if v.kernel in a.kernel]
        missing = sorted(set(a.kernel) - {v.kernel for v in variants})
        if missing:
            print(f"tilec: no compiled kernel named {', '.join(missing)} (compiled: {', '.join(known) or 'none'})",
                  file=sys.stderr)
            return status or 2
    if not variants:
        print("tilec: the script compiled no kernel", file=sys.stderr)
        return status or 2
    paths = write_pages(variants, a.out)
    for p in paths:
        print(p)
    return status
