"""Launch grids: 1 to 3 non-negative integers, checked before anything reaches a launcher.

A zero-sized grid is a launch of no programs (a no-op, as in Triton). Program ids and counts are i32 in the IR,
and CUDA limits the y and z dimensions to 65535, so every backend takes at most (2^31-1, 65535, 65535): a grid
one backend refuses is refused everywhere, before any work starts.
"""
from __future__ import annotations

import numbers

MAX_GRID = (2**31 - 1, 65535, 65535)


def _plain(grid):
    """``grid`` as a 3-tuple when it is a tuple of 1-3 plain ints in range (the common case, checked without the
    general checks), else None."""
    n = len(grid)
    if n == 1:
        d = grid[0]
        if type(d) is int and 0 < d <= 2147483647:
            return (d, 1, 1)
    elif n == 2:
        d, e = grid
        if type(d) is int and type(e) is int and 0 < d <= 2147483647 and 0 < e <= 65535:
            return (d, e, 1)
    elif n == 3:
        d, e, f = grid
        if (type(d) is int and type(e) is int and type(f) is int and 0 < d <= 2147483647 and 0 < e <= 65535
                and 0 < f <= 65535):
            return grid
    return None


def normalize_grid(grid, name: str = "kernel"):
    """``grid`` as a 3-tuple of ints, or None when it has no programs; ValueError for anything else."""
    if type(grid) is tuple:
        g = _plain(grid)
        if g is not None:
            return g
    dims = (grid,) if not isinstance(grid, (tuple, list)) else tuple(grid)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{name}: the grid must have 1 to 3 dimensions, got {grid!r}")
    out = []
    for axis, d in enumerate(dims):
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise ValueError(f"{name}: grid dimension {axis} must be an int, got {d!r} ({type(d).__name__}); "
                             "use tilec.cdiv for a rounded-up count")
        d = int(d)
        if d < 0:
            raise ValueError(f"{name}: grid dimension {axis} is negative ({d})")
        if d > MAX_GRID[axis]:
            raise ValueError(f"{name}: grid dimension {axis} is {d}, over the limit of {MAX_GRID[axis]} "
                             f"(grids are at most {MAX_GRID[0]} x {MAX_GRID[1]} x {MAX_GRID[2]})")
        out.append(d)
    g = tuple(out) + (1,) * (3 - len(out))
    return g if 0 not in g else None


class CheckedGrid(tuple):
    """A grid already normalised to 3 positive ints (``checked_grid``): launch paths that see this type skip the
    checks. Only ``checked_grid`` makes them; anything else that needs a grid reads it as the tuple it is."""
    __slots__ = ()


SINGLE = CheckedGrid((1, 1, 1))  # the one single-program grid ``checked_grid`` returns


def checked_grid(grid):
    """``grid`` checked once, ahead of its launches (``fn[grid]`` keeps the result for a loop of launches): a
    :class:`CheckedGrid` (:data:`SINGLE` for one program) when it is a tuple of 1-3 plain ints in range, else
    ``grid`` unchanged, so that callables, lists, empty and invalid grids are handled, and refused, at launch.
    A tuple of ints cannot change, so the answer stays true for as long as the caller holds the grid."""
    if type(grid) is not tuple:  # (a CheckedGrid is returned as it is)
        return grid
    g = _plain(grid)
    if g is None:
        return grid
    return SINGLE if g == (1, 1, 1) else CheckedGrid(g)
