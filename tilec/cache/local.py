"""The local level: a directory of compiled kernels, one directory per kernel hash holding every stage's artifact.

Entries are written into a private temporary directory and renamed into place, so a concurrent reader sees either
no entry or a complete one; two processes racing on one key both succeed and one of the identical entries wins.
Each file's SHA-256 is kept in ``metadata.json``: an entry whose files are missing, truncated or edited, or whose
metadata does not parse, is never served: it is discarded and the kernel is rebuilt (and stored again). A cache
directory that cannot be written warns once; kernels are then compiled in memory.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile

from .entry import EXT, digest, split_metadata
from .notice import warn_once


def cache_dir() -> str:
    d = os.environ.get("TILEC_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tilec")


def _warn_unwritable(where: str, err: OSError):
    warn_once(("local", where), f"tilec: the kernel cache at {where} cannot be written ({err.strerror or err}); "
              "kernels are compiled in memory (set TILEC_CACHE_DIR to a writable directory)", stacklevel=5)


def _entry(key: str) -> str:
    return os.path.join(cache_dir(), key[:2], key)


def contains(key: str) -> bool:
    """Whether an entry for ``key`` is stored (not checked: ``load`` still verifies it)."""
    return os.path.isfile(os.path.join(_entry(key), "metadata.json"))


def _discard(d: str):
    """Remove a bad entry: renamed aside first, so no reader ever sees it half deleted."""
    aside = f"{d}.bad-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        os.rename(d, aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def _read(d: str):
    """(asm, metadata) of the entry in ``d``; None when it is absent; raises ValueError when it is corrupt."""
    try:
        with open(os.path.join(d, "metadata.json")) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise ValueError("not a directory") from None
    meta, files, binary, sums = split_metadata(json.loads(text))
    asm = {}
    for stage, fname in files.items():
        with open(os.path.join(d, fname), "rb") as f:
            data = f.read()
        if digest(data) != sums.get(stage):
            raise ValueError(f"{fname}: checksum mismatch")
        asm[stage] = data if binary.get(stage) else data.decode()
    return asm, meta


def load(key: str):
    """Return (asm, metadata) for ``key`` or None; a corrupt entry is discarded (and None returned)."""
    d = _entry(key)
    try:
        return _read(d)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        _discard(d)
        return None


def store(key: str, name: str, asm: dict, metadata: dict) -> str | None:
    """Write an entry atomically; returns its directory (None if the cache directory is not writable)."""
    final = _entry(key)
    if os.path.isdir(final) and load(key) is not None:
        return final
    parent = os.path.dirname(final)
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=f".tmp-{key[:16]}-", dir=parent)
    except OSError as e:
        _warn_unwritable(cache_dir(), e)
        return None
    try:
        files, binary, sums = {}, {}, {}
        for stage, art in asm.items():
            fname = f"{name}.{EXT.get(stage, stage)}"
            is_bin = isinstance(art, (bytes, bytearray))
            data = bytes(art) if is_bin else art.encode()
            with open(os.path.join(tmp, fname), "wb") as f:
                f.write(data)
            files[stage], binary[stage], sums[stage] = fname, is_bin, digest(data)
        meta = dict(metadata, _files=files, _binary=binary, _sha256=sums)
        with open(os.path.join(tmp, "metadata.json"), "w") as f:
            json.dump(meta, f, indent=1, default=str)
        try:
            os.rename(tmp, final)
        except OSError:  # another process won the race with an identical entry
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        _warn_unwritable(cache_dir(), e)
        return None
    return final
