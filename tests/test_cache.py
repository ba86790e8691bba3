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


KEY = "9a" * 32


def _entry_files(d):
    return {n: os.path.join(d, n) for n in os.listdir(d)}


@pytest.mark.parametrize("damage", ["truncate", "edit", "delete", "metadata", "metadata-empty"])
def test_corrupt_entry_is_discarded_and_rebuilt(cache_dir, damage):
    asm = {"tir": "module {\n}\n" * 50, "llir": "define void @k() {\n ret void\n}\n", "cubin": b"\x7fELF" * 64}
    d = cache.store(KEY, "k", asm, {"name": "k"})
    files = _entry_files(d)
    if damage == "truncate":
        with open(files["k.ll"], "r+") as f:
            f.truncate(10)
    elif damage == "edit":
        with open(files["k.cubin"], "r+b") as f:
            f.write(b"\x00")
    elif damage == "delete":
        os.remove(files["k.tir"])
    elif damage == "metadata":
        with open(files["metadata.json"], "w") as f:
            f.write('{"name": "k", "_files": ')
    else:
        open(files["metadata.json"], "w").close()
    assert cache.load(KEY) is None          # never served
    assert not os.path.exists(d)            # discarded, so the next store rebuilds it
    d2 = cache.store(KEY, "k", asm, {"name": "k"})
    assert d2 == d and cache.load(KEY) == (asm, {"name": "k"})


def test_store_replaces_a_corrupt_entry_in_place(cache_dir):
    d = cache.store(KEY, "k", {"tir": "abc"}, {"name": "k"})
    with open(os.path.join(d, "k.tir"), "w") as f:
        f.write("abd")
    cache.store(KEY, "k", {"tir": "abc"}, {"name": "k"})
    assert cache.load(KEY) == ({"tir": "abc"}, {"name": "k"})


def test_compile_survives_a_corrupt_entry(cache_dir):
    """A damaged cached kernel is recompiled, not a permanent error, and the rebuilt entry is then served."""
    import numpy as np
    import tilec
    import tilec.language as tl

    @tilec.jit
    def scale(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)

    src = tilec.ASTSource(scale, signature="*fp32,i32", constexprs={"BLOCK": 64})
    first = tilec.compile(src)
    [entry] = [os.path.join(r, f) for r, _, fs in os.walk(cache_dir) for f in fs if f.endswith(".ll")]
    with open(entry, "w") as f:
        f.write("define void @broken(")
    again = tilec.compile(src)
    assert again.asm["llir"] == first.asm["llir"]
    x = np.random.default_rng(1).standard_normal(77).astype(np.float32)
    y = x.copy()
    again[(2,)](y, 77)
    np.testing.assert_allclose(y, x * 3.0, rtol=1e-6)
    assert cache.load(first.metadata["hash"])[0]["llir"] == first.asm["llir"]


def _warns_once(monkeypatch, where):
    """Storing into ``where`` fails with one CacheWarning; later stores fail silently; nothing is served."""
    import warnings
    monkeypatch.setenv("TILEC_CACHE_DIR", str(where))
    cache.reset_warnings()
    with pytest.warns(cache.CacheWarning, match="cannot be written"):
        assert cache.store(KEY, "k", {"tir": "x"}, {"name": "k"}) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.store("9b" * 32, "k", {"tir": "x"}, {"name": "k"}) is None
        assert cache.load(KEY) is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through read-only permissions")
def test_read_only_cache_warns_once(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    _warns_once(monkeypatch, ro)


def test_unwritable_cache_warns_once(tmp_path, monkeypatch):
    """A cache path under a regular file cannot be created, whoever runs the test."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    _warns_once(monkeypatch, blocker / "cache")


_KERNEL_SRC = '''
import numpy as np, tilec, tilec.language as tl

@tilec.jit
def axpy(x_ptr, y_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)
'''


def _compile_and_run(args):
    d, i = args
    os.environ["TILEC_CACHE_DIR"] = d
    import importlib.util
    import sys
    import numpy as np
    path = os.path.join(d, f"kern_{i}.py")
    with open(path, "w") as f:
        f.write(_KERNEL_SRC)
    spec = importlib.util.spec_from_file_location(f"kern_{i}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    ok = True
    for block in (32, 64, 128) if i % 2 else (64, 256):  # the same and different specialisations at once
        x = np.random.default_rng(i).standard_normal(1000).astype(np.float32)
        y = np.ones(1000, np.float32)
        mod.axpy[(-(-1000 // block),)](x, y, 2.0, 1000, BLOCK=block)
        ok &= bool(np.allclose(y, 2.0 * x + 1.0, rtol=1e-6))
    return ok


@pytest.mark.slow
def test_eight_processes_compiling_leave_a_valid_cache(cache_dir):
    with mp.get_context("spawn").Pool(8) as pool:
        assert all(pool.map(_compile_and_run, [(str(cache_dir), i) for i in range(8)]))
    entries = [os.path.join(cache_dir, p, k) for p in os.listdir(cache_dir) if len(p) == 2
               for k in os.listdir(os.path.join(cache_dir, p))]
    assert entries and all(not os.path.basename(e).startswith(".") and ".bad-" not in e for e in entries)
    for e in entries:
        assert cache.load(os.path.basename(e)) is not None, e


def test_full_disk_mid_entry_warns_once_leaves_nothing_and_compiles_in_memory(cache_dir, monkeypatch):
    """ENOSPC on the second file of an entry: one CacheWarning, no temporary directory or partial entry left
    behind, and kernels still compile and run (in memory)."""
    import builtins
    import errno
    import warnings

    import numpy as np
    import tilec
    import tilec.language as tl

    writes = []

    def full_disk_open(path, mode="r", *a, **k):
        if "w" in mode:
            writes.append(path)
            if len(writes) % 3 == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
        return builtins.open(path, mode, *a, **k)

    cache.reset_warnings()
    patch = monkeypatch.context()
    patch.__enter__().setattr(cache.local, "open", full_disk_open, raising=False)

    @tilec.jit
    def twice(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

    x = np.random.default_rng(3).standard_normal(91).astype(np.float32)
    with pytest.warns(cache.CacheWarning, match="No space left on device"):
        y = x.copy()
        twice[(2,)](y, 91, BLOCK=64)
    np.testing.assert_array_equal(y, x * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per directory
        y = x.copy()
        twice[(6,)](y, 91, BLOCK=16)
        np.testing.assert_array_equal(y, x * 2)
    left = [os.path.join(r, f) for r, ds, fs in os.walk(cache_dir) for f in fs + ds]
    assert not [p for p in left if ".tmp-" in p], left
    patch.__exit__(None, None, None)
    assert len(writes) >= 3
    for p in os.listdir(cache_dir):  # whatever entry did get written whole is valid
        for key in os.listdir(os.path.join(cache_dir, p)):
            assert cache.load(key) is not None, key
