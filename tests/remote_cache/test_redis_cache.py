"""The remote kernel cache against a real Redis server: machines of a fleet (child processes with their own local
directories) share kernels, a server killed or hung during a run, a corrupted remote entry, a read-only replica,
concurrent publishers of one key, and leases that make a fleet compile each variant once."""
import json
import os
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import tilec
from tilec import cache
from tilec.cache import entry

from .conftest import child_env
from .kernels import scale_add
from .redis_server import RedisServer

HERE = os.path.dirname(os.path.abspath(__file__))


def variant(block: int):
    return tilec.ASTSource(scale_add, signature="*fp32,*fp32,*fp32,fp32,i32", constexprs={"BLOCK": block})


def compile_and_check(block: int):
    k = tilec.compile(variant(block))
    n = 997
    rng = np.random.default_rng(block)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.empty_like(x)
    k[(-(-n // block),)](x, y, out, np.float32(1.5), n)
    np.testing.assert_allclose(out, 1.5 * x + y, rtol=1e-6)
    return k


def run_member(server, local_dir, blocks, timeout=120, **env):
    env = child_env(server, local_dir, **env)
    out = subprocess.run([sys.executable, os.path.join(HERE, "fleet_member.py"), *map(str, blocks)], env=env,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def remote_keys(server):
    return sorted(k.decode() for k in server.client().keys("tilec:*") if not k.endswith(b".claim"))


# -- sharing ---------------------------------------------------------------------------------------------------
def test_two_processes_share_kernels(redis_server, tmp_path):
    """The first machine compiles and publishes; the second, with an empty local directory, compiles nothing."""
    first = run_member(redis_server, tmp_path / "a", [32, 64, 128])
    assert first["ok"] and first["stats"].get("misses") == 3 and first["stats"].get("remote_published") == 3
    assert len(remote_keys(redis_server)) == 3
    second = run_member(redis_server, tmp_path / "b", [32, 64, 128])
    assert second["ok"] and second["stats"].get("remote_hits") == 3 and not second["stats"].get("misses")
    assert not first["warnings"] and not second["warnings"]
    # the remote hit was copied into the second machine's local directory: a third run there reads only locally
    third = run_member(redis_server, tmp_path / "b", [32, 64, 128])
    assert third["ok"] and third["stats"] == {"local_hits": 3}


def test_remote_hit_is_the_same_kernel(remote_env, tmp_path, monkeypatch):
    k1 = compile_and_check(64)
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "other-machine"))
    k2 = compile_and_check(64)
    assert cache.stats()["remote_hits"] == 1
    assert dict(k2.asm) == dict(k1.asm)
    assert k2.metadata == k1.metadata


def test_contains_sees_remote_entries(remote_env, tmp_path, monkeypatch):
    k = compile_and_check(32)
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "empty"))
    assert cache.contains(k.metadata["hash"])
    assert not cache.contains("00" * 32)


# -- failures --------------------------------------------------------------------------------------------------
def test_server_killed_during_a_run(remote_env, monkeypatch):
    """Kernels keep compiling and running; one warning; no call waits on the dead server; once it is back (after
    the retry interval) publishing resumes."""
    monkeypatch.setenv("TILEC_REMOTE_CACHE_RETRY_S", "60")
    server = remote_env
    compile_and_check(16)
    assert len(remote_keys(server)) == 1
    server.kill()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        for block in (32, 64, 128):
            compile_and_check(block)
        elapsed = time.perf_counter() - t0
        msgs = [str(x.message) for x in w if issubclass(x.category, cache.CacheWarning)]
    assert len(msgs) == 1 and "cannot be reached" in msgs[0] and "local cache only" in msgs[0], msgs
    assert elapsed < 30
    assert cache.stats()["remote_errors"] == 1  # the remote was left alone after the first failure
    server.start()  # same port, empty (no persistence)
    level = cache.remote()
    level._down_until = time.monotonic()  # the retry interval has passed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile_and_check(256)
    assert len(remote_keys(server)) == 1


