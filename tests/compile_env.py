"""The environment a kernel first compiled in, for the end-of-session recompiles (``ptx_everywhere``,
``hsaco_everywhere``): the switches that change which kernels compile at all, set again around each recompile."""
import contextlib
import os

SWITCHES = ("TILEC_ALLOW_NON_CONSTEXPR_GLOBALS", "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS")


def snapshot() -> tuple:
    return tuple((k, os.environ.get(k)) for k in SWITCHES)


def _apply(snap):
    for k, v in snap:
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@contextlib.contextmanager
def restored(snap):
    old = snapshot()
    _apply(snap)
    try:
        yield
    finally:
        _apply(old)


def unsupported(err) -> bool:
    """A recompile's error that lists the kernel rather than failing the session: the backend saying it does not
    support a feature, or the kernel needing more than the target has (``OutOfResources``: a located error for its
    author, as designed)."""
    from tilec.errors import BackendError, OutOfResources
    text = str(err)
    if isinstance(err, OutOfResources):
        return True
    return isinstance(err, BackendError) and "tilec bug" not in text and any(
        w in text for w in ("not supported", "unsupported", "supports"))


def fail_session(session, failures: list, label: str):
    """Fail the run for these recompile failures. Under pytest-xdist a worker's exit status and terminal output
    never reach the controller, so the worker hands them over (``workeroutput``) and the controller's hooks
    (``conftest.py``) print them and fail the run."""
    import pytest
    if not failures:
        return
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out.setdefault("recompile_failures", []).extend(f"{label}: {f}" for f in failures)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
