"""``python -m tilec.tools.report script.py [--kernel NAME] [--target cuda:90] [-- script args]``: run a script and
print, for every kernel it compiled, a table of what the kernel uses (backend, registers, spills, shared memory,
local/stack, num_warps, num_stages; see ``resources.py``) and, for CUDA kernels with a cubin, their SASS when
``cuobjdump`` or ``nvdisasm`` is on PATH.

The script runs for real (``collect.py``), so the report covers exactly the specialisations and configs its
launches and warmups compiled. ``--target`` compiles each of them again for another target, which shows CUDA
registers and spills on a machine that ran the script on the CPU (ptxas is all that needs). The exit status is
the script's when it failed, 2 for bad usage, else 0.
"""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import TilecError
from ..pipeline import compile_source
from .collect import Compiled, collect
from .resources import table
from .targets import parse_target


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tilec.tools.report",
                                 description="Run a script; report the resources of every kernel it compiled.",
                                 epilog="Arguments after -- go to the script.")
    ap.add_argument("script", help="the Python script to run (as __main__, with 'import triton' giving tilec)")
    ap.add_argument("--kernel", action="append", metavar="NAME", help="report only this kernel (repeatable)")
    ap.add_argument("--target", metavar="BACKEND[:ARCH]",
                    help="also compile every kernel the script compiled for this target and report those instead "
                         "(e.g. cuda:90)")
    ap.add_argument("--no-sass", action="store_true", help="leave out the SASS of CUDA kernels")
    return ap


def _fail(message: str, status: int = 2) -> int:
    sys.stderr.write(f"python -m tilec.tools.report: error: {message}\n")
    return status


def retarget(seen: list[Compiled], target) -> tuple[list[Compiled], list[str]]:
    """Each compile again for ``target`` (distinct results only), and a line per compile that failed."""
    out, failed, hashes = [], [], set()
    for c in seen:
        try:
            k = compile_source(c.src, target, c.options)
        except (TilecError, ValueError) as e:
            failed.append(f"{c.name}: not compiled for {target}: {str(e).splitlines()[0]}")
            continue
        if k.metadata.get("hash") not in hashes:
            hashes.add(k.metadata.get("hash"))
            out.append(Compiled(c.src, target, c.options, k))
    return out, failed


def sass(kernel) -> str:
    """The kernel's SASS, or a line saying why there is none."""
    try:
        return kernel.asm["sass"]
    except KeyError:
        return "(no SASS: the compile made no cubin; ptxas was not on PATH)\n"
    except TilecError as e:
        return f"({e})\n"


def render(kernels: list[Compiled], show_sass: bool = True) -> str:
    parts = []
    for i, c in enumerate(kernels, 1):
        k = c.kernel
        parts.append(table(k, c.src, f"[{i}] {k.name}"))
        if show_sass and k.metadata.get("target", [None])[0] == "cuda":
            text = sass(k)
            parts.append("  SASS:\n" + "".join(f"    {line}\n" for line in text.rstrip("\n").splitlines()))
    return "\n".join(parts)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    script_args = []
    if "--" in argv:
        i = argv.index("--")
        argv, script_args = argv[:i], argv[i + 1:]
    a = _parser().parse_args(argv)
    if not os.path.isfile(a.script):
        return _fail(f"cannot run {a.script!r}: no such file")
    target = None
    if a.target:
        try:
            target, _ = parse_target(a.target)
        except ValueError as e:
            return _fail(str(e))
    seen, status = collect(a.script, script_args)
    notes = []
    if target is not None:
        seen, notes = retarget(seen, target)
    if a.kernel:
        names = sorted({c.name for c in seen})
        missing = [n for n in a.kernel if n not in names]
        if missing:
            return _fail(f"the script compiled no kernel named {', '.join(map(repr, missing))} "
                         f"(it compiled: {', '.join(names) or 'none'})", status or 2)
        seen = [c for c in seen if c.name in a.kernel]
    where = f" for {target}" if target is not None else ""
    out = [f"\ntilec report: {len(seen)} kernel{'s' if len(seen) != 1 else ''} compiled by {a.script}{where}\n"]
    out += [f"  {n}\n" for n in notes]
    if seen:
        out.append("\n" + render(seen, not a.no_sass))
    sys.stdout.write("".join(out))
    return status


if __name__ == "__main__":
    sys.exit(main())
