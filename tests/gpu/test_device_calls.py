"""``@jit(noinline=True)`` helpers are device functions on CUDA: a ``.func`` in the PTX and a ``call`` where the
kernel uses them, tiles crossing in the layout call-boundaries fixes, their shared memory placed after their
callers' (barriers order successive calls), ``maxnreg`` on the entry only. Debug builds inline them (the checks
live in the kernel's frame)."""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from gpu_helpers import ARCHS, HAVE_PTXAS, compile_jit, device_arch, to_device
from ptx_alignment import check_kernel


@tilec.jit(noinline=True)
def scale_and_sum(x, s):
    y = x * s
    return y, tl.sum(y, axis=0)


@tilec.jit(noinline=True)
def store_at(P, v):
    tl.store(P, v)


@tilec.jit(noinline=True)
def row_max(x):  # a 2-d tile in, a 1-d tile out (a slice layout inside, a boundary layout across the call)
    return tl.max(x, axis=1)


@tilec.jit
def caller(X, Y, Z, M, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o, mask=o < n, other=0)
    y, s = scale_and_sum(x, 3.0)
    y2, s2 = scale_and_sum(y, 0.5)
    tl.store(Y + o, y2, mask=o < n)
    store_at(Z, s + s2 + tl.max(x, axis=0))
    r = tl.arange(0, 16)
    c = tl.arange(0, 64)
    tile = tl.load(X + r[:, None] * 64 + c[None, :])
    acc = tl.zeros((16,), tl.float32)
    for i in range(3):  # a call inside a loop, its result carried
        acc += row_max(tile + i)
    tl.store(M + r, acc)


def _compile(arch, options=None):
    x = np.zeros(1024, np.float32)
    return compile_jit(caller, [x, x, x, x, 1000], arch, options, BLOCK=1024)


@pytest.mark.parametrize("arch", ARCHS)
def test_noinline_helpers_are_device_functions(arch):
    k = _compile(arch)
    ptx = k.asm["ptx"]
    names = re.findall(r"^\.func\s+(?:\([^)]*\)\s*)?(\w+)\(", ptx, re.M)
    assert {n.rstrip("_0123456789") for n in names} == {"scale_and_sum", "store_at", "row_max"}
    assert len(re.findall(r"call\.uni", ptx)) >= 4 and ".entry caller" in ptx  # the loop of 3 may be unrolled
    assert check_kernel(k) == []
    if HAVE_PTXAS:
        assert k.asm["cubin"][:4] == b"\x7fELF"


def test_callee_shared_memory_follows_the_callers():
    k = _compile(90)
    gir = k.asm["gir"]
    bases = [int(b) for b in re.findall(r"smem_base = (\d+)", gir)]
    kernel_own = int(re.search(r"func @caller\(.*shared = (\d+)", gir).group(1))
    assert bases and min(bases) > 0 and k.metadata["shared"] == kernel_own
    assert all(b % 16 == 0 for b in bases)
    body = gir[gir.index("func @caller"):]
    calls = [m.start() for m in re.finditer(r"= call|^\s*call", body, re.M)]
    assert len(calls) >= 2 and "barrier" in body[calls[0]:calls[1]]  # the second call reuses the bytes


def test_maxnreg_only_on_the_entry():
    ptx = _compile(90, {"maxnreg": 48}).asm["ptx"]
    assert re.search(r"\.visible \.entry [^{;]*\.maxnreg 48", ptx)
    assert not re.search(r"\.func [^{;]*\.maxnreg", ptx) and ".func" in ptx


def test_debug_builds_inline_them():
    k = _compile(90, {"debug": True})
    assert ".func" not in k.asm["ptx"] and not re.search(r"(= |^\s*)call ", k.asm["gir"], re.M)


def test_results_on_the_cpu_are_unchanged():
    x = np.arange(1024, dtype=np.float32)
    y, z, m = np.zeros_like(x), np.zeros(2, np.float32), np.zeros(16, np.float32)
    caller[(1,)](x, y, z, m, 1000, BLOCK=1024)
    _check(x, y, z, m)


def _check(x, y, z, m):
    v = x[:1000]
    np.testing.assert_allclose(y[:1000], v * 1.5, rtol=1e-6)
    np.testing.assert_allclose(z[0], 3 * v.sum() + 1.5 * v.sum() + v.max(), rtol=1e-5)
    np.testing.assert_allclose(m, 3 * x.reshape(16, 64).max(axis=1) + 3, rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_device_calls_run(num_warps):
    x = np.arange(1024, dtype=np.float32)
    dev = to_device([x, np.zeros_like(x), np.zeros(2, np.float32), np.zeros(16, np.float32)])
    caller[(1,)](dev[0], dev[1], dev[2], dev[3], 1000, BLOCK=1024, num_warps=num_warps,
                 target=tilec.Target("cuda", device_arch(), 32))
    _check(x, dev[1].numpy(), dev[2].numpy(), dev[3].numpy())
