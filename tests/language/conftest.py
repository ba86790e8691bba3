"""The conformance suite's ``mode`` fixture: every case runs compiled on the CPU, in the interpreter, and (with
``-m gpu``) on CUDA, through the one :func:`launch` helper."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

MODES = ["cpu", "interpret", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.fixture(params=MODES)
def mode(request):
    return request.param


def pytest_collection_modifyitems(config, items):
    """Cases a test marks ``interpreter_sample(keep)`` run in the interpreter only where ``keep(params)`` holds:
    the interpreter shares the evaluator's semantics, so a sample of a large grid covers it."""
    keep, drop = [], []
    for item in items:
        m = item.get_closest_marker("interpreter_sample")
        params = getattr(item, "callspec", None) and item.callspec.params
        if m and params and params.get("mode") == "interpret" and not m.args[0](params):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
