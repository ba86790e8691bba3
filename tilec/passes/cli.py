"""The command line that runs passes over textual tir or gir and prints the result so that it parses back.
``python -m tilec.passes`` and ``tilec-opt`` are this one driver; ``tilec-opt`` adds ``--target``, which needs the
backends (a layer above the passes), through the ``targets`` hook of ``main``.

Exit status: 0 when done; 2 for bad input (usage, an unknown pass or option, an unreadable file, IR that does
not parse or does not verify), with a one-line message on stderr; 1 when a pass fails or leaves invalid IR (the
message names the pass). ``TILEC_DEBUG=1`` adds the traceback. The dump, print and break variables of
``manager.py`` work as in a compile.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Callable

from ..errors import TilecError
from ..ir.core import IRError
from ..ir.parser import IRParseError, parse_module
from ..ir.printer import print_ir
from ..ir.verifier import verify
from ..targets.options import Options
from .manager import PassManager, tir_pipeline
from .pipeline_spec import describe_passes, parse_pipeline

# Defaults for the passes' target options (each pass gets those its constructor names): the compile options'
# defaults, and a 32-lane target with sm_80's matrix units; a --target replaces arch and warp_size, gir input its
# num_warps, explicit flags all of them.
GPU_OPTIONS = {"num_warps": Options.num_warps, "warp_size": 32, "arch": 80, "num_stages": Options.num_stages}


class UsageError(TilecError):
    """Input the driver refuses before running anything (reported in one line, exit status 2)."""


@dataclass
class TargetSetting:
    """What ``--target`` contributes: option defaults (``arch``, ``warp_size``), the target's own passes,
    which follow the tir pipeline when no ``-p`` is given (``passes(options)`` -> Pass instances), and the
    backend's typed options for the driver's options (``options(options)``), which every pass run is handed."""
    name: str
    defaults: dict
    passes: Callable[[dict], list]
    options: Callable[[dict], object] | None = None


def build_parser(prog: str, with_target: bool) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description="Run passes over textual tir or gir and print the result.",
                                 epilog="Exit status: 0 done, 1 a pass failed, 2 bad input.")
    ap.add_argument("file", nargs="?", default="-", help="a .tir/.gir file; - or nothing for stdin")
    ap.add_argument("-p", "--passes", metavar="PIPELINE",
                    help='passes to run, e.g. "inline,convert-to-gir{num-warps=8},coalesce" (default: the tir '
                         'pipeline' + (", then the target's passes when --target is given)" if with_target else ")"))
    ap.add_argument("-o", "--output", metavar="FILE", help="write the result here instead of stdout")
    ap.add_argument("--verify-each", "--verify", dest="verify_each", action="store_true",
                    help="verify the IR after every pass")
    ap.add_argument("--print-between-passes", action="store_true",
                    help="print the IR after every pass to stderr, under a header naming the pass")
    ap.add_argument("--list-passes", action="store_true", help="list every pass with its options and exit")
    ap.add_argument("--timings", action="store_true", help="print per-pass times to stderr")
    ap.add_argument("--kernel", help="kernel name for headers, TILEC_DUMP_IR filtering and dump folders "
                                     "(default: the module's kernel)")
    if with_target:
        ap.add_argument("--target", metavar="BACKEND[:ARCH]",
                        help="compile target whose facts the passes use, e.g. cuda:90 (arch, warp size)")
    for k, v in GPU_OPTIONS.items():
        ap.add_argument("--" + k.replace("_", "-"), type=int, default=None,
                        help=f"default for every pass that takes {k.replace('_', '-')} (default {v})")
    return ap


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {path!r}: {getattr(e, 'strerror', None) or e}") from None


def _one_line(e: BaseException) -> str:
    if isinstance(e, IRParseError):
        return f"{e.file}:{e.line}:{e.col}: {e.message}"
    text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    return lines[0] if lines else type(e).__name__


def _fail(prog: str, e: BaseException, status: int) -> int:
    if os.environ.get("TILEC_DEBUG", "") not in ("", "0"):
        raise e
    sys.stderr.write(f"{prog}: error: {_one_line(e)}\n")
    return status


def _module_options(module) -> dict:
    """Options the input already fixes: gir records the warps its layouts were made for (``num_warps`` on the
    kernel), so passes run over it default to the same count."""
    kernel = next((f for f in module.funcs if f.attrs.get("kernel")), None)
    nw = kernel.attrs.get("num_warps") if kernel is not None else None
    return {"num_warps": nw} if isinstance(nw, int) else {}


def _kernel_name(module) -> str:
    return next((f.sym_name for f in module.funcs if f.attrs.get("kernel")), "module")


def main(argv=None, prog: str = "python -m tilec.passes",
         targets: Callable[[str], TargetSetting] | None = None) -> int:
    """Run the command line; ``targets`` resolves ``--target`` (the option exists only when it is given)."""
    a = build_parser(prog, targets is not None).parse_args(argv)
    if a.list_passes:
        sys.stdout.write(describe_passes())
        return 0
    try:
        text, name = _read(a.file)
        module = parse_module(text, name)
        options = dict(GPU_OPTIONS)
        target = targets(a.target) if targets is not None and a.target else None
        if target is not None:
            options.update(target.defaults)
        options.update(_module_options(module))
        options.update({k: getattr(a, k) for k in GPU_OPTIONS if getattr(a, k) is not None})
        if a.passes is not None:
            passes = parse_pipeline(a.passes, options)
        else:
            passes = tir_pipeline() + (target.passes(options) if target is not None else [])
        typed = target.options(options) if target is not None and target.options is not None else None
    except (IRError, TilecError) as e:  # TilecError: also a target refusing the options (num-warps=3 on CUDA)
        return _fail(prog, e, 2)
    try:
        verify(module)
    except IRError as e:
        return _fail(prog, UsageError(f"{name}: the input is not valid IR: {_one_line(e)}"), 2)
    pm = PassManager(a.kernel or _kernel_name(module), verify=a.verify_each,
                     print_after={"all"} if a.print_between_passes else (), options=typed)
    try:
        pm.run(module, passes)
    except (IRError, TilecError) as e:
        return _fail(prog, e, 1)
    out = print_ir(module)
    out += "" if out.endswith("\n") else "\n"
    if a.output:
        try:
            with open(a.output, "w", encoding="utf-8") as f:
                f.write(out)
        except OSError as e:
            return _fail(prog, UsageError(f"cannot write {a.output!r}: {e.strerror or e}"), 2)
    else:
        sys.stdout.write(out)
    if a.timings:
        sys.stderr.write(pm.report() + "\n")
    return 0
