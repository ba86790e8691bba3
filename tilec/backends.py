"""The backend registry: each backend by name, created on first use by its factory, with a cheap ``owns(value)``
that says whether a launch argument belongs to it (a CUDA tensor to ``cuda``, a numpy array to ``cpu``).

Backends are asked in order — ``cuda`` before ``cpu``, a backend registered with ``before="cpu"`` ahead of the
CPU — and the first that owns any argument compiles the launch; ``TILEC_BACKEND`` overrides the choice (see
``compiler.target_for``). Factories import their backend's code when called, so importing tilec loads no LLVM.

A backend object provides ``parse_options(dict) -> options`` (an ``Options`` subclass of its own,
``targets/options.py``, or a plain dict), ``stages(options) -> [(name, fn)]`` and ``load(asm, metadata) ->
launcher`` (see ``pipeline.py``).
Its registry entry says what the rest of tilec may ask without loading the backend: ``synchronize`` (wait for its
launches, on a device that runs them asynchronously) and ``arrays`` (its own device arrays, a module:
``tilec.cuda``), so no target-independent code names a vendor.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from .targets.arguments import device_of


class BackendEntry(NamedTuple):
    name: str
    factory: Callable               # target -> backend object
    owns: Callable | None           # launch argument -> bool; None: chosen only by name
    synchronize: Callable | None = None   # () -> None: waits for this backend's launches; None: they are synchronous
    arrays: Callable | None = None  # () -> the module of the backend's own device arrays; None: it has none
    present: Callable | None = None  # () -> bool: this machine has a device of it (cheap, never raises); None: always


_REGISTRY: list = []


def register_backend(name: str, factory: Callable, *, owns: Callable | None = None, before: str | None = None,
                     synchronize: Callable | None = None, arrays: Callable | None = None,
                     present: Callable | None = None):
    """Register (or replace) backend ``name``. ``factory(target)`` makes the backend object; ``owns(value)`` says
    whether a launch argument is this backend's (when omitted, ``factory.owns`` if it has one). The backend is
    asked after those registered earlier, or just ahead of backend ``before``. ``synchronize()`` waits for the
    backend's launches in flight; ``arrays()`` gives the module of its own device arrays; ``present()`` says
    whether this machine has a device of it (a GPU backend's; None: always, as the CPU)."""
    if owns is None:
        owns = getattr(factory, "owns", None)
    entry = BackendEntry(name, factory, owns, synchronize, arrays, present)
    unregister_backend(name)
    names = [e.name for e in _REGISTRY]
    _REGISTRY.insert(names.index(before) if before in names else len(_REGISTRY), entry)
    return entry


def unregister_backend(name: str):
    _REGISTRY[:] = [e for e in _REGISTRY if e.name != name]


def backend_names() -> list:
    """Registered backends in the order launches ask them."""
    return [e.name for e in _REGISTRY]


def get_backend(target):
    """The backend object for ``target`` (a ``Target``: its ``backend`` names a registered backend)."""
    for e in _REGISTRY:
        if e.name == target.backend:
            return e.factory(target)
    raise ValueError(f"unknown backend {target.backend!r} (registered: {', '.join(backend_names())})")


def _entry(name: str) -> BackendEntry | None:
    return next((e for e in _REGISTRY if e.name == name), None)


def synchronizer(name: str) -> Callable:
    """What waits for backend ``name``'s launches in flight (a no-op where launches are synchronous)."""
    e = _entry(name)
    return e.synchronize if e is not None and e.synchronize is not None else _synchronous


def _synchronous():
    return None


def arrays_module(name: str):
    """The module of backend ``name``'s own device arrays, or None."""
    e = _entry(name)
    return e.arrays() if e is not None and e.arrays is not None else None


_PRESENT: dict = {}


def present_backend() -> str:
    """The first registered backend, in launch order, whose device this machine has: a GPU's when one is there
    (what a Triton program's ``driver.active`` is), else the CPU. Asked once per backend and process."""
    for e in _REGISTRY:
        if e.present is None:
            return e.name
        if e.name not in _PRESENT:
            try:
                _PRESENT[e.name] = bool(e.present())
            except Exception:  # noqa: BLE001 - a missing or broken driver means no device of it
                _PRESENT[e.name] = False
        if _PRESENT[e.name]:
            return e.name
    return "cpu"


def owner_of(values) -> str | None:
    """The first backend, in order, that owns one of ``values``; None when none does (no arrays, say)."""
    for e in _REGISTRY:
        owns = e.owns
        if owns is not None and any(owns(v) for v in values):
            return e.name
    return None


# -- the built-in backends -------------------------------------------------------------------------------------
def _cuda(target):
    from .targets.cuda.backend import CUDABackend  # loaded on first use: NVVM lowering, PTX
    return CUDABackend(target)


def _hip(target):
    from .targets.hip import make_backend  # loaded on first use: AMDGPU lowering, the ELF linker
    return make_backend(target)


def _cuda_synchronize():
    from .targets.cuda.driver import synchronize  # loaded when first asked, as the backend is
    synchronize()


def _cuda_arrays():
    from .targets.cuda import array  # loaded when first asked, as the backend is
    return array


def _cuda_present():
    from .targets.cuda.driver import device_count  # the driver is only asked, never loaded, without cuda-python
    return device_count() > 0


def _hip_present():
    from .targets.hip.driver import device_count  # asked, never loaded, without hip-python (as the CUDA one)
    return device_count() > 0


def _cpu(target):
    from .targets.cpu.backend import CPUBackend  # loaded on first use: llvmlite
    return CPUBackend(target)


register_backend("cuda", _cuda, owns=lambda v: device_of(v) == "cuda", synchronize=_cuda_synchronize,
                 arrays=_cuda_arrays, present=_cuda_present)
register_backend("cpu", _cpu, owns=lambda v: device_of(v) == "cpu")
# torch tensors on ROCm (device.type "cuda" there, told apart by torch.version.hip) and DLPack ROCm tensors
register_backend("hip", _hip, owns=lambda v: device_of(v) == "hip", before="cpu", present=_hip_present)
