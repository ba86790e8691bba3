"""Source locations from the kernel's Python lines to the machine code: ops carry file:line:col, dumps show them
with TILEC_DUMP_IR_LOC=1 and they parse back, the CPU assembly has a line table and the PTX has .loc lines for
those lines (ptxas accepts it); TILEC_PASS_TIMING prints a per-pass table; stderr dumps include the CPU plan."""
import inspect
import os
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir


@tilec.jit
def located_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.exp(x) * 2.0
    tl.store(out_ptr + offs, y, mask=mask)


LINES, FIRST = inspect.getsourcelines(located_kernel.fn)
LINE = {key: FIRST + i for i, text in enumerate(LINES) for key in ("load", "exp", "store") if f"tl.{key}(" in text}
FILE = os.path.abspath(__file__)


@pytest.fixture
def env(monkeypatch):
    for v in ("TILEC_DUMP_IR", "TILEC_DUMP_DIR", "TILEC_DUMP_IR_LOC", "TILEC_PASS_TIMING", "TILEC_DEBUG_LINES"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    return monkeypatch


def _src(block=64):
    return tilec.ASTSource(located_kernel, signature="*fp32,*fp32,i32", constexprs={"BLOCK": block})


def test_ops_carry_locations_and_they_round_trip(env):
    k = tilec.compile(_src(), target=tilec.Target("cpu"))
    assert "loc(" not in k.asm["tir"]
    env.setenv("TILEC_DUMP_IR_LOC", "1")
    k = tilec.compile(_src(), target=tilec.Target("cpu"))
    text = k.asm["tir"]
    assert f'loc("{FILE}":{LINE["load"]}:' in text and f'loc("{FILE}":{LINE["store"]}:' in text
    load = next(ln for ln in text.splitlines() if " = load " in ln)
    assert load.rstrip().endswith(")") and f':{LINE["load"]}:' in load
    module = parse_module(text)
    assert print_ir(module, locations=True) == text


def test_cpu_assembly_has_a_line_table(env):
    k = tilec.compile(_src(), target=tilec.Target("cpu"))
    asm = k.asm["asm"]
    files = {n: os.path.join(d, f) for n, d, f in re.findall(r'\.file\s+(\d+)\s+"([^"]*)"\s+"([^"]*)"', asm)}
    assert FILE in files.values()
    num = next(n for n, p in files.items() if p == FILE)
    lines = {int(x) for x in re.findall(rf"\.loc\s+{num}\s+(\d+)", asm)}
    assert {LINE["load"], LINE["store"]} <= lines
    env.setenv("TILEC_DEBUG_LINES", "0")
    assert ".loc" not in tilec.compile(_src(), target=tilec.Target("cpu")).asm["asm"]
    # and the kernel still runs with its line table
    x = np.linspace(-1, 1, 100).astype(np.float32)
    out = np.zeros_like(x)
    located_kernel[(2,)](x, out, 100, BLOCK=64)
    np.testing.assert_allclose(out, np.exp(x) * 2, rtol=1e-6)


def test_ptx_has_loc_lines_for_the_kernel_lines(env):
    k = tilec.compile(_src(128), target=tilec.Target("cuda", 90, 32))
    ptx = k.asm["ptx"]
    m = re.search(r'\.file\s+(\d+)\s+"([^"]*)"(?:,\s*\d+,\s*\d+)?(?:\s+"([^"]*)")?', ptx)
    assert m, "no .file directive"
    path = os.path.join(m.group(2), m.group(3)) if m.group(3) else m.group(2)
    assert path == FILE
    lines = {int(x) for x in re.findall(rf"\.loc\s+{m.group(1)}\s+(\d+)", ptx)}
    assert {LINE["load"], LINE["exp"], LINE["store"]} <= lines
    if "cubin" in k.asm:  # ptxas took it (it refuses DWARF sections in optimised code)
        assert k.asm["cubin"][:4] == b"\x7fELF"


def test_pass_timing_and_stage_dumps(env, capsys):
    env.setenv("TILEC_PASS_TIMING", "1")
    tilec.compile(_src(), target=tilec.Target("cpu"))
    err = capsys.readouterr().err
    table = err.split("pass timing on located_kernel [", 1)[1]
    for name in ("inline", "canonicalize", "cse", "licm", "dce", "stage plan", "stage llir", "stage asm", "total"):
        assert re.search(rf"^{name}\s+\d+\.\d\d ms$", table, re.M), name
    env.delenv("TILEC_PASS_TIMING")
    env.setenv("TILEC_DUMP_IR", "located_kernel")
    tilec.compile(_src(), target=tilec.Target("cpu"))
    err = capsys.readouterr().err
    assert re.search(r"// -----// IR after dce \([\d.]+ ms\)(?: \(no change\))? on located_kernel \[\w{12}\]", err)
    assert re.search(r"// -----// stage plan on located_kernel \[\w{12}\] //----- //", err)
    assert "// -----// stage llir on located_kernel" in err
