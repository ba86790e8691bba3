"""python -m tilec.tools.report: runs a script and prints a table per kernel it compiled (specialisations apart,
launch options honoured), cross-compiles for --target, shows SASS where a disassembler is on PATH, and passes the
script's failures through."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import tilec
import tilec.language as tl
from tilec import compat
from tilec.errors import BackendError
from tilec.pipeline import CompiledKernel
from tilec.tools.collect import collect
from tilec.tools.report import sass
from tilec.tools.resources import rows, table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LABELS = ["backend", "registers", "spills", "shared memory", "local/stack", "num_warps", "num_stages"]

SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import tilec
    import tilec.language as tl


    @tilec.jit
    def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


    @tilec.jit
    def row_sum_kernel(x_ptr, out_ptr, N: tl.constexpr):
        r = tl.program_id(0)
        tl.store(out_ptr + r, tl.sum(tl.load(x_ptr + r * N + tl.arange(0, N)), axis=0))


    if __name__ == "__main__":
        print("script args:", sys.argv[1:])
        x = np.arange(100, dtype=np.float32)
        out = np.empty_like(x)
        for block in (32, 64):
            double_kernel[(tilec.cdiv(100, block),)](x, out, 100, BLOCK=block)
        assert np.array_equal(out, 2 * x)
        if "--fail" in sys.argv:
            raise RuntimeError("the script's own error")
        m = np.ones((4, 16), np.float32)
        s = np.empty(4, np.float32)
        row_sum_kernel[(4,)](m, s, N=16, num_warps=8)
        assert np.array_equal(s, np.full(4, 16, np.float32))
        print("script done")
        if "--exit" in sys.argv:
            sys.exit(3)
''')

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on PATH (CUDA registers "
                                 "and spills come from its report)")


def _disassembler_works() -> bool:
    if not (shutil.which("cuobjdump") or shutil.which("nvdisasm")) or shutil.which("ptxas") is None:
        return False
    try:
        return "EXIT" in _cuda_kernel().asm["sass"]
    except BackendError:
        return False


needs_sass = pytest.mark.skipif("not _disassembler_works()", reason="no working cuobjdump or nvdisasm on PATH "
                                "(pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm provides them)")


@tilec.jit
def copy_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def _cuda_kernel():
    src = tilec.ASTSource(copy_kernel, signature="*fp32,*fp32", constexprs={"BLOCK": 128})
    return tilec.compile(src, target=tilec.Target("cuda", 90, 32))


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "my_script.py"
    path.write_text(SCRIPT)
    return path


def report(*args, path_env=None):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TILEC_DEBUG", None)
    if path_env is not None:
        env["PATH"] = path_env
    return subprocess.run([sys.executable, "-m", "tilec.tools.report", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=300)


def tables(stdout: str) -> list[str]:
    """The report's tables, one text per kernel."""
    body = stdout[stdout.index("tilec report:"):]
    return ["[" + t for t in body.split("\n[")[1:]]


def row(table_text: str, label: str) -> str:
    line = next(x for x in table_text.splitlines() if x.strip().startswith(label + "  "))
    return line.strip()[len(label):].strip()


# -- the command line ----------------------------------------------------------------------------------------
def test_a_table_per_compiled_kernel(script):
    r = report(script, "--", "a", "--b")
    assert r.returncode == 0, r.stderr
    assert "script args: ['a', '--b']" in r.stdout and "script done" in r.stdout
    assert f"tilec report: 3 kernels compiled by {script}" in r.stdout
    ts = tables(r.stdout)
    assert [t.splitlines()[0] for t in ts] == ["[1] double_kernel", "[2] double_kernel", "[3] row_sum_kernel"]
    for t in ts:
        for label in LABELS:
            assert row(t, label)
        assert row(t, "backend").startswith("cpu ")
        assert int(row(t, "registers").split()[0]) > 0
        assert row(t, "spills").endswith("spill stores")
    assert "BLOCK=32" in row(ts[0], "specialisation") and "BLOCK=64" in row(ts[1], "specialisation")
    assert row(ts[2], "num_warps") == "8" and row(ts[0], "num_warps") == "4"  # the launch's option
    assert row(ts[0], "num_stages") == "3"
    assert "SASS" not in r.stdout  # CPU kernels have none


def test_kernel_filter(script):
    r = report(script, "--kernel", "row_sum_kernel")
    assert r.returncode == 0, r.stderr
    assert [t.splitlines()[0] for t in tables(r.stdout)] == ["[1] row_sum_kernel"]
    r = report(script, "--kernel", "nope")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == ("python -m tilec.tools.report: error: the script compiled no "
                                                 "kernel named 'nope' (it compiled: double_kernel, row_sum_kernel)")


