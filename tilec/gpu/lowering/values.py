"""A tile's registers: its layout as a linear layout, and how many registers each thread holds."""
from __future__ import annotations


def ll_of(t):
    """The linear layout of tile type ``t``."""
    return t.layout.to_linear(t.shape)


def num_regs(t) -> int:
    return ll_of(t).num_regs
