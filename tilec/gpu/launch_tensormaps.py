"""Tensor copy descriptors the launch writes, and the layout of a kernel's global scratch.

A ``tensormap_create`` writes a descriptor of a tensor (base, shape, strides) for the copy engine. Written by the
kernel, every program writes its own copy in its slot of the launch's global scratch and fences it for the copy
engine before its first copy: for a short loop (a matmul with a small K) that is most of a program's time (two
descriptors cost an H200 about 2 us a program). Where the tensor's base, shape and strides are the kernel's own
parameters or constants (a host ``TensorDescriptor``'s leaves; ``tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1],
...)`` of parameters), or integer sums, differences and products of them (``[Z * H * N_CTX, HEAD_DIM]``, which the
host computes as the kernel would, wrapping at the op's width: :func:`leaf_value`), the descriptor is the same for
every program, so the launch writes it instead: the host
encodes it from the arguments (the target's driver, ``encode_tensormap``), copies it to the head of the global
scratch before the kernel, and every program reads it there.

:func:`scratch_layout` is the one answer to where each descriptor lives, read by the lowering (addresses) and the
backend (what the launch allocates and writes: ``metadata["launch_tensormaps"]``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import ops as O
from ..ir.core import BlockArgument, OpResult
from ..ir.types import PointerType
from . import ops as G

SLOT = 128  # bytes of one descriptor (and the alignment the copy engine needs)


#: integer ops of parameters the launch computes as the kernel does (06's ``y_dim = Z * H * N_CTX``)
ARITH = {O.AddOp: "add", O.SubOp: "sub", O.MulOp: "mul"}
DEPTH = 8  # deeper expressions stay the kernel's


def _leaf(v, func, depth=0):
    """("param", index) for a kernel parameter (or its integer widening: the same number), ("const", value) for
    an integer constant, (op, bits, signed, a, b) for ``add``/``sub``/``mul`` of two such scalars (wrapping at
    the op's width, as the kernel computes it), else None."""
    if isinstance(v, OpResult) and isinstance(v.op, O.CastOp) and v.type.is_int and v.op.src.type.is_int \
            and v.type.element.bits >= v.op.src.type.element.bits and v.op.src.type.element.bits > 1:
        v = v.op.src
    if isinstance(v, BlockArgument) and v.block is func.body:
        return ("param", v.index)
    if isinstance(v, OpResult) and isinstance(v.op, O.ConstantOp) and isinstance(v.op.attrs["value"], int):
        return ("const", v.op.attrs["value"])
    if isinstance(v, OpResult) and type(v.op) in ARITH and v.type.is_int and not v.type.is_tile \
            and v.type.element.bits > 1 and depth < DEPTH:
        a, b = (_leaf(x, func, depth + 1) for x in v.op.operands)
        if a is not None and b is not None:
            e = v.type.element
            return (ARITH[type(v.op)], e.bits, e.is_signed, a, b)
    return None


def leaf_value(leaf, param):
    """The number a leaf stands for at a launch; ``param(i)`` gives argument ``i`` as an integer."""
    kind = leaf[0]
    if kind == "param":
        return param(leaf[1])
    if kind == "const":
        return leaf[1]
    _, bits, signed, a, b = leaf
    x, y = leaf_value(a, param), leaf_value(b, param)
    r = (x + y if kind == "add" else x - y if kind == "sub" else x * y) & ((1 << bits) - 1)
    return r - (1 << bits) if signed and r >> (bits - 1) else r


def launch_leaves(op, func):
    """Where the launch finds ``op``'s base, shape and strides (one entry each, see :func:`_leaf`), or None when
    one of them is computed in the kernel (then every program writes the descriptor)."""
    leaves = [_leaf(v, func) for v in op.operands]
    return None if any(x is None for x in leaves) else leaves


@dataclass
class ScratchLayout:
    """The launch's global scratch: ``header`` bytes of descriptors the launch writes (``launched``: slot ->
    byte offset), then ``per_program`` bytes for each program (``program``: slot -> byte offset in its area)."""
    header: int = 0
    per_program: int = 0
    launched: dict = field(default_factory=dict)
    program: dict = field(default_factory=dict)
    ops: list = field(default_factory=list)  # (op, its launch_leaves) of the launched descriptors, in header order

    @property
    def used(self) -> bool:
        return bool(self.header or self.per_program)


def scratch_layout(func) -> ScratchLayout:
    """Where each of ``func``'s descriptors lives (by its ``slot``)."""
    lay = ScratchLayout()
    for op in func.walk():
        if not isinstance(op, G.TensormapCreateOp):
            continue
        slot = op.attrs.get("slot", 0)
        if slot in lay.launched or slot in lay.program:
            continue
        leaves = launch_leaves(op, func)
        if leaves is not None:
            lay.launched[slot] = lay.header
            lay.header += SLOT
            lay.ops.append((op, leaves))
        else:
            lay.program[slot] = lay.per_program
            lay.per_program += SLOT
    return lay


def launch_metadata(lay: ScratchLayout) -> list:
    """What the launch writes, per launched descriptor of a function's ``scratch_layout``: its byte offset in the
    header, where its leaves come from, and how the kernel's copies move it (box, outermost first; swizzle bytes;
    padding; element bytes)."""
    out = []
    for op, leaves in lay.ops:
        elt = op.base.type.pointee
        out.append({"offset": lay.launched[op.attrs.get("slot", 0)],
                    "leaves": [_as_lists(x) for x in leaves],  # lists: the metadata goes through JSON
                    "box": list(op.attrs["box"]), "swizzle": op.attrs["swizzle"], "padding": op.attrs["padding"],
                    "elem_bytes": 8 if isinstance(elt, PointerType) else elt.bytes,
                    "elem": "ptr" if isinstance(elt, PointerType) else elt.name})
    return out


def _as_lists(leaf):
    return [_as_lists(x) if isinstance(x, tuple) else x for x in leaf]
