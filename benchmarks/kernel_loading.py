"""Load a kernels file written in Triton spelling twice: once with the real Triton, once with ``tilec.compat``
installed (``import triton`` then gives tilec), so both compilers compile identical source."""
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
_loads = 0


def load_kernels(use_tilec: bool, filename: str = "gpu_kernels.py"):
    """A fresh copy of a kernels file (fresh JIT functions, so nothing is cached in memory)."""
    global _loads
    from tilec import compat
    _loads += 1
    name = f"{filename[:-3]}_{'tilec' if use_tilec else 'triton'}_{_loads}"
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, filename))
    mod = importlib.util.module_from_spec(spec)
    if use_tilec:
        compat.install()
    try:
        spec.loader.exec_module(mod)
    finally:
        if use_tilec:
            compat.uninstall()
    return mod
