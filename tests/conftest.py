"""Suite-wide settings: hypothesis profiles sized for a 2-core CI machine, a private kernel cache per run,
and GPU tests skipped where no CUDA device is usable.

Hypothesis is deterministic by default (profile ``tilec``): every property draws the same examples on every run
and machine, and no example database is read or written, so a run never depends on what an earlier run in the
same clone found. ``TILEC_HYPOTHESIS_PROFILE=explore`` draws fresh examples (``--hypothesis-seed=N`` repeats a
draw); a failure it finds prints the ``@reproduce_failure`` blob to pin it."""
import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("tilec", deadline=None, max_examples=60, derandomize=True, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("explore", parent=settings.get_profile("tilec"), derandomize=False)
settings.load_profile(os.environ.get("TILEC_HYPOTHESIS_PROFILE", "tilec"))

os.environ.setdefault("TILEC_CACHE_DIR", tempfile.mkdtemp(prefix="tilec-test-cache-"))


def _cuda_available() -> bool:
    try:
        from cuda.bindings import driver
    except Exception:
        return False
    try:
        err, = driver.cuInit(0)
        if int(err) != 0:
            return False
        err, n = driver.cuDeviceGetCount()
        return int(err) == 0 and n > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if any(item.get_closest_marker("gpu") for item in items) and not _cuda_available():
        skip = pytest.mark.skip(reason="no CUDA device (cuda-python and a GPU are needed)")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)


pytest_plugins = ["ptx_everywhere", "hsaco_everywhere"]

# -- the end-of-session recompiles under pytest-xdist: the workers' failures fail the run here ------------------
_RECOMPILE_FAILURES: list = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _RECOMPILE_FAILURES.extend(getattr(node, "workeroutput", {}).get("recompile_failures", []))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if _RECOMPILE_FAILURES and not hasattr(session.config, "workeroutput"):
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        write = tr.write_line if tr else print
        write(f"\n{len(_RECOMPILE_FAILURES)} end-of-session recompile(s) failed in the workers:")
        for f in _RECOMPILE_FAILURES:
            write(f"  FAILED {f}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
