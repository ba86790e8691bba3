"""What a cache entry is, whichever level keeps it: every stage's artifact with its SHA-256, and the metadata.

The local level keeps an entry as a directory of files (``local.py``); a remote level keeps it as one value,
``pack``'s bundle, so that a store is atomic wherever one ``put`` is. A bundle carries the SHA-256 of its
compressed body, each artifact's own SHA-256 (the same table the local level keeps in ``metadata.json``) and the
key it was stored under: ``unpack`` refuses a truncated, edited or misfiled value with ``ValueError``.
"""
from __future__ import annotations

import hashlib
import json
import struct
import zlib

# file extension of each stage's artifact (a stage not listed keeps its own name)
EXT = {"tir": "tir", "gir": "gir", "plan": "plan", "llir": "ll", "ptx": "ptx", "asm": "s", "cubin": "cubin",
       "obj": "o", "hsaco": "hsaco", "amdgcn": "amdgcn"}

MAGIC = b"tilec-kernel-entry 1\n"
_HEADER_LEN = struct.Struct(">Q")
_MAX_BODY = 1 << 30  # a decompressed bundle larger than this is not a kernel (a damaged or hostile value)


def digest(data) -> str:
    return hashlib.sha256(data if isinstance(data, (bytes, bytearray)) else data.encode()).hexdigest()


def split_metadata(meta) -> tuple:
    """(metadata, files, binary, sums) from a stored metadata table; ValueError when the tables are missing."""
    if not isinstance(meta, dict) or not all(k in meta for k in ("_files", "_binary", "_sha256")):
        raise ValueError("metadata without its file table")
    return ({k: v for k, v in meta.items() if not k.startswith("_")},
            meta["_files"], meta["_binary"], meta["_sha256"])


def pack(key: str, name: str, asm: dict, metadata: dict, level: int = 1) -> bytes:
    """One value holding the entry for ``key``: artifacts, their checksums and the metadata."""
    files, blobs = [], []
    for stage, art in asm.items():
        is_bin = isinstance(art, (bytes, bytearray))
        data = bytes(art) if is_bin else art.encode()
        files.append([stage, is_bin, len(data), digest(data)])
        blobs.append(data)
    header = json.dumps({"key": key, "name": name, "files": files, "meta": metadata}, default=str).encode()
    body = zlib.compress(_HEADER_LEN.pack(len(header)) + header + b"".join(blobs), level)
    return MAGIC + digest(body).encode() + b"\n" + body


def unpack(key: str, value: bytes) -> tuple:
    """(asm, metadata) from a bundle stored under ``key``; ValueError for anything but a whole, intact entry."""
    if not isinstance(value, (bytes, bytearray)) or not value.startswith(MAGIC):
        raise ValueError("not a tilec cache entry")
    start = len(MAGIC) + 65
    expected, body = bytes(value[len(MAGIC):start - 1]), bytes(value[start:])
    if value[start - 1:start] != b"\n" or digest(body).encode() != expected:
        raise ValueError("checksum mismatch (truncated or edited)")
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(body, _MAX_BODY)
    except zlib.error as e:
        raise ValueError(f"body does not decompress: {e}") from None
    if inflater.unconsumed_tail or not inflater.eof:
        raise ValueError("body too large or incomplete")
    if len(raw) < _HEADER_LEN.size:
        raise ValueError("no header")
    (n,) = _HEADER_LEN.unpack_from(raw)
    header = json.loads(raw[_HEADER_LEN.size:_HEADER_LEN.size + n])
    if not isinstance(header, dict) or header.get("key") != key:
        raise ValueError("an entry stored under another key")
    pos, asm = _HEADER_LEN.size + n, {}
    for stage, is_bin, length, sha in header["files"]:
        data = raw[pos:pos + length]
        pos += length
        if len(data) != length or digest(data) != sha:
            raise ValueError(f"{stage}: checksum mismatch")
        asm[stage] = data if is_bin else data.decode()
    if pos != len(raw):
        raise ValueError("trailing data")
    meta = header["meta"]
    if not isinstance(meta, dict):
        raise ValueError("metadata is not a table")
    return asm, meta
