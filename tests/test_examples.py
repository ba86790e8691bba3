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
