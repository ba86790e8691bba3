"""The remote level's rules with backends named by ``module:Class``: two levels (local first, then remote, then
compile and publish), a bad remote entry never served, and a remote that is unreachable, read-only or cannot be
set up warns once and leaves the local cache working; nothing ever fails a compile."""
import sys
import warnings

import numpy as np
import pytest

import tilec
from tilec import cache
from tilec.cache import entry

from . import memory_backend as mb
from .kernels import scale_add


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "local"))
    monkeypatch.delenv("TILEC_ALWAYS_COMPILE", raising=False)
    mb.STORE.clear(), mb.CLAIMS.clear(), mb.CALLS.clear()
    cache.reset_warnings()
    cache.reset_stats()
    yield tmp_path
    cache.set_remote_backend(None)
    cache.reset_warnings()


def use(monkeypatch, name):
    monkeypatch.setenv("TILEC_REMOTE_CACHE_BACKEND", f"remote_cache.memory_backend:{name}")


def build(block=64):
    k = tilec.compile(tilec.ASTSource(scale_add, signature="*fp32,*fp32,*fp32,fp32,i32", constexprs={"BLOCK": block}))
    x = np.random.default_rng(block).standard_normal(301).astype(np.float32)
    out = np.empty_like(x)
    k[(-(-301 // block),)](x, x, out, np.float32(-0.5), 301)
    np.testing.assert_allclose(out, 0.5 * x, rtol=1e-6)
    return k


def test_local_then_remote_then_compile(fresh, monkeypatch):
    use(monkeypatch, "MemoryBackend")
    k = build()
    key = k.metadata["hash"]
    assert cache.stats() == {"misses": 1, "remote_published": 1}
    assert entry.unpack(key, mb.STORE[key])[0] == dict(k.asm)
    calls = len(mb.CALLS)
    build()
    assert cache.stats()["local_hits"] == 1 and len(mb.CALLS) == calls  # local first: the remote is not asked
    monkeypatch.setenv("TILEC_CACHE_DIR", str(fresh / "machine-2"))
    build()
    assert cache.stats()["remote_hits"] == 1 and cache.stats()["misses"] == 1


def test_a_backend_with_only_get_and_put(fresh, monkeypatch):
    use(monkeypatch, "GetPutOnly")
    k = build()
    monkeypatch.setenv("TILEC_CACHE_DIR", str(fresh / "machine-2"))
    assert dict(build().asm) == dict(k.asm)
    assert cache.stats()["remote_hits"] == 1


def test_programmatic_backend(fresh):
    cache.set_remote_backend(mb.MemoryBackend())
    build(32)
    assert len(mb.STORE) == 1
    cache.set_remote_backend(None)
    assert cache.remote() is None or "memory_backend" not in str(type(cache.remote().backend))


def test_a_bad_remote_entry_is_replaced(fresh, monkeypatch):
    use(monkeypatch, "MemoryBackend")
    key = build().metadata["hash"]
    mb.STORE[key] = mb.STORE[key][:-1]
    monkeypatch.setenv("TILEC_CACHE_DIR", str(fresh / "machine-2"))
    build()
    assert cache.stats()["remote_corrupt"] == 1
    assert entry.unpack(key, mb.STORE[key])  # rebuilt and published whole


def test_unreachable_warns_once_and_is_left_alone(fresh, monkeypatch):
    use(monkeypatch, "Unreachable")
    with pytest.warns(cache.CacheWarning, match="cannot be reached.*ConnectionRefusedError"):
        build(16)
    n = len(mb.CALLS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build(32)
        build(64)
    assert len(mb.CALLS) == n  # not asked again within the retry interval
    assert cache.stats()["misses"] == 3


def test_read_only_warns_once_and_is_still_read(fresh, monkeypatch):
    use(monkeypatch, "MemoryBackend")
    published = build(16)
    use(monkeypatch, "ReadOnly")
    monkeypatch.setenv("TILEC_CACHE_DIR", str(fresh / "machine-2"))
    assert dict(build(16).asm) == dict(published.asm)
    with pytest.warns(cache.CacheWarning, match="refuses writes"):
        build(32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build(64)
        build(16)
    s = cache.stats()
    assert s["remote_hits"] == 1 and s["misses"] == 3 and s["local_hits"] == 1
    assert len(mb.STORE) == 1


@pytest.mark.parametrize("spec, message", [
    ("remote_cache.memory_backend:BrokenConstructor", "no credentials configured"),
    ("no_such_module_anywhere:Backend", "No module named"),
    ("remote_cache.memory_backend:NoSuchClass", "NoSuchClass"),
    ("redis-cluster", "expected 'redis' or 'module:Class'"),
])
def test_a_remote_that_cannot_be_set_up(fresh, monkeypatch, spec, message):
    monkeypatch.setenv("TILEC_REMOTE_CACHE_BACKEND", spec)
    with pytest.warns(cache.CacheWarning, match=message):
        build(16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build(32)
    assert cache.remote() is None and cache.stats()["misses"] == 2


def test_redis_without_its_client(fresh, monkeypatch):
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis fails
    monkeypatch.setenv("TILEC_REMOTE_CACHE_BACKEND", "redis")
    with pytest.warns(cache.CacheWarning, match=r"pip install redis"):
        build(16)


def test_always_compile_bypasses_both_levels(fresh, monkeypatch):
    use(monkeypatch, "MemoryBackend")
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    build()
    assert mb.STORE == {} and mb.CALLS == []


def test_an_entry_published_between_the_miss_and_the_lease_is_used(fresh, monkeypatch):
    """A process that takes the lease just after another published and gave its lease up reads the entry
    instead of compiling the kernel again."""
    use(monkeypatch, "MemoryBackend")
    k = build(128)
    use(monkeypatch, "LateEntry")
    mb.LateEntry.first_look.clear()
    monkeypatch.setenv("TILEC_CACHE_DIR", str(fresh / "machine-2"))
    cache.reset_stats()
    assert dict(build(128).asm) == dict(k.asm)
    assert cache.stats() == {"remote_hits": 1}
    assert mb.CLAIMS == set()


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork here")
def test_a_forked_child_builds_its_own_remote_level(fresh, monkeypatch):
    import os
    use(monkeypatch, "MemoryBackend")
    parent = cache.remote()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a new level, working
        try:
            ok = cache.remote() is not parent and cache.remote() is not None
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    assert cache.remote() is parent
