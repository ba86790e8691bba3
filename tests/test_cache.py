"""The on-disk cache: entries round-trip, text and bytes alike, and concurrent writers never expose a partial
entry."""
import multiprocessing as mp
import os

import pytest

from tilec import cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_round_trip(cache_dir):
    asm = {"tir": "module {\n}\n", "llir": "define void @k() {\n ret void\n}\n", "obj": b"\x7fELF\x00\x01"}
    meta = {"name": "k", "options": {"num_warps": 4}}
    d = cache.store("ab" * 32, "k", asm, meta)
    assert d is not None and os.path.isfile(os.path.join(d, "k.tir")) and os.path.isfile(os.path.join(d, "k.ll"))
    got_asm, got_meta = cache.load("ab" * 32)
    assert got_asm == asm and got_meta == meta


def test_missing_and_corrupt(cache_dir):
    assert cache.load("cd" * 32) is None
    d = cache.store("ef" * 32, "k", {"tir": "x"}, {"name": "k"})
    os.remove(os.path.join(d, "k.tir"))
    assert cache.load("ef" * 32) is None


def test_disabled_by_env(monkeypatch):
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    assert not cache.enabled()
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "0")
    assert cache.enabled()


def _writer(args):
    d, i = args
    os.environ["TILEC_CACHE_DIR"] = d
    seen = []
    for _ in range(20):
        cache.store("12" * 32, "k", {"tir": "x" * 100_000, "obj": b"y" * 50_000}, {"name": "k", "w": 1})
        hit = cache.load("12" * 32)
        seen.append(hit is not None and len(hit[0]["tir"]) == 100_000 and len(hit[0]["obj"]) == 50_000)
    return all(seen)


def test_concurrent_writers_never_see_partial_entries(cache_dir):
    with mp.get_context("spawn").Pool(4) as pool:
        assert all(pool.map(_writer, [(str(cache_dir), i) for i in range(4)]))
    leftovers = [n for n in os.listdir(os.path.join(cache_dir, "12")) if n.startswith(".tmp")]
    assert leftovers == []
