"""GPU tests: the ``gpu`` marker (tests that launch kernels; skipped by the suite's conftest when no CUDA device
is usable). Everything else here compiles to PTX and, when ptxas is on PATH, assembles it: no GPU needed."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: launches kernels on a CUDA device (skipped without one)")
