"""AMD backend tests: everything here cross-compiles (no ROCm, no GPU); the GPU test cases of tests/gpu are
reused, so that directory is importable."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "gpu"))
sys.path.insert(0, os.path.dirname(__file__))

import pytest  # noqa: E402


def _rocm_usable() -> bool:
    """An AMD GPU through hip-python and torch built for ROCm (the run tests move data with torch)."""
    try:
        import torch
        if not getattr(torch.version, "hip", None) or not torch.cuda.is_available():
            return False
        from tilec.targets.hip import driver
        return driver.current_arch() is not None
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if any(item.get_closest_marker("rocm") for item in items) and not _rocm_usable():
        skip = pytest.mark.skip(reason="no AMD GPU (ROCm, hip-python and torch for ROCm are needed)")
        for item in items:
            if item.get_closest_marker("rocm"):
                item.add_marker(skip)
