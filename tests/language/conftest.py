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
