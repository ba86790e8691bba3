"""The System V ``.hash`` section: the ROCm loader (like any ELF dynamic loader) finds exported symbols through
it; one bucket per symbol keeps the chains short."""
from __future__ import annotations

import struct


def sysv_hash(name: bytes) -> int:
    h = 0
    for c in name:
        h = ((h << 4) + c) & 0xFFFFFFFF
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h


def build_hash(names: list) -> bytes:
    """``.hash`` contents for dynamic symbols ``names`` (index 0 is the null symbol, name b"")."""
    nchain = len(names)
    nbucket = max(1, nchain)
    buckets, chains = [0] * nbucket, [0] * nchain
    for i in range(1, nchain):
        b = sysv_hash(names[i]) % nbucket
        chains[i] = buckets[b]  # prepend: lookups walk from the bucket through the chain
        buckets[b] = i
    return struct.pack(f"<II{nbucket}I{nchain}I", nbucket, nchain, *buckets, *chains)
