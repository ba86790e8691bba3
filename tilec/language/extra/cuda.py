"""``tl.extra.cuda``: the NVIDIA spelling of ``tl.extra.libdevice``, and the launch-shape queries kernels read as
compile-time values (``num_threads()``, ``num_warps()``: from the launch's ``num_warps``, 4 unless given)."""
from . import libdevice  # noqa: F401
from ..core import builtin, current

WARP_SIZE = 32


@builtin
def num_warps() -> int:
    """The launch's ``num_warps`` as a compile-time int (the CPU backend accepts it too)."""
    return int(current().options.get("num_warps") or 4)


@builtin
def num_threads() -> int:
    """``num_warps() * 32``, a compile-time int."""
    return num_warps() * WARP_SIZE
