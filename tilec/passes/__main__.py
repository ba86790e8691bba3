"""``python -m tilec.passes [-p inline,cse,...] [--verify] [--timings] FILE|-``: run passes over textual tir
and print the result (the default pipeline when ``-p`` is not given). The dump variables work as usual."""
from __future__ import annotations

import argparse
import sys

from ..ir.parser import parse_module
from ..ir.printer import print_ir
from .manager import PassManager, parse_pipeline, tir_pipeline


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tilec.passes", description=__doc__)
    ap.add_argument("file", help="a .tir file, or - for stdin")
    ap.add_argument("-p", "--passes", help="comma-separated pass names (default: the tir pipeline)")
    ap.add_argument("--verify", action="store_true", help="verify the IR after every pass")
    ap.add_argument("--timings", action="store_true", help="print per-pass times to stderr")
    ap.add_argument("--kernel", default="module", help="kernel name for TILEC_DUMP_IR filtering and dump dirs")
    a = ap.parse_args(argv)
    text = sys.stdin.read() if a.file == "-" else open(a.file).read()
    module = parse_module(text, "<stdin>" if a.file == "-" else a.file)
    pm = PassManager(a.kernel, verify=a.verify)
    pm.run(module, parse_pipeline(a.passes) if a.passes else tir_pipeline())
    sys.stdout.write(print_ir(module))
    if a.timings:
        sys.stderr.write(pm.report() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
