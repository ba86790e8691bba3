"""Byte-addressed host memory for the reference evaluator.

Pointers are the real addresses of registered numpy arrays' data, so a kernel's ``addptr`` arithmetic is exactly
the compiled code's. An access is resolved to (array, byte offset) by a binary search over the registered bases;
loads and stores move the element type's real in-memory bytes (so a uint16 array can back ``ptr<bf16>``), and
an address outside every registered array is an :class:`OutOfBoundsError` naming the op, never a crash.
"""
from __future__ import annotations

import numpy as np

from .numerics import decode, encode, memory_dtype
from .types import PointerType, Type


class OutOfBoundsError(IndexError):
    """A load/store/atomic touched an address outside every registered array."""


def elem_bytes(t: Type) -> int:
    e = t.element
    return 8 if isinstance(e, PointerType) else e.bytes


class Memory:
    def __init__(self):
        self._bases = np.zeros(0, dtype=np.uint64)
        self._ends = np.zeros(0, dtype=np.uint64)
        self._raw: list[np.ndarray] = []
        self._arrays: list[np.ndarray] = []

    def register(self, arr: np.ndarray) -> int:
        """Make ``arr``'s bytes addressable; returns the address of its first element."""
        if not isinstance(arr, np.ndarray):
            arr = np.asarray(arr)
        if arr.flags.c_contiguous:
            flat = arr.reshape(-1)
        elif arr.flags.f_contiguous:
            flat = arr.T.reshape(-1)
        else:
            raise ValueError("only contiguous arrays can be passed as pointers (use np.ascontiguousarray)")
        base = arr.__array_interface__["data"][0]
        for a in self._arrays:
            if a is arr:
                return base
        raw = flat.view(np.uint8) if flat.dtype.itemsize else flat
        i = int(np.searchsorted(self._bases, np.uint64(base), side="right"))
        self._bases = np.insert(self._bases, i, np.uint64(base))
        self._ends = np.insert(self._ends, i, np.uint64(base + arr.nbytes))
        self._raw.insert(i, raw)
        self._arrays.insert(i, arr)
        return base

    def alloc(self, shape, dtype) -> tuple[np.ndarray, int]:
        """A fresh registered array (filled with a recognisable garbage pattern) and its address."""
        a = np.empty(shape, dtype=dtype)
        a.reshape(-1).view(np.uint8)[:] = 0xA5
        return a, self.register(a)

    # -- resolution --------------------------------------------------------------------------------------
    def _resolve(self, addrs: np.ndarray, size: int, where: str):
        """Flat uint64 addresses -> (region index per address, byte offset per address)."""
        idx = np.searchsorted(self._bases, addrs, side="right").astype(np.int64) - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        if len(self._bases):
            ok &= addrs + np.uint64(size) <= self._ends[safe]
            ok &= addrs >= self._bases[safe]
        if not ok.all():
            for j in np.nonzero(~ok)[0]:  # overlapping registrations (views of one buffer): search them all
                a = int(addrs[j])
                hits = [k for k in range(len(self._bases))
                        if int(self._bases[k]) <= a and a + size <= int(self._ends[k])]
                if not hits:
                    raise OutOfBoundsError(f"{where}: access of {size} byte(s) at address {a:#x} is outside "
                                           f"every array passed to the kernel{self._nearest(a)}")
                safe[j] = hits[0]
        return safe, (addrs - self._bases[safe]).astype(np.int64)

    def _nearest(self, a: int) -> str:
        if not len(self._bases):
            return " (no arrays registered)"
        d = [(abs(a - int(b)), k) for k, b in enumerate(self._bases)]
        _, k = min(d)
        arr = self._arrays[k]
        off = a - int(self._bases[k])
        return f" (nearest: a {arr.dtype}{list(arr.shape)} array of {arr.nbytes} bytes; offset {off})"

    def _groups(self, addrs, size, where):
        idx, off = self._resolve(addrs, size, where)
        for k in np.unique(idx):
            sel = np.nonzero(idx == k)[0]
            yield int(k), sel, off[sel]

    # -- access ------------------------------------------------------------------------------------------
    def read(self, addrs, t: Type, where: str = "load") -> np.ndarray:
        """Values of element type ``t`` at flat ``addrs`` (uint64 array)."""
        addrs = np.asarray(addrs, dtype=np.uint64).reshape(-1)
        size, mdt = elem_bytes(t), memory_dtype(t)
        out = np.zeros(addrs.shape, dtype=mdt)
        lanes = np.arange(size)
        for k, sel, off in self._groups(addrs, size, where):
            out[sel] = np.ascontiguousarray(self._raw[k][off[:, None] + lanes]).view(mdt).reshape(-1)
        return decode(out, t)

    def write(self, addrs, values, t: Type, where: str = "store"):
        addrs = np.asarray(addrs, dtype=np.uint64).reshape(-1)
        size = elem_bytes(t)
        data = np.ascontiguousarray(encode(np.asarray(values).reshape(-1), t)).view(np.uint8).reshape(-1, size)
        lanes = np.arange(size)
        for k, sel, off in self._groups(addrs, size, where):
            raw = self._raw[k]
            if not raw.flags.writeable:
                raise OutOfBoundsError(f"{where}: writing to a read-only array")
            raw[off[:, None] + lanes] = data[sel]
