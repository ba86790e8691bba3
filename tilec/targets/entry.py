"""Launch entries: what the launch binder calls once it has found a compiled variant, so that a cached launch hands
its arguments over as they are, with no list built and no loop over parameters on the way.

``entries(launcher, count, keep)`` gives two functions for one argument layout: ``single(v_0, ..., v_count-1)``
runs one program, ``any(grid3, v_0, ..., v_count-1)`` runs a normalised grid; both pass ``[v_i for i in keep]``
(``keep`` None: every value) as the launcher's runtime arguments. A launcher with its own ``entries`` method
(the CPU's, ``targets/cpu/entry.py``) returns functions that do the launch themselves; any other launcher gets the
adapters below, generated once per layout, which call it with the argument list it takes.

``loose=fallback`` (``CompiledKernel[grid]``, whose callers may pass any number of arguments) makes functions that
hand a call with another count to ``fallback(grid3, values)``. ``addressed``: the positions whose values the caller
guarantees to be addresses already (the binder's probe read them from numpy arrays), which a launcher that takes
addresses need not look at again.

A launcher may also offer a *native* way (the CPU's: ``targets/cpu/fastcall.py``): ``launcher.native(count)``
gives ``(keyer, launch)``, two functions the launch binder calls instead of its Python probes and these entries.
``keyer(*specialised_values)`` is a hashable description of the values, or None for kinds it does not know;
equal descriptions must mean equal keys the Python way (the binder stores the Python key beside, keeping alive
what the description stands for). ``launch(grid3, *values)`` runs a normalised grid and returns 0, or
``ran + 1`` after a first part of the grid (the launcher's ``resume`` runs the rest), or, running nothing,
:data:`ASK` (the launcher's ``__call__`` decides) or :data:`REFUSED` (the Python way launches).
"""
from __future__ import annotations

from .grid import SINGLE

MISSING = object()  # a loose entry's default: fewer values than the layout's were given
REFUSED, ASK = -1, -2  # what a native launch function returns when it ran nothing


def generate(name: str, params: list, body: str, namespace: dict, tag: str):
    """Compile ``def name(params): body`` in ``namespace``; ``tag`` names its source in tracebacks."""
    src = f"def {name}({', '.join(params)}):\n{body}"
    exec(compile(src, f"<tilec {tag}>", "exec"), namespace)
    return namespace[name]


def values(count: int) -> list:
    return [f"v{i}" for i in range(count)]


def kept(count: int, keep) -> list:
    """The names of the values that reach the kernel."""
    return [f"v{i}" for i in (range(count) if keep is None else keep)]


def signature(count: int, loose, grid: str | None) -> tuple[list, str]:
    """(parameters, first statements) of an entry taking ``count`` values after ``grid`` (a parameter name, or
    None for a single program). A loose entry calls ``_fallback`` (which must be in its namespace) with the values
    it got when their count is not ``count``."""
    params = ([grid] if grid else []) + values(count)
    if not loose:
        return params, ""
    params = ([grid] if grid else []) + [f"v{i}=_MISSING" for i in range(count)] + ["*_extra"]
    given = f"[v for v in ({''.join(v + ', ' for v in values(count))}) if v is not _MISSING] + list(_extra)"
    test = "_extra" + (f" or v{count - 1} is _MISSING" if count else "")
    return params, f"    if {test}:\n        return _fallback({grid or '_SINGLE'}, {given})\n"


def entries(launcher, count: int, keep=None, loose=None, addressed=()):
    """``(single, any)`` for ``launcher`` and values laid out as ``count`` positional arguments."""
    own = getattr(launcher, "entries", None)
    if own is not None:
        return own(count, keep, loose, addressed)
    args = ", ".join(kept(count, keep))
    ns = {"_launcher": launcher, "_SINGLE": SINGLE, "_MISSING": MISSING, "_fallback": loose}
    params, check = signature(count, loose, None)
    single = generate("single", params, check + f"    return _launcher(_SINGLE, [{args}])\n", ns, "launch entry")
    params, check = signature(count, loose, "g")
    every = generate("any", params, check + f"    return _launcher(g, [{args}])\n", ns, "launch entry")
    return single, every


def native(launcher, count: int, keep=None):
    """``(keyer, launch)`` where ``launcher`` has a native way for ``count`` values that all reach the kernel,
    else None."""
    own = getattr(launcher, "native", None)
    return own(count) if own is not None and keep is None else None


def after_native(hit, result: int, grid, values) -> bool:
    """After a native launch function returned ``result`` (not 0) for ``grid`` and ``values``: the launcher
    runs the rest of the grid or decides, or False where the function refused the values (nothing ran). ``hit``:
    the binder's cache entry, the launcher second."""
    if result > 0:
        hit[1].resume(grid, values, result - 1)
    elif result == ASK:
        hit[1](grid, values)
    else:
        return False
    return True
