"""``tl.extra.cuda``: the NVIDIA spelling of ``tl.extra.libdevice``, the launch-shape queries kernels read as
compile-time values (``num_threads()``, ``num_warps()``: from the launch's ``num_warps``, the options' default
unless given), and NVIDIA's special registers and grid-dependency instructions as Triton offers them
(``globaltimer()``: the GPU's nanosecond timer, ``smid()``: the multiprocessor running the program,
``gdc_wait()`` / ``gdc_launch_dependents()``: programmatic dependent launch on sm_90). Those are PTX: they need the
CUDA backend (elsewhere they are the located error every backend gives for ``inline_asm_elementwise`` it cannot
run)."""
from . import libdevice  # noqa: F401
from .. import core as _core
from ..core import builtin, current
from ..inline_asm import inline_asm_elementwise as _asm
from ...targets.options import Options

WARP_SIZE = 32


@builtin
def num_warps() -> int:
    """The launch's ``num_warps`` as a compile-time int (the CPU backend accepts it too)."""
    return int(current().options.get("num_warps") or Options.num_warps)


@builtin
def num_threads() -> int:
    """``num_warps() * 32``, a compile-time int."""
    return num_warps() * WARP_SIZE


def _register(text: str, constraint: str, dtype):
    # not pure: every read is a fresh one, never merged with another or moved out of a loop
    return _asm(text, constraint, [], dtype, False, 1)


@builtin
def globaltimer():
    """The GPU's global nanosecond timer (``%globaltimer``), an int64 read where it is called."""
    return _register("mov.u64 $0, %globaltimer;", "=l", _core.int64)


@builtin
def smid():
    """The index of the streaming multiprocessor running this program (``%smid``), an int32."""
    return _register("mov.u32 $0, %smid;", "=r", _core.int32)


def _before_sm90() -> bool:
    """Compiling for a GPU older than sm_90, which has no dependent launches (nothing to wait for or release)."""
    arch = current().options.get("arch")
    return isinstance(arch, int) and arch < 90


@builtin
def gdc_wait():
    """Wait until the grids this launch depends on have finished or let it go on (``griddepcontrol.wait``;
    sm_90, a launch with programmatic dependent launch enabled; otherwise it returns at once)."""
    if _before_sm90():
        return
    _register("griddepcontrol.wait; // $0", "=r", _core.int32)


@builtin
def gdc_launch_dependents():
    """Let grids that depend on this launch start (``griddepcontrol.launch_dependents``; sm_90)."""
    if _before_sm90():
        return
    _register("griddepcontrol.launch_dependents; // $0", "=r", _core.int32)
