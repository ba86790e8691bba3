"""tilec.compat and ``python -m tilec``: Triton programs run unmodified on tilec."""
import importlib
import os
import runpy
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilec
import tilec.tools.compile  # noqa: F401  (triton.tools.compile resolves to it)
import tilec.tools.link  # noqa: F401
import tilec.tools.mxfp  # noqa: F401
from tilec import compat

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_tilec(*args, env=None):
    e = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env or {}))
    return subprocess.run([sys.executable, "-m", "tilec", *args], capture_output=True, text=True, env=e, cwd=ROOT,
                          timeout=300)


@pytest.fixture
def installed():
    compat.install()
    try:
        yield
    finally:
        compat.uninstall()


def test_vector_add_script_through_cli():
    r = run_tilec("run", os.path.join("tests", "tuning", "scripts", "vector_add_triton.py"), "1537")
    assert r.returncode == 0, r.stderr
    lines = dict(part.split("=", 1) for line in r.stdout.split("\n") if line for part in line.split())
    assert lines["device"] == "cpu" and lines["size"] == "1537"
    assert float(lines["max_abs_err"]) < 1e-6
    assert abs(float(lines["sum"]) - float(lines["expected_sum"])) < 1e-3


def test_script_sees_what_python_would_give_it():
    script = os.path.join("tests", "tuning", "scripts", "argv_probe.py")
    r = run_tilec("run", script, "a", "--flag", "-x")
    assert r.returncode == 0, r.stderr
    assert "name=__main__" in r.stdout and "tilec_backed=True" in r.stdout
    assert f"argv={[script, 'a', '--flag', '-x']!r}" in r.stdout
    assert f"path0={os.path.normcase(os.path.join(ROOT, 'tests', 'tuning', 'scripts'))}" in r.stdout
    assert run_tilec("run", script, "--fail").returncode == 3
    missing = run_tilec("run", "no_such_script.py")
    assert missing.returncode != 0 and "no_such_script.py" in missing.stderr


def test_uncaught_exception_is_reported_like_python():
    r = run_tilec("run", os.path.join("tests", "tuning", "scripts", "raises.py"))
    assert r.returncode == 1
    tb = r.stderr.splitlines()
    assert tb[0] == "Traceback (most recent call last):" and "raises.py" in tb[1]
    assert tb[-1] == "RuntimeError: boom from the script" and "runpy" not in r.stderr


def test_run_module():
    r = run_tilec("run", "-m", "json.tool", "--help")
    assert r.returncode == 0 and "json.tool" in r.stdout


def test_cli_help_and_version():
    v = run_tilec("--version")
    assert v.returncode == 0 and v.stdout.strip() == f"tilec {tilec.__version__} (Triton 3.6.0 API)"
    h = run_tilec("--help")
    assert h.returncode == 0 and "run" in h.stdout and "--version" in h.stdout


def test_triton_version_is_the_api_tilec_follows(installed):
    import triton
    assert triton.__version__ == "3.6.0" and triton.__tilec_version__ == tilec.__version__


@pytest.mark.parametrize("var", ["TRITON_INTERPRET", "TILEC_INTERPRET"])
@pytest.mark.parametrize("through_cli", [True, False])
def test_triton_interpret_is_honoured(var, through_cli, tmp_path):
    """TRITON_INTERPRET=1 runs kernels in the interpreter wherever TILEC_INTERPRET=1 does: under
    ``python -m tilec run`` and in a plain tilec script."""
    script = tmp_path / "s.py"
    name = "triton" if through_cli else "tilec"
    script.write_text(textwrap.dedent(f"""
        import numpy as np
        import {name} as t
        import {name}.language as tl

        @t.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)

        x = np.zeros(8, np.float32)
        k[(1,)](x, BLOCK=8)
        print(k.interpret, x.sum())
    """))
    env = {"TILEC_INTERPRET": "", var: "1"}  # (an empty TILEC_INTERPRET is unset: Triton's name applies)
    if through_cli:
        r = run_tilec("run", str(script), env=env)
    else:
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, PYTHONPATH=ROOT, **env))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "8.0"]