@needs_ptxas
def test_target_cross_compiles_what_the_script_compiled(script):
    r = report(script, "--target", "cuda:90", "--no-sass")
    assert r.returncode == 0, r.stderr
    assert "tilec report: 3 kernels compiled by" in r.stdout and "for cuda:90" in r.stdout
    ts = tables(r.stdout)
    for t in ts:
        assert row(t, "backend") == "cuda sm_90"
        assert row(t, "registers").endswith(" per thread") and int(row(t, "registers").split()[0]) > 0
        assert row(t, "spills") == "0 bytes stored, 0 bytes loaded"
        assert row(t, "shared memory").endswith(" bytes")
        assert row(t, "local/stack").endswith("bytes stack frame")
    assert row(ts[2], "num_warps") == "8"  # launch options travel with the specialisation
    assert "SASS" not in r.stdout


@needs_ptxas
@needs_sass
def test_sass_of_cuda_kernels(script):
    r = report(script, "--target", "cuda:80", "--kernel", "double_kernel")
    assert r.returncode == 0, r.stderr
    ts = tables(r.stdout)
    assert len(ts) == 2
    for t in ts:
        sass_text = t[t.index("  SASS:\n"):]
        assert "double_kernel" in sass_text and "EXIT" in sass_text and "sm_80" in sass_text
        assert "/* 0x" not in sass_text  # encodings dropped


@needs_ptxas
def test_sass_without_a_disassembler_says_why(script, tmp_path):
    bare = tmp_path / "bin"
    bare.mkdir()
    os.symlink(shutil.which("ptxas"), bare / "ptxas")
    r = report(script, "--target", "cuda:90", "--kernel", "row_sum_kernel", path_env=str(bare))
    assert r.returncode == 0, r.stderr
    assert "(no SASS: neither cuobjdump nor nvdisasm is on PATH)" in r.stdout


def test_script_failures_pass_through(script):
    r = report(script, "--", "--fail")
    assert r.returncode == 1
    assert "RuntimeError: the script's own error" in r.stderr
    assert "tilec/tools" not in r.stderr and "runpy" not in r.stderr  # the script's frames only
    assert "tilec report: 2 kernels" in r.stdout  # what it compiled before failing
    r = report(script, "--", "--exit")
    assert r.returncode == 3 and "tilec report: 3 kernels" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["missing.py"], "cannot run 'missing.py': no such file"),
    (["SCRIPT", "--target", "nvidia"], "bad --target 'nvidia': unknown backend 'nvidia'"),
])
def test_bad_usage(script, args, message):
    r = report(*[script if a == "SCRIPT" else a for a in args])
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and message in r.stderr and "Traceback" not in r.stderr


# -- in-process pieces ---------------------------------------------------------------------------------------
def test_collect_sees_cache_hits_and_restores_the_interpreter(script):
    argv, path, had_compat = list(sys.argv), list(sys.path), compat.installed()
    first, status = collect(str(script), ["x"])
    again, status2 = collect(str(script), ["x"])  # the kernel cache answers now
    assert status == status2 == 0
    assert [c.name for c in first] == [c.name for c in again] == ["double_kernel", "double_kernel", "row_sum_kernel"]
    assert [c.kernel.metadata["hash"] for c in first] == [c.kernel.metadata["hash"] for c in again]
    assert first[2].options["num_warps"] == 8
    assert sys.argv == argv and sys.path == path and compat.installed() == had_compat


def test_rows_read_the_cpu_metadata():
    src = tilec.ASTSource(copy_kernel, signature="*fp32,*fp32", constexprs={"BLOCK": 128})
    k = tilec.compile(src, target=tilec.Target("cpu"))
    got = dict(rows(k, src))
    md = k.metadata
    assert got["registers"] == f"{md['num_regs']} (registers touched)"
    assert got["spills"] == f"{md['spill_stores']} spill stores"
    assert got["local/stack"] == f"{md['stack_bytes']} bytes stack frame, {md['scratch_size']} bytes tile scratch"
    assert got["specialisation"] == "*fp32,*fp32; BLOCK=128"
    assert list(got)[1:1 + len(LABELS)] == LABELS
    with pytest.raises(KeyError):
        k.asm["sass"]


def test_rows_without_ptxas_show_dashes():
    k = CompiledKernel("k", tilec.Target("cuda", 90, 32), {"ptx": ""},
                       {"target": ["cuda", 90, 32], "arch": 90, "options": {"num_warps": 2, "num_stages": 4},
                        "num_warps": 2}, backend=None)
    got = dict(rows(k))
    assert got["backend"] == "cuda sm_90 (PTX only: no ptxas)"
    assert got["registers"] == got["spills"] == got["local/stack"] == "-"
    assert got["shared memory"] == "0 bytes" and got["num_warps"] == "2" and got["num_stages"] == "4"
    assert table(k).splitlines()[:2] == ["k", "-"]


@needs_ptxas
def test_sass_is_made_on_first_read():
    k = _cuda_kernel()
    assert "cubin" in k.asm and "sass" not in k.asm
    if _disassembler_works():
        assert "copy_kernel" in k.asm["sass"] and "sass" in k.asm
    else:
        with pytest.raises(BackendError, match="no SASS"):
            k.asm["sass"]
        assert sass(k).startswith("(no SASS")
