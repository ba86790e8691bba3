"""A compile error reaches the user as the located message right after their own launch line: no internal
traceback, no chained internal exceptions (TILEC_DEBUG=1 keeps everything)."""
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import numpy as np, tilec, tilec.language as tl

    @tilec.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        y = tl.load(x_ptr + offs) + tl.arange(0, 2 * BLOCK)
        tl.store(x_ptr + offs, y)

    x = np.zeros(16, np.float32)
    {launch}
""")


def _run(tmp_path, launch, debug):
    f = tmp_path / "user_kernel.py"
    f.write_text(SCRIPT.format(launch=launch))
    env = dict(os.environ, TILEC_DEBUG="1" if debug else "0", TILEC_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, str(f)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1
    return r.stderr


@pytest.mark.parametrize("launch", ["k[(1,)](x, 16, BLOCK=16)", "k.warmup(x, 16, BLOCK=16, grid=(1,))",
                                    "k.run(x, 16, BLOCK=16, grid=(1,))",
                                    "tilec.compile(tilec.ASTSource(k, signature='*fp32,i32', constexprs={'BLOCK': 16}))"])
def test_compile_error_is_short_and_located(tmp_path, launch):
    err = _run(tmp_path, launch, debug=False)
    lines = err.strip().splitlines()
    assert len(lines) <= 10, err
    assert "During handling" not in err and "direct cause" not in err
    assert 'user_kernel.py", line 11' in err  # the user's launch line
    assert lines[-3].startswith("tilec.errors.CompilationError: ") and "user_kernel.py:7:" in lines[-3]
    assert "cannot broadcast shapes [16] and [32]" in lines[-3]
    assert lines[-1].strip() == "^" and "tl.arange(0, 2 * BLOCK)" in lines[-2]


def test_debug_keeps_the_whole_chain(tmp_path):
    err = _run(tmp_path, "k[(1,)](x, 16, BLOCK=16)", debug=True)
    assert "direct cause" in err and "broadcast_shapes" in err


RUNTIME = textwrap.dedent("""
    import numpy as np, tilec, tilec.language as tl

    @tilec.jit(debug=True, interpret={interpret})
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.device_assert(tl.load(x_ptr + offs, mask=offs < n) >= 0, "x must be non-negative")
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)

    x = np.zeros({size}, np.float32)
    k[(3,)](x, {size}, BLOCK=16)
""")


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("size,error,line", [(37, "BoundsError", 8), (48, None, 7)])
def test_runtime_errors_of_debug_builds_are_short_and_located(tmp_path, interpret, size, error, line):
    """Bounds and assert failures of debug builds read like compile errors: the launch line, then the located
    message (the internal KeyError of the launch cache's first miss is not chained in)."""
    f = tmp_path / "user_kernel.py"
    f.write_text(RUNTIME.format(interpret=interpret, size=size).replace("+ 1)", "+ 1)" if error else "- 1)"))
    env = dict(os.environ, TILEC_DEBUG="0", TILEC_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, str(f)], capture_output=True, text=True, env=env, timeout=300)
    if error is None:  # the kernel stored x - 1 < 0: a second launch trips the assert
        f.write_text(f.read_text() + "k[(3,)](x, 48, BLOCK=16)\n")
        r = subprocess.run([sys.executable, str(f)], capture_output=True, text=True, env=env, timeout=300)
    err = r.stderr
    lines = err.strip().splitlines()
    assert r.returncode == 1 and len(lines) <= 8, err
    assert "During handling" not in err and "direct cause" not in err
    assert lines[-3].startswith("tilec.errors." + (error or "")), err
    assert f"user_kernel.py:{line}:" in lines[-3] and "in program (" in lines[-3]
    if error is None:
        assert "x must be non-negative" in lines[-3]


@pytest.mark.parametrize("interpret", [False, True])
def test_cause_is_the_language_rule_that_failed(interpret, monkeypatch):
    """``e.__cause__`` is the bare error the rule raised (programs written for Triton read it there), though the
    displayed chain stays cut."""
    import numpy as np
    import tilec
    import tilec.language as tl
    monkeypatch.setenv("TILEC_DEBUG", "0")

    def bad_axis(x_ptr, N: tl.constexpr):
        t = tl.expand_dims(tl.arange(0, N), 2)
        tl.store(x_ptr + tl.arange(0, N), tl.sum(t, axis=0))

    k = tilec.jit(bad_axis, interpret=interpret)
    with pytest.raises(tilec.CompilationError) as ei:
        k[(1,)](np.zeros(8, np.float32), 8)
    cause = ei.value.__cause__
    assert isinstance(cause, ValueError) and "invalid axis 2" in str(cause)
    assert cause.__traceback__ is None and cause.__cause__ is None
    assert ei.value.reason is cause


LAUNCH = textwrap.dedent("""
    import numpy as np, tilec, tilec.language as tl

    @tilec.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    x = np.zeros(16, np.float32)
    k[(1,)](x, 16, BLOCK=16)
    {prepare}
    {launch}  # the launch line
""")


@pytest.mark.parametrize("prepare, launch, message", [
    ("", "k[(1.5,)](x, 16, BLOCK=16)", "ValueError: k: grid dimension 0 must be an int, got 1.5"),
    ("x.setflags(write=False)", "k[(1,)](x, 16, BLOCK=16)", "TypeError: k: parameter 'x_ptr' is written by the kernel"),
    ("", 'k[(1,)]("hello", 16, BLOCK=16)', "TypeError: k: parameter 'x_ptr': unsupported argument type"),
    ("", "k[(1,)](x, BLOCK=16)", "TypeError: k() missing a value for parameter 'n'"),
    ("", "k[(1,)](x, 1 << 70, BLOCK=16)", "OverflowError: k: parameter 'n': integer argument"),
    ("", "k[(1,)](x, 16, BLOCK=np.zeros(3))", "TypeError: k: constexpr parameter 'BLOCK' needs a compile-time value"),
    ("", "k[(1, 1, 1, 1)](x, 16, BLOCK=16)", "ValueError: k: the grid must have 1 to 3 dimensions"),
])
def test_launch_errors_come_without_internal_frames(tmp_path, prepare, launch, message):
    f = tmp_path / "user_launch.py"
    f.write_text(LAUNCH.format(prepare=prepare, launch=launch))
    env = dict(os.environ, TILEC_DEBUG="0", TILEC_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, str(f)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1
    err = r.stderr
    assert message in err, err
    assert "During handling" not in err and "direct cause" not in err, err
    frames = [line for line in err.splitlines() if line.startswith("  File ")]
    assert frames[0].startswith(f'  File "{f}", line 12') and len(frames) <= 2, err
    assert all("tilec" + os.sep not in line for line in frames), err  # no frame of tilec's own files