def test_server_killed_while_a_child_runs(redis_server, tmp_path):
    """A child process launching kernels loses the server between two launches: every result is right, it warns
    once, and its later variants are compiled and kept locally."""
    env = child_env(redis_server, tmp_path / "a", TILEC_REMOTE_CACHE_RETRY_S=60)
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fleet_member.py"), "16", "--sleep-after-first",
                             "1.5", "32", "64"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    assert json.loads(first) == {"launched": 16}
    redis_server.kill()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["ok"]
    assert len(result["warnings"]) == 1 and "cannot be reached" in result["warnings"][0]
    assert result["stats"]["misses"] == 3 and result["stats"]["remote_published"] == 1
    local = [k for d in os.listdir(tmp_path / "a") if len(d) == 2 for k in os.listdir(tmp_path / "a" / d)]
    assert len(local) == 3


def test_unreachable_from_the_start(tmp_path, monkeypatch):
    """Nothing listens at the configured address: one warning, kernels compile and run, nothing fails."""
    pytest.importorskip("redis", reason="the redis client is not installed (tilec's [redis] extra)")
    from .redis_server import free_port
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "local"))
    monkeypatch.setenv("TILEC_REMOTE_CACHE_BACKEND", "redis")
    monkeypatch.setenv("TILEC_REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    cache.reset_warnings()
    cache.reset_stats()
    with pytest.warns(cache.CacheWarning, match="cannot be reached"):
        compile_and_check(32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile_and_check(64)
    assert cache.stats()["misses"] == 2


def test_hung_server_times_out(remote_env, monkeypatch):
    """A server that accepts but never answers (stopped): each call gives up after the timeout, once, then the
    remote is left alone."""
    monkeypatch.setenv("TILEC_REMOTE_CACHE_RETRY_S", "60")
    server = remote_env
    server.pause()
    try:
        t0 = time.perf_counter()
        with pytest.warns(cache.CacheWarning, match="cannot be reached"):
            compile_and_check(32)
            compile_and_check(64)
        assert time.perf_counter() - t0 < 20
    finally:
        server.resume()
    assert cache.stats()["remote_errors"] == 1


def test_read_only_replica(remote_env, tmp_path, monkeypatch):
    """A read-only replica serves what the primary has and refuses writes: one warning, new kernels are kept
    locally, nothing fails."""
    primary = remote_env
    compile_and_check(32)
    replica = RedisServer(tmp_path / "replica", replica_of=primary)
    try:
        deadline = time.monotonic() + 20
        while not replica.client().keys("tilec:*") and time.monotonic() < deadline:
            time.sleep(0.05)
        monkeypatch.setenv("TILEC_REDIS_URL", replica.url)
        monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "other-machine"))
        cache.reset_stats()
        compile_and_check(32)
        assert cache.stats()["remote_hits"] == 1
        with pytest.warns(cache.CacheWarning, match="refuses writes"):
            compile_and_check(64)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compile_and_check(128)
        assert cache.stats()["misses"] == 2
        assert os.path.isdir(tmp_path / "other-machine")
    finally:
        replica.close()


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "other-key", "empty"])
def test_corrupted_remote_entry_is_ignored_and_rebuilt(remote_env, tmp_path, monkeypatch, damage):
    server = remote_env
    k = compile_and_check(64)
    key = "tilec:" + k.metadata["hash"]
    r = server.client()
    value = r.get(key)
    if damage == "flip":
        r.setrange(key, len(value) - 10, bytes([value[-10] ^ 0x40]))
    elif damage == "truncate":
        r.set(key, value[: len(value) // 2])
    elif damage == "garbage":
        r.set(key, os.urandom(len(value)))
    elif damage == "other-key":
        other = compile_and_check(128)
        r.set(key, r.get("tilec:" + other.metadata["hash"]))
    else:
        r.set(key, b"")
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "other-machine"))
    cache.reset_stats()
    again = compile_and_check(64)
    assert dict(again.asm) == dict(k.asm)
    s = cache.stats()
    assert s["remote_corrupt"] == 1 and s["misses"] == 1 and s["remote_published"] == 1 and "remote_hits" not in s
    assert entry.unpack(k.metadata["hash"], r.get(key))[0] == dict(k.asm)  # the rebuilt entry replaced it


