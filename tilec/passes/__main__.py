"""``python -m tilec.passes [-p inline,cse,...] [--verify] [--timings] FILE|-``: run passes over textual tir
or gir and print the result (the default tir pipeline when ``-p`` is not given). GPU passes take their options
from ``--num-warps``, ``--warp-size``, ``--arch`` and ``--num-stages`` (each pass gets those its constructor
names). The dump, print and break variables work as usual."""
from __future__ import annotations

import argparse
import inspect
import sys

from ..ir.parser import parse_module
from ..ir.printer import print_ir
from .manager import PassManager, get_pass, tir_pipeline

GPU_OPTIONS = {"num_warps": 4, "warp_size": 32, "arch": 80, "num_stages": 3}


def _build(names: str, options: dict):
    """Pass instances for a comma-separated list, each given the options its constructor accepts."""
    out = []
    for n in (x.strip() for x in names.split(",")):
        if n:
            cls = type(get_pass(n))
            accepted = inspect.signature(cls.__init__).parameters
            out.append(cls(**{k: v for k, v in options.items() if k in accepted}))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tilec.passes", description=__doc__)
    ap.add_argument("file", help="a .tir file, or - for stdin")
    ap.add_argument("-p", "--passes", help="comma-separated pass names (default: the tir pipeline)")
    ap.add_argument("--verify", action="store_true", help="verify the IR after every pass")
    ap.add_argument("--timings", action="store_true", help="print per-pass times to stderr")
    ap.add_argument("--kernel", default="module", help="kernel name for TILEC_DUMP_IR filtering and dump dirs")
    for k, v in GPU_OPTIONS.items():
        ap.add_argument("--" + k.replace("_", "-"), type=int, default=v, help=f"GPU pass option (default {v})")
    a = ap.parse_args(argv)
    text = sys.stdin.read() if a.file == "-" else open(a.file).read()
    module = parse_module(text, "<stdin>" if a.file == "-" else a.file)
    pm = PassManager(a.kernel, verify=a.verify)
    options = {k: getattr(a, k) for k in GPU_OPTIONS}
    pm.run(module, _build(a.passes, options) if a.passes else tir_pipeline())
    sys.stdout.write(print_ir(module))
    if a.timings:
        sys.stderr.write(pm.report() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
