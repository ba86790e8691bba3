"""Ctrl-C stops a running CPU launch: a SIGINT during a long grid raises KeyboardInterrupt within a fraction of a
second, whichever way the grid runs (a first launch measured on one thread, helpers, an inline launch whose
estimate was far too short), the helpers stop too, and later launches run normally on the same threads."""
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    import numpy as np, tilec, tilec.language as tl

    @tilec.jit
    def slow(x_ptr, out_ptr, iters, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        acc = x
        for i in range(iters):
            acc = acc * 0.5 + x
        tl.store(out_ptr + offs, acc)

    case = sys.argv[1]
    programs = 20000
    x = np.random.default_rng(0).random(programs * 16).astype(np.float32)
    out = np.full_like(x, np.nan)
    # compiled first (one program: nothing measured); then, but for the first case, measured on a short loop: its
    # estimate is far too short for a long one
    slow[(1,)](x, out, 3, BLOCK=16)
    if case != "first":
        slow[(programs,)](x, out, 3, BLOCK=16)
        slow[(programs,)](x, out, 3, BLOCK=16)
    idle = threading.active_count()
    sent = []

    def interrupt():
        time.sleep(0.5)
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    out[:] = np.nan
    grid = (programs,) if case != "inline" else (128,)
    iters = 200_001 if case != "inline" else 5_000_001  # (not multiples of 16: the same specialisation)
    try:
        slow[grid](x, out, iters, BLOCK=16)
        print("finished")
    except KeyboardInterrupt:
        late = time.perf_counter() - sent[0]
        print(f"interrupted {late:.3f} {int(np.isnan(out).sum())}")
    time.sleep(0.1)
    out[:] = np.nan
    slow[(programs,)](x, out, 3, BLOCK=16)
    want = x
    for _ in range(3):
        want = want * np.float32(0.5) + x
    assert np.allclose(out, want), "a launch after the interrupt went wrong"
    print("threads", idle, threading.active_count())
""")


@pytest.mark.parametrize("case", ["first", "helpers", "inline"])
def test_sigint_stops_a_long_launch(case, tmp_path):
    path = tmp_path / "slow.py"
    path.write_text(SCRIPT)
    env = dict(os.environ, TILEC_NUM_THREADS="2")
    r = subprocess.run([sys.executable, str(path), case], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    word, late, unfinished = lines[0].split()
    assert word == "interrupted", r.stdout
    assert float(late) < 0.5, f"KeyboardInterrupt came {late} s after SIGINT"
    assert 0 < int(unfinished) < 320000 or case == "inline"  # stopped after it had begun, not run to its end
    _, idle, after = lines[1].split()
    assert int(after) <= max(int(idle), 2)  # the helper pool only (one helper for two threads): nothing leaked