def test_importing_tilec_does_not_provide_triton():
    r = subprocess.run([sys.executable, "-c", "import tilec, tilec.compat, sys; import importlib.util as u; "
                        "print(any(f.__class__.__name__ == 'TritonFinder' for f in sys.meta_path))"],
                       capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.stdout.strip() == "False", r.stderr


def test_triton_names_resolve_to_tilec(installed, monkeypatch):
    from tilec import backends
    monkeypatch.setattr(backends, "_PRESENT", {"cuda": False, "hip": False})  # as on a machine without a GPU
    import triton
    import triton.language as tl
    from triton import language as tl2
    from triton.language.extra.cuda import libdevice
    import triton.testing
    from triton.runtime import driver

    assert tl is tl2 and tl.constexpr is tilec.language.constexpr and tl.load is tilec.language.load
    assert tl.math.exp is tilec.language.exp and libdevice.exp is tilec.language.exp
    assert triton.jit is tilec.jit and triton.cdiv(10, 3) == 4 and triton.next_power_of_2(100) == 128
    assert triton.Config is tilec.runtime.autotuner.Config and triton.autotune is tilec.runtime.autotuner.autotune
    assert triton.testing.do_bench is tilec.testing.do_bench
    assert driver.active.get_current_target().backend == "cpu"
    assert driver.active.utils.get_device_properties(0)["multiprocessor_count"] >= 1
    assert str(driver.active.get_active_torch_device()) == "cpu"
    with pytest.raises(ModuleNotFoundError, match="triton.tools.*compatibility layer"):
        importlib.import_module("triton.tools.nope")
    import triton.tools
    from triton.tools import compile as aot_compile, link as aot_link
    from triton.language.extra import libdevice as extra_libdevice
    assert aot_compile.main is tilec.tools.compile.main and aot_link.main is tilec.tools.link.main
    assert extra_libdevice.asin is not None and extra_libdevice.asin is libdevice.asin
    from triton.tools.mxfp import MXFP4Tensor, MXScaleTensor
    assert MXFP4Tensor is tilec.tools.mxfp.MXFP4Tensor and MXScaleTensor is tilec.tools.mxfp.MXScaleTensor
    with pytest.raises(AttributeError, match="tilec does not provide triton.language.no_such_op"):
        tl.no_such_op


def test_install_is_reversible(installed):
    import triton
    assert sys.modules["triton"] is triton
    compat.uninstall()
    assert "triton" not in sys.modules or not getattr(sys.modules["triton"], "__tilec_compat__", False)
    compat.install()
    import triton as again
    assert again.__tilec_compat__


def test_autotune_heuristics_libdevice_through_triton_names(installed, capsys, monkeypatch):
    monkeypatch.setenv("TILEC_PRINT_AUTOTUNING", "1")
    g = runpy.run_path(os.path.join(SCRIPTS, "tuned_triton.py"))
    for n in (1000, 256):
        best = g["check"](n)
        assert best.kwargs["BLOCK_SIZE"] in (32, 128)
    assert len(g["exp_kernel"].cache) == 2
    assert capsys.readouterr().err.count("[tilec autotune] exp_kernel") == 4


def test_torch_tutorial_script():
    pytest.importorskip("torch")
    r = run_tilec("run", os.path.join("tests", "tuning", "scripts", "torch_tutorial.py"),
                  env={"TILEC_PRINT_AUTOTUNING": "1"})
    assert r.returncode == 0, r.stderr
    assert "max difference 0.0" in r.stdout and "timed True" in r.stdout
    assert "Autotuning kernel add_kernel finished after" in r.stdout


def test_numpy_arrays_stay_numpy(installed):
    """A kernel written against triton works with numpy arrays directly (no torch needed)."""
    g = runpy.run_path(os.path.join(SCRIPTS, "vector_add_triton.py"))
    x = np.random.default_rng(5).random(77, dtype=np.float32)
    np.testing.assert_allclose(g["add"](x, x), 2 * x.astype(np.float64), rtol=1e-6)


def test_run_without_a_script_is_a_usage_error():
    r = run_tilec("run")
    assert r.returncode == 2 and "give a script to run" in r.stderr


def test_profiler_imports_and_refuses_when_used(installed):
    """Triton's tutorials import Proton at the top and profile only after their correctness checks: the import
    works, and the first call is tilec's one-line error, not a silent no-op."""
    import triton.profiler as proton
    import triton.profiler.viewer as viewer
    from tilec.compat_profiler import ProfilerUnavailable
    with pytest.raises(ProfilerUnavailable, match=r"triton.profiler.start: tilec does not provide .*Proton"):
        proton.start("matmul", hook="triton")
    with pytest.raises(ProfilerUnavailable, match="triton.profiler.scope"):
        with proton.scope("torch", {"flops": 1.0}):
            pass
    with pytest.raises(ProfilerUnavailable, match="triton.profiler.viewer.parse"):
        viewer.parse(["time/ms"], "matmul.hatchet")
    with pytest.raises(AttributeError, match="tilec does not provide triton.profiler.no_such_name"):
        proton.no_such_name
