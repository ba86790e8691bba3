"""The AMD backend: ``Target("hip", "gfx942", 64)``. Cross-compiling (stages ``gir``, ``llir``, ``amdgcn``,
``hsaco``) needs only llvmlite; launching needs hip-python and a ROCm installation. Importing this package loads
no LLVM: :func:`make_backend` imports the backend on first use."""
from __future__ import annotations


def make_backend(target):
    from .backend import HIPBackend  # loaded on first use: the AMDGPU lowering, the ELF linker (llvmlite)
    return HIPBackend(target)
