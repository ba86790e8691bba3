"""The frontend's kernel tests, re-run with launches going through the tir passes and the CPU backend instead of
the reference evaluator: every kernel the frontend can produce must also run natively, with the same results."""
import importlib
import inspect
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FRONTEND = os.path.join(HERE, os.pardir, "frontend")
MODULES = ("test_kernels", "test_control_flow")
SKIP = {"test_nested_jit_calls_with_tuple_returns"}  # asserts the un-inlined module's function list


def _load():
    if not os.path.isdir(FRONTEND):
        return {}
    sys.path.insert(0, FRONTEND)
    try:
        helpers = importlib.import_module("helpers")
        mods = {m: importlib.import_module(m) for m in MODULES}
    except Exception:  # the frontend's tests are not importable here
        return {}
    finally:
        sys.path.remove(FRONTEND)
    return {"helpers": helpers, **mods}


_MODS = _load()
CASES = [(m, n) for m in MODULES if m in _MODS for n, f in vars(_MODS[m]).items()
         if n.startswith("test_") and callable(f) and n not in SKIP
         and not getattr(f, "pytestmark", None) and not inspect.signature(f).parameters]


def _cpu_launch(kernel, grid, *args, **constexprs):
    from tilec.passes import PassManager, tir_pipeline

    from .helpers import compile_cpu
    module, runtime = _MODS["helpers"].build(kernel, *args, **constexprs)
    PassManager("cpu-check").run(module, tir_pipeline())
    run, _, _ = compile_cpu(module)
    grid = (grid,) if isinstance(grid, int) else tuple(grid)
    run(grid + (1,) * (3 - len(grid)), runtime)
    return module


@pytest.mark.parametrize("mod,name", CASES)
def test_frontend_kernel_on_cpu(mod, name, monkeypatch):
    m = _MODS[mod]
    monkeypatch.setattr(m, "launch", _cpu_launch, raising=False)
    getattr(m, name)()
