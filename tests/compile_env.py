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
