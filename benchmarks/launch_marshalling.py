"""GPU launch overhead on the host: microseconds per launch spent writing a kernel's arguments into its parameter
cells (``write``) and on the whole Python side of a launch (``launch``: arguments, device and stream, the driver's
launch call answered at once), for the CUDA and the AMD launcher alike.

No GPU is needed: the drivers are the test suite's stand-ins (``tests/gpu/fake_cuda.py``, ``tests/hip/fake_hip.py``)
with their launch call replaced by one that returns success, so what is timed is tilec's own work per launch.

    python benchmarks/launch_marshalling.py [--repeat 15] [--number 20000]

Each figure is the median over repeats of the mean over ``--number`` launches, timed in the thread's own CPU time
(``time.thread_time``): what a launch costs the host, which other processes on a shared machine do not inflate as
they do wall-clock time; ``--wall`` times the wall clock instead."""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import timeit

import pytest

import tilec
import tilec.language as tl
from tilec.compiler import ASTSource

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, os.pardir, "tests", "gpu"), os.path.join(HERE, os.pardir, "tests", "hip")]
import fake_cuda  # noqa: E402
import fake_hip  # noqa: E402


@tilec.jit
def mixed(out, x, n, a, h, big, BLOCK: tl.constexpr):
    """Parameters of the usual kinds: two pointers, i32, f32, f16 (converted on the host) and i64."""
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs, mask=offs < n) * a + h.to(tl.float32) + big.to(tl.float32)
    tl.store(out + offs, v, mask=offs < n)


SIGNATURE = "*fp32,*fp32,i32,fp32,fp16,i64"


def launcher_for(target):
    k = tilec.compile(ASTSource(mixed, signature=SIGNATURE, constexprs={"BLOCK": 128}), target=target)
    return k.launcher


def cuda_case(mp):
    fake_cuda.install(mp, fake_cuda.FakeCuda(devices=1))
    from tilec.targets.cuda import driver
    driver._state["raw_launch_ex"] = lambda config, fn, argv, extra: 0  # cuLaunchKernelEx, as on a real driver
    driver.context(0)
    return launcher_for(tilec.Target("cuda", 90, 32)), fake_cuda.DeviceArray


def hip_case(mp):
    fake = fake_hip.install(mp, fake_hip.FakeHip())
    success = (fake_hip.hipError_t.hipSuccess,)
    fake.hipModuleLaunchKernel = lambda *args: success
    return launcher_for(tilec.Target("hip", "gfx942", 64)), fake_hip.DeviceArray


def timed(fn, number: int, repeat: int, timer) -> float:
    fn()
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat, timer=timer)) / number * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--number", type=int, default=20000)
    ap.add_argument("--wall", action="store_true", help="time the wall clock, not this thread's CPU time")
    a = ap.parse_args(argv)
    timer = time.perf_counter if a.wall else time.thread_time
    rows = []
    for name, case in (("cuda", cuda_case), ("hip", hip_case)):
        with pytest.MonkeyPatch.context() as mp:
            launcher, Array = case(mp)
            out, x = Array(0x10000), Array(0x20000)
            args = [out, x, 100, 1.5, 0.25, 2**40]
            grid = (4, 1, 1)
            launcher(grid, args)
            rows.append((name, timed(lambda: launcher.write(args), a.number, a.repeat, timer),
                         timed(lambda: launcher(grid, args), a.number, a.repeat, timer)))
    print(f"{'launcher':<10}{'write us':>10}{'launch us':>11}")
    for name, write, launch in rows:
        print(f"{name:<10}{write:>10.3f}{launch:>11.3f}")


if __name__ == "__main__":
    main()
