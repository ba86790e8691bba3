"""An out-of-bounds access in a build without debug checks: an unmasked load far outside its array faults; before
the process goes, it prints the Python traceback of the launch, whose frames name the kernel (``TILEC_DEBUG=1``
instead raises a located BoundsError: tests/language/test_debug_bounds.py)."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import numpy as np, tilec, tilec.language as tl

    @tilec.jit
    def far_read(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs + (1 << 40)))

    x = np.ones(16, np.float32)
    out = np.zeros_like(x)
    far_read[(1,)](x, out, BLOCK=16)  # the launch line
    print("survived")
""")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_fault_prints_the_launch_traceback_and_the_kernel(tmp_path):
    path = tmp_path / "far.py"
    path.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("TILEC_DEBUG", "TRITON_DEBUG", "PYTHONFAULTHANDLER")}
    r = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode in (-signal.SIGSEGV, -signal.SIGBUS), (r.returncode, r.stdout, r.stderr)
    assert "survived" not in r.stdout
    assert "Fatal Python error: Segmentation fault" in r.stderr or "Bus error" in r.stderr
    assert f'File "{path}", line 11 in <module>' in r.stderr  # the user's launch line
    assert "in far_read" in r.stderr  # the launch's own frame names the kernel
    with_debug = subprocess.run([sys.executable, str(path)], env=dict(env, TILEC_DEBUG="1"), capture_output=True,
                                text=True, timeout=300)
    assert with_debug.returncode == 1 and "BoundsError" in with_debug.stderr and "far.py:7" in with_debug.stderr