# -- concurrency -----------------------------------------------------------------------------------------------
def _publish_loop(url, key, seed, rounds):
    """A child process: publishes its own (different, valid) bundle for ``key`` and reads it back, ``rounds``
    times; returns how many reads were whole, valid entries."""
    os.environ.update(TILEC_REMOTE_CACHE_BACKEND="redis", TILEC_REDIS_URL=url)
    level = cache.remote()
    good = 0
    for i in range(rounds):
        asm = {"tir": f"module {seed} {i}\n" * 2000, "cubin": os.urandom(30_000)}
        level.publish(key, "k", asm, {"name": "k", "seed": seed})
        hit = level.load(key)
        good += hit is not None and len(hit[0]["cubin"]) == 30_000 and hit[1]["name"] == "k"
    return good


def test_concurrent_publishers_of_one_key(redis_server):
    import multiprocessing as mp
    key = "ab" * 32
    with mp.get_context("spawn").Pool(4) as pool:
        got = pool.starmap(_publish_loop, [(redis_server.url, key, s, 15) for s in range(4)])
    assert got == [15] * 4
    final = entry.unpack(key, redis_server.client().get("tilec:" + key))
    assert final[1]["seed"] in range(4)


def test_a_fleet_starting_at_once_compiles_each_variant_once(redis_server, tmp_path):
    """Four machines with empty local directories launch the same three variants at once: the leases make one of
    them compile each variant; the others wait for it and read it from the remote."""
    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(lambda i: run_member(redis_server, tmp_path / f"m{i}", [32, 64, 128]), range(4)))
    assert all(r["ok"] and not r["warnings"] for r in results)
    assert sum(r["stats"].get("misses", 0) for r in results) == 3
    assert sum(r["stats"].get("remote_hits", 0) for r in results) == 9
    assert sum(r["stats"].get("remote_published", 0) for r in results) == 3
    assert not [k for k in redis_server.client().keys("*") if k.endswith(b".claim")]


def test_a_dead_claimer_lease_lapses(remote_env, monkeypatch):
    """A lease whose holder died (never refreshed) lapses; the waiter then builds the kernel itself."""
    from tilec.cache.remote import RemoteLevel
    monkeypatch.setattr(RemoteLevel, "LEASE_S", 0.5)
    key = tilec.compile.__globals__["compile_source"].__globals__["cache_key"]  # noqa: F841  (the pipeline's)
    src = variant(32)
    from tilec.backends import get_backend
    from tilec.compiler import Target
    from tilec.pipeline import cache_key
    k = cache_key(src, Target("cpu"), get_backend(Target("cpu")).parse_options({}))
    remote_env.client().set("tilec:" + k + ".claim", b"someone-dead", px=800)
    t0 = time.perf_counter()
    compile_and_check(32)
    waited = time.perf_counter() - t0
    assert 0.5 < waited < 15
    assert cache.stats()["remote_waits"] == 1 and cache.stats()["misses"] == 1


def test_a_failed_compile_gives_its_lease_up(remote_env):
    """A compile error releases the lease at once: the next process does not wait for a build that will never
    be published."""
    import tilec.language as tl

    @tilec.jit
    def broken(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), undefined_name)  # noqa: F821

    with pytest.raises(tilec.CompilationError):
        tilec.compile(tilec.ASTSource(broken, signature="*fp32", constexprs={"BLOCK": 16}))
    assert not [k for k in remote_env.client().keys("*") if k.endswith(b".claim")]
