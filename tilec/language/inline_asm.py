"""``tl.inline_asm_elementwise``: target assembly (PTX, GCN) run once per ``pack`` elements.

The call's own arguments are checked here; broadcasting, the constraint string and the op it becomes are the
Semantic's (``Semantic.inline_asm``). Whether assembly means anything is the target's question: GPU targets lower
it, the CPU backend and the interpreter refuse it at the kernel's line.
"""
from __future__ import annotations

from .core import _unwrap, builtin, current, dtype as _dtype


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """Triton's signature: ``dtype`` one tl dtype (one result) or a tuple of them (a tuple of results)."""
    dt = _unwrap(dtype)
    asm, constraints, pack, is_pure = _unwrap(asm), _unwrap(constraints), _unwrap(pack), _unwrap(is_pure)
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise TypeError("inline_asm_elementwise: asm and constraints must be strings")
    many = isinstance(dt, (tuple, list))
    dts = tuple(_unwrap(d) for d in dt) if many else (dt,)
    if not dts or not all(isinstance(d, _dtype) and not d.is_void() for d in dts):
        raise TypeError(f"inline_asm_elementwise: dtype must be a tl dtype or a tuple of them, got {dt!r}")
    if isinstance(pack, bool) or not isinstance(pack, int) or pack < 1:
        raise ValueError(f"inline_asm_elementwise: pack must be a positive int, got {pack!r}")
    if not isinstance(is_pure, bool):
        raise TypeError(f"inline_asm_elementwise: is_pure must be a compile-time bool, got {is_pure!r}")
    args = _unwrap(args)
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"inline_asm_elementwise: args must be a list of tensors or scalars, got {args!r}")
    outs = current().inline_asm(asm, constraints, [_unwrap(a) for a in args], dts, is_pure, pack)
    return tuple(outs) if many else outs[0]
