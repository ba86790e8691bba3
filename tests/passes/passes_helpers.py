"""Shared helpers for the pass tests: parse text, run passes (verifying after each), compare printed IR."""
import textwrap

from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir
from tilec.ir.verifier import verify
from tilec.passes import PassManager


def norm(text: str) -> str:
    return textwrap.dedent(text).strip() + "\n"


def run_passes(text: str, passes) -> str:
    m = parse_module(norm(text))
    verify(m)
    if isinstance(passes, str):
        passes = passes.split(",")
    PassManager("test", verify=True).run(m, passes)
    return print_ir(m)


def check(passes, before: str, after: str):
    got = run_passes(before, passes)
    want = norm(after)
    assert got == want, f"\n--- got ---\n{got}\n--- want ---\n{want}"
    # the expected text is itself valid IR and a fixed point of the passes
    assert run_passes(want, passes) == want
