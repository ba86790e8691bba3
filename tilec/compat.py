"""Run unmodified Triton programs on tilec: after ``install()``, ``import triton`` (and ``triton.language``,
``triton.testing``, ``triton.runtime``, ...) gives modules backed by tilec.

A meta-path finder placed first on ``sys.meta_path`` answers every ``triton`` / ``triton.*`` import from one table
(``_MODULES``): each entry builds a fresh module named as Triton names it, whose attributes are tilec's objects, so
tilec's own modules are never renamed or modified. A name that tilec lacks fails with an error saying so instead of
silently importing something else. Nothing happens until ``install()`` is called, so an installed Triton is not
shadowed by merely importing tilec; ``uninstall()`` undoes it (and puts back any ``triton`` modules it displaced).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
import types

import tilec

from . import compat_profiler, errors, knobs
from .backends import present_backend
from .compiler import Target, default_target
from .language import core as _language_core, standard
from .runtime import autotuner
from .targets.cuda import driver as cu
from .targets.hip import driver as hip_driver
from .testing import do_bench

from .version import TRITON_API_VERSION as TRITON_VERSION  # noqa: E402
from .language.reinterpret import TensorWrapper, reinterpret


# -- driver.active: where tensors should live and what the device looks like --------------------------------------
def _chosen() -> bool:
    """The device is not the machine's to say: ``TILEC_BACKEND`` names it, or the interpreter (which runs on the
    host and takes host arrays) runs the kernels."""
    return bool(os.environ.get("TILEC_BACKEND")) or knobs.flag("TILEC_INTERPRET")


def _backend() -> str:
    """``TILEC_BACKEND`` when set (the CPU under the interpreter), else the GPU this machine has (the CPU without
    one): a Triton program asks the active driver where to put its tensors, and on a GPU machine expects the GPU."""
    return default_target().backend if _chosen() else present_backend()


def _current_target() -> Target:
    """Triton's ``GPUTarget`` for the active device: backend, architecture (compute capability, gfx name) and warp
    size, as programs that pick configurations by them read it."""
    if _chosen():
        return default_target()
    name = present_backend()
    if name == "cuda":
        return Target("cuda", cu.compute_capability(0), 32)
    if name == "hip":
        arch = hip_driver.current_arch()
        return Target("hip", arch, 64 if arch and arch.startswith("gfx9") else 32)
    return Target(name)


class _CPUDeviceInterface:
    """What Triton code asks of ``torch.cuda``-like device modules, for the CPU."""

    @staticmethod
    def current_device():
        return 0

    @staticmethod
    def synchronize(*_):
        return None

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def device_count():
        return 1


class _DriverUtils:
    @staticmethod
    def get_device_properties(device=0):
        """Triton's property names; on the CPU, cores stand in for multiprocessors and the limits are generous."""
        if _backend() == "cuda":
            attr = cu.device_attribute
            dev = device or 0
            return {"multiprocessor_count": attr("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT", dev),
                    "max_shared_mem": attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", dev),
                    "max_num_regs": attr("CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK", dev),
                    "warpSize": attr("CU_DEVICE_ATTRIBUTE_WARP_SIZE", dev),
                    "sm_clock_rate": attr("CU_DEVICE_ATTRIBUTE_CLOCK_RATE", dev),
                    "mem_clock_rate": attr("CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE", dev),
                    "mem_bus_width": attr("CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH", dev)}
        return {"multiprocessor_count": os.cpu_count() or 1, "max_shared_mem": 1 << 20, "max_num_regs": 65536,
                "warpSize": 32, "sm_clock_rate": 0, "mem_clock_rate": 0, "mem_bus_width": 0}


class ActiveDriver:
    """``triton.runtime.driver.active``: the device tilec launches on (``TILEC_BACKEND``, else a GPU when the
    machine has one, else the CPU).
    ``get_active_torch_device()`` is a ``torch.device`` when torch is installed, else the device's name."""
    utils = _DriverUtils()

    def get_active_torch_device(self):
        name = "cuda" if _backend() == "cuda" else "cpu"
        try:
            import torch  # the program asks for a torch device: it uses torch (imported on this call only)
        except ImportError:
            return name
        return torch.device(name, 0) if name == "cuda" else torch.device("cpu")

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        return None

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return _current_target()

    def get_device_interface(self):
        if _backend() == "cuda":
            import torch
            return torch.cuda
        return _CPUDeviceInterface()

    def get_benchmarker(self):
        return do_bench

    def get_empty_cache_for_benchmark(self):
        import torch
        return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device=self.get_active_torch_device())

    def clear_cache(self, cache):
        cache.zero_()

    @staticmethod
    def is_active():
        return True


