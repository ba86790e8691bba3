"""Loading compiled AMD kernels for launch. hip-python imports fine without ROCm and fails only at its first
call, so usability is probed with a real call; every way it can be missing is a BackendError that says what to
install. Launching itself is not implemented yet: a usable runtime gets an error saying so, and the code object
(``asm["hsaco"]``) is there for other loaders."""
from __future__ import annotations

from ...errors import BackendError


def hip_runtime():
    """The ``hip`` module of hip-python, checked usable; BackendError naming what is missing."""
    try:
        from hip import hip
    except ImportError:
        raise BackendError("launching AMD kernels needs hip-python (pip install 'tilec[hip]') and ROCm; "
                           "cross-compiling needs neither") from None
    try:
        err = hip.hipInit(0)
        err = err[0] if isinstance(err, tuple) else err
    except Exception as e:  # hip-python raises RuntimeError when libamdhip64.so cannot be opened
        raise BackendError(f"the ROCm runtime is not usable ({e}); install ROCm matching hip-python's version") \
            from None
    if int(getattr(err, "value", err) or 0) != 0:
        raise BackendError(f"hipInit failed ({err}): no usable AMD GPU")
    return hip


def load(asm: dict, metadata: dict):
    hip_runtime()
    raise BackendError("launching kernels on AMD GPUs is not implemented yet; asm['hsaco'] holds the linked "
                       "code object for hipModuleLoadData")
