"""A MessagePack decoder, enough for the AMDGPU metadata note (maps, arrays, strings, integers, floats,
booleans, nil, binary). Decoding only: tilec reads what LLVM writes and never writes metadata itself."""
from __future__ import annotations

import struct

from .errors import ElfError


def unpack(data: bytes):
    """The single MessagePack value in ``data``."""
    value, end = _value(memoryview(bytes(data)), 0)
    if end != len(data):
        raise ElfError(f"MessagePack: {len(data) - end} trailing bytes after the value")
    return value


def _take(buf, pos, n):
    if pos + n > len(buf):
        raise ElfError("MessagePack: data ends inside a value")
    return bytes(buf[pos:pos + n]), pos + n


def _num(buf, pos, fmt):
    raw, pos = _take(buf, pos, struct.calcsize(fmt))
    return struct.unpack(fmt, raw)[0], pos


def _seq(buf, pos, n, is_map):
    if is_map:
        out = {}
        for _ in range(n):
            k, pos = _value(buf, pos)
            v, pos = _value(buf, pos)
            out[k] = v
        return out, pos
    out = []
    for _ in range(n):
        v, pos = _value(buf, pos)
        out.append(v)
    return out, pos


def _str(buf, pos, n):
    raw, pos = _take(buf, pos, n)
    return raw.decode("utf-8", "replace"), pos


_SIZED = {0xcc: ">B", 0xcd: ">H", 0xce: ">I", 0xcf: ">Q", 0xd0: ">b", 0xd1: ">h", 0xd2: ">i", 0xd3: ">q",
          0xca: ">f", 0xcb: ">d"}
_LEN = {0xd9: ">B", 0xda: ">H", 0xdb: ">I", 0xc4: ">B", 0xc5: ">H", 0xc6: ">I", 0xdc: ">H", 0xdd: ">I",
        0xde: ">H", 0xdf: ">I"}


def _value(buf, pos):
    if pos >= len(buf):
        raise ElfError("MessagePack: data ends before a value")
    t = buf[pos]
    pos += 1
    if t <= 0x7f:
        return t, pos
    if t >= 0xe0:
        return t - 0x100, pos
    if 0x80 <= t <= 0x8f:
        return _seq(buf, pos, t & 0x0f, True)
    if 0x90 <= t <= 0x9f:
        return _seq(buf, pos, t & 0x0f, False)
    if 0xa0 <= t <= 0xbf:
        return _str(buf, pos, t & 0x1f)
    if t == 0xc0:
        return None, pos
    if t in (0xc2, 0xc3):
        return t == 0xc3, pos
    if t in _SIZED:
        return _num(buf, pos, _SIZED[t])
    if t in _LEN:
        n, pos = _num(buf, pos, _LEN[t])
        if t in (0xd9, 0xda, 0xdb):
            return _str(buf, pos, n)
        if t in (0xc4, 0xc5, 0xc6):
            return _take(buf, pos, n)
        return _seq(buf, pos, n, t in (0xde, 0xdf))
    raise ElfError(f"MessagePack: unsupported type byte {t:#x}")