class _Driver:
    def __init__(self):
        self.active = ActiveDriver()
        self.default = self.active

    def set_active(self, driver):
        self.active = driver

    def reset_active(self):
        self.active = self.default


driver = _Driver()


# -- the module table -----------------------------------------------------------------------------------------------
def _public(mod) -> dict:
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    return {n: getattr(mod, n) for n in names if hasattr(mod, n)}


def _libdevice() -> dict:
    """libdevice names that tilec's math functions cover."""
    table = {"fabs": standard.abs, "abs": standard.abs, "fma": standard.fma, "fmax": standard.maximum,
             "fmin": standard.minimum, "div_rn": standard.fdiv, "sqrt_rn": standard.sqrt_rn}
    for n in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "floor", "ceil", "erf"):
        table[n] = getattr(standard, n)
    return table


def _triton_package() -> dict:
    return {"jit": tilec.jit, "JITFunction": tilec.JITFunction, "cdiv": tilec.cdiv,
            "next_power_of_2": tilec.next_power_of_2, "autotune": autotuner.autotune, "heuristics": autotuner.heuristics,
            "Config": autotuner.Config, "KernelInterface": autotuner.KernelInterface,
            "CompilationError": errors.CompilationError, "OutOfResources": errors.LaunchError,
            "TritonError": errors.TilecError, "reinterpret": reinterpret, "TensorWrapper": TensorWrapper,
            "set_allocator": tilec.set_allocator,
            "__version__": TRITON_VERSION, "__tilec_version__": tilec.__version__}


def _runtime() -> dict:
    return {"driver": driver, "Autotuner": autotuner.Autotuner, "Heuristics": autotuner.Heuristics,
            "Config": autotuner.Config, "autotune": autotuner.autotune, "heuristics": autotuner.heuristics,
            "JITFunction": tilec.JITFunction, "KernelInterface": autotuner.KernelInterface, "jit": tilec.jit,
            "OutOfResources": errors.LaunchError, "InterpreterError": errors.TilecError}


def _jit_module() -> dict:
    return {"jit": tilec.jit, "JITFunction": tilec.JITFunction, "KernelInterface": autotuner.KernelInterface}


def _errors() -> dict:
    return {"CompilationError": errors.CompilationError, "OutOfResources": errors.LaunchError,
            "CompileTimeAssertionFailure": errors.CompilationError, "TilecError": errors.TilecError,
            "InterpreterError": errors.TilecError}


def _compiler() -> dict:
    return {"CompilationError": errors.CompilationError, "compile": tilec.compile, "ASTSource": tilec.ASTSource,
            "GPUTarget": tilec.Target}


