"""The four examples run end to end (small sizes, no timing) and check themselves against numpy."""
import importlib
import os
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, "examples")


@pytest.fixture(scope="module", autouse=True)
def _examples_on_path():
    sys.path.insert(0, os.path.abspath(EXAMPLES))
    yield
    sys.path.remove(os.path.abspath(EXAMPLES))


@pytest.mark.parametrize("name,kwargs", [
    ("vector_add", dict(n=98_432)),
    ("softmax", dict(rows=37, cols=781)),
    ("layer_norm", dict(rows=29, cols=2999)),
    ("matmul", dict(m=97, n=131, k=75)),
])
def test_example(name, kwargs, capsys):
    mod = importlib.import_module(name)
    mod.main(timing=False, **kwargs)
    assert ": ok" in capsys.readouterr().out


def test_tilec_backend_cpu_keeps_the_examples_data_on_the_host(monkeypatch):
    """``TILEC_BACKEND=cpu`` runs the kernels on the host; the examples then keep their arrays there too (a GPU's
    arrays reaching a CPU kernel would be refused)."""
    import types
    common = importlib.import_module("common")
    gpu_torch = types.ModuleType("torch")
    gpu_torch.cuda = types.SimpleNamespace(is_available=lambda: True)  # as on a machine with a CUDA GPU
    monkeypatch.setitem(sys.modules, "torch", gpu_torch)
    monkeypatch.delenv("TILEC_BACKEND", raising=False)
    assert common.device() == "cuda"
    for value in ("cpu", "CPU"):
        monkeypatch.setenv("TILEC_BACKEND", value)
        assert common.device() == "cpu"
