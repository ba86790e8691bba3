"""On-disk cache of compiled kernels: one directory per kernel hash holding every stage's artifact.

Entries are written into a private temporary directory and renamed into place, so a concurrent reader sees either
no entry or a complete one; two processes racing on one key both succeed and one of the identical entries wins.
``TILEC_CACHE_DIR`` moves the cache; ``TILEC_ALWAYS_COMPILE=1`` bypasses it.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile

_EXT = {"tir": "tir", "gir": "gir", "cir": "cir", "llir": "ll", "ptx": "ptx", "asm": "s", "cubin": "cubin",
        "obj": "o", "hsaco": "hsaco", "amdgcn": "amdgcn"}


def cache_dir() -> str:
    d = os.environ.get("TILEC_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tilec")


def enabled() -> bool:
    return os.environ.get("TILEC_ALWAYS_COMPILE", "0") not in ("1", "true", "True")


def _entry(key: str) -> str:
    return os.path.join(cache_dir(), key[:2], key)


def load(key: str):
    """Return (asm, metadata) for ``key`` or None."""
    d = _entry(key)
    try:
        with open(os.path.join(d, "metadata.json")) as f:
            meta = json.load(f)
        asm = {}
        for stage, fname in meta["_files"].items():
            mode = "rb" if meta["_binary"].get(stage) else "r"
            with open(os.path.join(d, fname), mode) as f:
                asm[stage] = f.read()
    except (OSError, ValueError, KeyError):
        return None
    meta = {k: v for k, v in meta.items() if not k.startswith("_")}
    return asm, meta


def store(key: str, name: str, asm: dict, metadata: dict) -> str | None:
    """Write an entry atomically; returns its directory (None if the cache directory is not writable)."""
    final = _entry(key)
    if os.path.isdir(final):
        return final
    parent = os.path.dirname(final)
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".tmp-{key[:16]}-", dir=parent)
    except OSError:
        return None
    try:
        files, binary = {}, {}
        for stage, art in asm.items():
            fname = f"{name}.{_EXT.get(stage, stage)}"
            is_bin = isinstance(art, (bytes, bytearray))
            with open(os.path.join(tmp, fname), "wb" if is_bin else "w") as f:
                f.write(art)
            files[stage], binary[stage] = fname, is_bin
        meta = dict(metadata, _files=files, _binary=binary)
        with open(os.path.join(tmp, "metadata.json"), "w") as f:
            json.dump(meta, f, indent=1, default=str)
        try:
            os.rename(tmp, final)
        except OSError:  # another process won the race with an identical entry
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    return final
