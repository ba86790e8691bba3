"""Loop-carried 8-bit registers packed into 32-bit vectors.

A tile's registers are lowered one scalar per element. Carried around a loop, 8-bit elements would then each
take a phi of its own: a tile loaded an iteration ahead (a pipelined load that goes through registers, such as
an 8-bit operand transposed on its way into shared memory) would hold every byte in a 32-bit register of its
own, and unpacking and repacking them costs an instruction per element each iteration (an int8 ``A @ B`` with
B stored n-contiguous: 206 registers and 251 loop instructions, 153 and 192 packed). Carried as ``<4 x i8>``
vectors instead, four consecutive registers of one tile are one 32-bit register across the back edge, which is
what the vector load produced and what a byte permute wants. 16-bit elements stay scalars: packed the same
way, a wave32 matrix-core target's bench matmul (fp16 operands carried through registers) took 20 more
registers a lane.
"""
from __future__ import annotations

import llvmlite.ir as ir

from .layouts import vector_of

_I32 = ir.IntType(32)


#: the element widths carried packed, and how many make a 32-bit register
PACKED = {8: 4}


def _bits(t) -> int:
    return t.width if isinstance(t, ir.IntType) else 0


def plan(flat, shapes):
    """(start, count) groups over ``flat``: runs of four same-typed 8-bit registers inside one tile, each carried
    as one vector; every other register alone."""
    groups, i = [], 0
    for s in shapes:
        n = 1 if s is None else s
        j = i
        while j < i + n:
            t = flat[j].type
            bits = _bits(t)
            k = PACKED.get(bits, 1)
            if k > 1 and j + k <= i + n and all(flat[x].type == t for x in range(j, j + k)):
                groups.append((j, k))
                j += k
            else:
                groups.append((j, 1))
                j += 1
        i += n
    return groups


def pack(b, flat, groups):
    out = []
    for start, k in groups:
        if k == 1:
            out.append(flat[start])
            continue
        out.append(vector_of(b, flat[start:start + k]))
    return out


def unpack(b, packed, groups):
    out = []
    for v, (_, k) in zip(packed, groups):
        if k == 1:
            out.append(v)
        else:
            out.extend(b.extract_element(v, ir.Constant(_I32, x)) for x in range(k))
    return out
