"""``tl.inline_asm_elementwise``: target assembly (PTX, GCN) run per element.

Assembly written for a GPU has no meaning on the CPU backend or in the interpreter, and no tilec backend lowers
it yet, so a kernel that uses it gets a located compile error naming the reason instead of an unknown-name error
or a wrong result. The arguments are checked first, so a malformed call reports its own mistake.
"""
from __future__ import annotations

from .core import _unwrap, builtin, dtype as _dtype


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """Triton's signature; checks the call, then refuses it (see the module docstring)."""
    dt = _unwrap(dtype)
    asm, constraints, pack = _unwrap(asm), _unwrap(constraints), _unwrap(pack)
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise TypeError("inline_asm_elementwise: asm and constraints must be strings")
    dts = dt if isinstance(dt, (tuple, list)) else (dt,)
    if not dts or not all(isinstance(d, _dtype) for d in dts):
        raise TypeError(f"inline_asm_elementwise: dtype must be a tl dtype or a tuple of them, got {dt!r}")
    if not isinstance(pack, int) or pack < 1:
        raise ValueError(f"inline_asm_elementwise: pack must be a positive int, got {pack!r}")
    raise NotImplementedError(
        "tl.inline_asm_elementwise is not supported: inline GPU assembly has no meaning on the CPU backend or in "
        "the interpreter, and tilec's GPU backends do not lower it yet; write the operation with tl functions "
        "(or tl.map_elementwise)")
