"""tilec: a tile compiler for Triton-language kernels, written in Python.

Importing tilec is cheap: LLVM (llvmlite) is loaded only when a kernel is first compiled for a backend.
"""
import os as _os

from .version import __version__
from .errors import BackendError, CompilationError, LaunchError, TilecError, for_user
from . import language
from . import gpu  # noqa: F401  (registers the GPU IR with the parser and the GPU passes by name)
from .language import constexpr
from .backends import register_backend
from .compiler import ASTSource, Target, default_target
from .pipeline import CompiledKernel, compile_source
from .runtime.jit import JITFunction, jit
from .runtime.autotuner import Config, autotune, heuristics
from .targets.allocator import set_allocator
from .runtime.tensor_descriptor import TensorDescriptor
from . import testing
from .backends import arrays_module as _arrays_module


def compile(src: ASTSource, target: Target | None = None, options: dict | None = None) -> CompiledKernel:
    """Compile ``src`` for ``target`` (default: ``TILEC_BACKEND`` or the CPU); see ``pipeline.py``."""
    try:
        return compile_source(src, target or default_target(), dict(options or {}))
    except CompilationError as e:
        raise for_user(e)


def __getattr__(name: str):
    """A backend's own device arrays under the backend's name (``tilec.cuda.from_numpy``), loaded when first
    asked for (``backends.py``: the registry entry's ``arrays``)."""
    arrays = _arrays_module(name)
    if arrays is None:
        raise AttributeError(f"module 'tilec' has no attribute {name!r}")
    globals()[name] = arrays
    return arrays


def cdiv(x: int, y: int) -> int:
    """Ceiling division of ints (host side)."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """Smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


__all__ = ["jit", "JITFunction", "cdiv", "next_power_of_2", "CompilationError", "TilecError", "BackendError",
           "LaunchError", "compile", "Target",
           "ASTSource", "register_backend", "language", "constexpr", "__version__", "autotune", "heuristics", "Config", "testing", "cuda",
           "set_allocator", "TensorDescriptor"]

if _os.environ.get("TILEC_DUMP_HTML"):  # pass-by-pass pages of everything this process compiles, written at exit
    # found by name, as backends and pass packages are: the tools sit above the package they look into
    import importlib as _importlib
    _importlib.import_module("tilec.tools.view.record").install_at_exit(_os.environ["TILEC_DUMP_HTML"])
