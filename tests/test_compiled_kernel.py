"""The compiled-kernel object: stages kept, Triton-style access, and the disk cache serving a second compile."""
import numpy as np

import tilec
import tilec.language as tl


@tilec.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def _compile():
    src = tilec.ASTSource(scale_kernel, signature="*fp32,*fp32,i32,fp32", constexprs={"BLOCK": 256})
    return tilec.compile(src, target=tilec.Target("cpu"))


def test_stages_metadata_and_triton_style_launch():
    k = _compile()
    assert {"tir", "llir", "asm"} <= set(k.asm)
    assert "func @scale_kernel" in k.asm["tir"] and "define" in k.asm["llir"]
    assert k.metadata.name == "scale_kernel" and k.n_spills == 0
    assert k.metadata.shared > 0  # the per-program scratch (never 0: Triton's softmax tutorial divides by it)
    k._init_handles()
    x = np.random.default_rng(1).random(1000, dtype=np.float32)
    out = np.full_like(x, np.nan)
    k[(tilec.cdiv(1000, 256),)](x, out, 1000, 2.5)            # runtime arguments only
    np.testing.assert_allclose(out, x * 2.5, rtol=1e-6)
    out[:] = np.nan
    k[(tilec.cdiv(1000, 256), 1, 1)](x, out, 1000, 0.5, 256)  # every parameter, constexpr included
    np.testing.assert_allclose(out, x * 0.5, rtol=1e-6)


def test_second_compile_comes_from_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    a = _compile()
    entries = [p for p in tmp_path.rglob("metadata.json")]
    assert len(entries) == 1
    files = {p.suffix for p in entries[0].parent.iterdir()}
    assert {".tir", ".ll", ".s", ".json"} <= files
    def no_frontend(*a, **k):
        raise AssertionError("a cache hit must not run the frontend")
    monkeypatch.setattr(tilec.ASTSource, "make_ir", no_frontend)
    b = _compile()
    assert b.asm["llir"] == a.asm["llir"] and b.metadata["hash"] == a.metadata["hash"]
    assert "compile_time_s" in b.metadata
    x = np.arange(300, dtype=np.float32)
    out = np.zeros_like(x)
    b.run((2,), [x, out, 300, 3.0])
    np.testing.assert_array_equal(out, x * 3)


def test_compile_observers_see_every_compile_on_every_path(monkeypatch):
    """Launches, warmup and tilec.compile all reach the observers (the PTX-everywhere check relies on them)."""
    import numpy as np
    import tilec
    import tilec.language as tl
    from tilec import pipeline

    @tilec.jit
    def twice(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    seen = []
    monkeypatch.setattr(pipeline, "COMPILE_OBSERVERS", [lambda s, t, o, k: seen.append((t.backend, k.name))])
    x = np.ones(5, np.float32)
    twice[(1,)](x, 5, BLOCK=8)
    twice.warmup(x, 5, BLOCK=16, grid=(1,))
    tilec.compile(tilec.ASTSource(twice, signature="*fp32,i32", constexprs={"BLOCK": 32}))
    assert seen == [("cpu", "twice")] * 3


def test_launch_entries_take_runtime_or_every_argument_and_name_a_wrong_count():
    """``kernel[grid]`` for a grid of plain ints is the kernel's launch entry: runtime arguments or every
    parameter's value, one program or many; any other count reaches the launcher, which names it."""
    import pytest
    from tilec.errors import LaunchError
    k = _compile()
    x = np.arange(600, dtype=np.float32)
    for grid in [(1,), (2,), (1, 1, 1), [2]]:
        out = np.zeros_like(x)
        n = 256 * (grid[0] if len(grid) == 1 else 1)
        k[grid](x, out, n, 2.0)
        np.testing.assert_array_equal(out[:n], x[:n] * 2)
        k[grid](x, out, n, 3.0, 256)
        np.testing.assert_array_equal(out[:n], x[:n] * 3)
        for bad in [(x, out), (x, out, n, 1.0, 256, 7)]:
            with pytest.raises(LaunchError, match="runtime arguments"):
                k[grid](*bad)
    assert k[(0,)](x, out, 10, 1.0) is None  # no programs: nothing runs
