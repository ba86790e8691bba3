"""Globals a kernel reads: Triton's rules (constexpr globals fold; a plain number global is refused with a located
error unless TILEC_/TRITON_ALLOW_NON_CONSTEXPR_GLOBALS is set) and never a stale value: a changed global
recompiles at the next launch on every launch path, in the interpreter and in another process."""
import os
import subprocess
import sys
import textwrap
import traceback
import types

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import CompilationError

SCALE = tl.constexpr(3.0)
PLAIN = 3.0
DTYPE = tl.float32
cfg = types.ModuleType("cfg")
cfg.OFFSET = tl.constexpr(1.0)
this = sys.modules[__name__]


@tilec.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * SCALE, mask=m)


@tilec.jit
def plain_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * PLAIN, mask=m)


@tilec.jit
def add_offset(x):
    return x + cfg.OFFSET


@tilec.jit
def helper_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, add_offset(tl.load(x_ptr + offs, mask=m)).to(DTYPE), mask=m)


@tilec.jit
def times_two(x):
    return x * 2.0


@tilec.jit
def times_three(x):
    return x * 3.0


OP = times_two


@tilec.jit
def callee_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, OP(tl.load(x_ptr + offs, mask=m)), mask=m)


X = np.random.default_rng(0).standard_normal(37).astype(np.float32)


def _run(kernel, **kw):
    out = np.full_like(X, np.nan)
    kernel[(1,)](X, out, X.size, BLOCK=64, **kw)
    return out


@pytest.fixture(params=["cpu", "interpret"])
def mode(request, monkeypatch):
    if request.param == "interpret":
        for k in (scale_kernel, plain_kernel, helper_kernel, callee_kernel):
            monkeypatch.setattr(k, "interpret", True)
    return request.param


def test_a_plain_global_is_refused_with_a_located_error(mode, monkeypatch):
    monkeypatch.delenv("TILEC_ALLOW_NON_CONSTEXPR_GLOBALS", raising=False)
    monkeypatch.delenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", raising=False)
    with pytest.raises(CompilationError) as e:
        _run(plain_kernel)
    text = str(e.value)
    assert text.startswith(f"{__file__}:")
    assert "cannot access global variable PLAIN (a float) from within a @jit function" in text
    assert "PLAIN = tl.constexpr(3.0)" in text and "TILEC_ALLOW_NON_CONSTEXPR_GLOBALS=1" in text
    assert text.splitlines()[-1].strip() == "^" and "* PLAIN" in text.splitlines()[-2]
    # the launch's own frame at most: no compiler frames, no chained internal exceptions
    frames = traceback.extract_tb(e.value.__traceback__)
    assert len([f for f in frames if "tilec" in f.filename]) <= 1 and e.value.__suppress_context__


@pytest.mark.parametrize("var", ["TILEC_ALLOW_NON_CONSTEXPR_GLOBALS", "TRITON_ALLOW_NON_CONSTEXPR_GLOBALS"])
def test_an_allowed_plain_global_is_part_of_the_specialisation(var, mode, monkeypatch):
    monkeypatch.setenv(var, "1")
    np.testing.assert_allclose(_run(plain_kernel), X * 3.0, rtol=1e-6)
    monkeypatch.setattr(this, "PLAIN", 5.0)
    np.testing.assert_allclose(_run(plain_kernel), X * 5.0, rtol=1e-6)


def test_a_changed_constexpr_global_recompiles_on_every_launch_path(monkeypatch):
    launch = scale_kernel[(1,)]  # a launcher made before the kernel learnt which globals it reads
    out = np.full_like(X, np.nan)
    launch(X, out, X.size, BLOCK=64)
    np.testing.assert_allclose(out, X * 3.0, rtol=1e-6)
    variants = len(scale_kernel.cache)
    monkeypatch.setattr(this, "SCALE", tl.constexpr(5.0))
    launch(X, out, X.size, BLOCK=64)                                   # the held launcher (binder)
    np.testing.assert_allclose(out, X * 5.0, rtol=1e-6)
    np.testing.assert_allclose(_run(scale_kernel, num_warps=2), X * 5.0, rtol=1e-6)  # the options binder
    k = scale_kernel.warmup(X, out, X.size, BLOCK=64, grid=(1,))       # the general path
    out[:] = np.nan
    k[(1,)](X, out, X.size)
    np.testing.assert_allclose(out, X * 5.0, rtol=1e-6)
    monkeypatch.setattr(this, "SCALE", tl.constexpr(3.0))            # back: the first variant, not a new one
    before = len(scale_kernel.cache)
    np.testing.assert_allclose(_run(scale_kernel), X * 3.0, rtol=1e-6)
    assert len(scale_kernel.cache) == before and before > variants


def test_an_int_and_a_float_of_equal_value_are_different_variants(monkeypatch):
    monkeypatch.setattr(this, "SCALE", tl.constexpr(1.0))
    _run(scale_kernel)
    n = len(scale_kernel.cache)
    monkeypatch.setattr(this, "SCALE", tl.constexpr(1))
    _run(scale_kernel)
    monkeypatch.setattr(this, "SCALE", tl.constexpr(True))
    _run(scale_kernel)
    assert len(scale_kernel.cache) == n + 2


def test_globals_of_callees_and_module_attributes(mode, monkeypatch):
    np.testing.assert_allclose(_run(helper_kernel), X + 1.0, rtol=1e-6)
    monkeypatch.setattr(cfg, "OFFSET", tl.constexpr(2.0))
    np.testing.assert_allclose(_run(helper_kernel), X + 2.0, rtol=1e-6)
    monkeypatch.setattr(this, "DTYPE", tl.float16)
    np.testing.assert_array_equal(_run(helper_kernel), (X + 2.0).astype(np.float16).astype(np.float32))


def test_a_callee_rebound_to_another_function(mode, monkeypatch):
    np.testing.assert_allclose(_run(callee_kernel), X * 2.0, rtol=1e-6)
    monkeypatch.setattr(this, "OP", times_three)
    np.testing.assert_allclose(_run(callee_kernel), X * 3.0, rtol=1e-6)


def test_a_closure_constexpr():
    factor = tl.constexpr(2.0)

    @tilec.jit
    def closure_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * factor, mask=m)

    for interpret in (False, True):
        closure_kernel.interpret = interpret
        factor = tl.constexpr(2.0)
        np.testing.assert_allclose(_run(closure_kernel), X * 2.0, rtol=1e-6)
        factor = tl.constexpr(7.0)  # noqa: F841  (read by the kernel through its closure)
        np.testing.assert_allclose(_run(closure_kernel), X * 7.0, rtol=1e-6)


def test_another_process_never_loads_a_kernel_built_for_an_old_value(tmp_path):
    script = textwrap.dedent("""
        import os, sys
        import numpy as np, tilec, tilec.language as tl

        SCALE = tl.constexpr(float(sys.argv[1]))

        @tilec.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) * SCALE)

        x = np.ones(8, np.float32)
        k[(1,)](x, BLOCK=8)
        print(x[0])
    """)
    (tmp_path / "k.py").write_text(script)
    env = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TILEC_ALWAYS_COMPILE", None)
    outs = [subprocess.run([sys.executable, str(tmp_path / "k.py"), v], env=env, capture_output=True, text=True,
                           timeout=300) for v in ("3", "5", "3")]
    assert [o.stdout.strip() for o in outs] == ["3.0", "5.0", "3.0"], [o.stderr for o in outs]
