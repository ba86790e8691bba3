"""Runs of registers that hold consecutive elements along one dimension, wherever they sit in a thread's
registers.

A layout's leading registers are what a vector access reads or writes directly (``contiguous_regs``). A
thread can also hold consecutive elements along a dimension in registers further apart: a load that keeps 16
bytes of a row contiguous and four rows per thread holds, per column, four consecutive rows in registers 16
apart. Writing such a tile into shared memory placed the other way round (the rows fastest) can still store
4-element runs as one access, gathering the run's registers: ``register_run`` finds them.
"""
from __future__ import annotations


def register_run(ll, dim: int, limit: int = 1 << 30):
    """(bits, n): the register-basis indices stepping 1, 2, 4, ... elements along ``dim``, and the run length
    ``n = 2 ** len(bits)`` (at most ``limit``) that a thread holds consecutively along ``dim``."""
    bits = []
    n = 1
    while n * 2 <= limit:
        want = tuple(n if d == dim else 0 for d in range(ll.rank))
        i = next((i for i, b in enumerate(ll.reg) if b == want), None)
        if i is None:
            break
        bits.append(i)
        n *= 2
    return bits, n


def run_groups(ll, bits):
    """Register indices in runs: for every register whose ``bits`` are clear, the registers that add each
    combination of them, in the order of their position along the run."""
    mask = sum(1 << i for i in bits)
    groups = []
    for r in range(1 << len(ll.reg)):
        if r & mask:
            continue
        group = []
        for j in range(1 << len(bits)):
            group.append(r | sum(1 << bits[k] for k in range(len(bits)) if j >> k & 1))
        groups.append(group)
    return groups