# name -> (tilec module whose public names it offers and which answers unknown attributes, or None;
#          function giving further attributes; whether it is a package)
_MODULES = {
    "triton": (None, _triton_package, True),
    "triton.language": ("tilec.language", None, True),
    "triton.language.core": ("tilec.language.core", None, False),
    "triton.language.math": ("tilec.language.math", None, False),
    "triton.language.standard": ("tilec.language.standard", None, False),
    "triton.language.extra": (None, _libdevice, True),
    "triton.language.extra.libdevice": ("tilec.language.extra.libdevice", _libdevice, False),
    "triton.language.extra.cuda": ("tilec.language.extra.cuda", _libdevice, True),
    "triton.language.extra.cuda.libdevice": ("tilec.language.extra.libdevice", _libdevice, False),
    "triton.testing": ("tilec.testing", None, False),
    "triton.runtime": (None, _runtime, True),
    "triton.runtime.driver": (None, lambda: {"driver": driver}, False),
    "triton.runtime.jit": (None, _jit_module, False),
    "triton.runtime.autotuner": ("tilec.runtime.autotuner", None, False),
    "triton.runtime.errors": (None, _errors, False),
    "triton.compiler": (None, _compiler, True),
    "triton.compiler.errors": (None, _errors, False),
    "triton.errors": (None, _errors, False),
    "triton.tools": ("tilec.tools", None, True),
    "triton.tools.compile": ("tilec.tools.compile", None, False),
    "triton.tools.link": ("tilec.tools.link", None, False),
    "triton.tools.tensor_descriptor": (None, lambda: {"TensorDescriptor": tilec.TensorDescriptor}, False),
    "triton.tools.mxfp": ("tilec.tools.mxfp", None, False),
    "triton.runtime._allocation": ("tilec.targets.allocator", None, False),
    "triton.profiler": (None, compat_profiler.profiler_names, True),
    "triton.profiler.viewer": (None, compat_profiler.viewer_names, False),
}
# submodules reachable as attributes without an import statement (``triton.language``, ``tl.extra.cuda``, ...)
_EAGER_CHILDREN = {"triton": ("language", "testing", "runtime", "compiler", "tools"), "triton.language": ("math", "extra", "core"),
                   "triton.language.extra": ("cuda", "libdevice"), "triton.language.extra.cuda": ("libdevice",)}


def _module_getattr(fullname, backing):
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        if backing is not None:
            target = importlib.import_module(backing)
            if hasattr(target, name):
                return getattr(target, name)
        child = f"{fullname}.{name}"
        if child in _MODULES:
            return importlib.import_module(child)
        raise AttributeError(f"module '{fullname}' has no attribute '{name}': tilec does not provide "
                             f"{fullname}.{name}")
    return __getattr__


def _build(fullname: str, mod: types.ModuleType):
    backing, extra, is_pkg = _MODULES[fullname]
    if backing is not None:
        mod.__dict__.update(_public(importlib.import_module(backing)))
    if extra is not None:
        mod.__dict__.update(extra())
    mod.__getattr__ = _module_getattr(fullname, backing)
    mod.__doc__ = f"{fullname} for tilec (see tilec.compat)."
    mod.__tilec_compat__ = True
    if is_pkg:
        mod.__path__ = []


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return None  # the default: a fresh module object named spec.name

    def exec_module(self, module):
        _build(module.__name__, module)
        for child in _EAGER_CHILDREN.get(module.__name__, ()):
            setattr(module, child, importlib.import_module(f"{module.__name__}.{child}"))


class TritonFinder(importlib.abc.MetaPathFinder):
    """Answers ``triton`` and ``triton.*`` imports from ``_MODULES``."""
    _loader = _Loader()

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "triton" and not fullname.startswith("triton."):
            return None
        if fullname not in _MODULES:
            raise ModuleNotFoundError(f"No module named '{fullname}': tilec's Triton compatibility layer does not "
                                      f"provide it (it has: {', '.join(sorted(_MODULES))})", name=fullname)
        return importlib.util.spec_from_loader(fullname, self._loader, is_package=_MODULES[fullname][2])


_finder = TritonFinder()
_displaced: dict = {}


def _is_triton(name: str) -> bool:
    return name == "triton" or name.startswith("triton.")


def installed() -> bool:
    return _finder in sys.meta_path


def install():
    """Make ``import triton`` resolve to tilec from now on in this process (idempotent). Real ``triton`` modules
    already imported are set aside and come back with ``uninstall()``."""
    if installed():
        return
    for name in [n for n in sys.modules if _is_triton(n)]:
        mod = sys.modules[name]
        if not getattr(mod, "__tilec_compat__", False):
            _displaced[name] = sys.modules.pop(name)
    sys.meta_path.insert(0, _finder)
    _language_core.REPR_MODULE[0] = "triton.language"  # Triton's spelling: repr(dtype) evaluates as Triton code


def uninstall():
    """Undo ``install()``: drop the tilec-backed ``triton`` modules and restore any that were displaced."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if _is_triton(n)]:
        if getattr(sys.modules[name], "__tilec_compat__", False):
            del sys.modules[name]
    sys.modules.update(_displaced)
    _displaced.clear()
    _language_core.REPR_MODULE[0] = "tl"
