"""How each kernel parameter travels at launch, in one vocabulary for every backend: ``"ptr"`` for pointers, else
the scalar type's name (``"i1"``, ``"i8"`` .. ``"i64"``, ``"u8"`` .. ``"u64"``, ``"f16"``, ``"bf16"``, ``"f32"``,
``"f64"``, ``"f8e4m3"``, ``"f8e5m2"``). Backends write ``metadata["param_kinds"]`` with it at compile time and their
launchers read it. The conversions of a Python number to a 16-bit float's bits live here too, so that every
launcher rounds a scalar argument the same way."""
from __future__ import annotations

import struct

from ..errors import BackendError

PARAM_KINDS_KEY = "param_kinds"

_pack_f32, _unpack_u32 = struct.Struct("<f").pack, struct.Struct("<I").unpack
_pack_f16, _unpack_u16 = struct.Struct("<e").pack, struct.Struct("<H").unpack


def param_kind(t) -> str:
    """The kind of a kernel parameter of tir type ``t`` (kernel parameters are pointers or scalars)."""
    if t.is_tile:
        raise BackendError(f"kernel parameters cannot be tiles ({t})")
    return "ptr" if t.is_ptr else t.element.name


def param_kinds(types) -> list:
    return [param_kind(t) for t in types]


def bf16_bits(v) -> int:
    """The bf16 bits of a number (an int, a float, a numpy scalar): rounded to f32, then to bf16 to nearest even,
    as Triton packs a bf16 argument."""
    bits = _unpack_u32(_pack_f32(float(v)))[0]
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def f16_bits(v) -> int:
    """The IEEE half bits of a number, rounded to nearest even; beyond the largest half, an infinity."""
    v = float(v)
    try:
        return _unpack_u16(_pack_f16(v))[0]
    except OverflowError:  # struct refuses finite values past 65504 that round to infinity
        return 0xFC00 if v < 0 else 0x7C00
