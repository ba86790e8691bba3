"""Float max/min on GPUs order -0.0 below +0.0 (IEEE 754-2019 maximumNumber/minimumNumber, as on every backend)
and stay one instruction each: the PTX of an elementwise max and a max-reduction has no compare-and-select
fix-up (attention's row maxima run through it). The GPU-marked test checks the signs on a device."""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl

from gpu_helpers import ARCHS, HAVE_PTXAS


@tilec.jit
def zero_signs(x_ptr, y_ptr, mx_ptr, mn_ptr, rmx_ptr, rmn_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    m = o < n
    x = tl.load(x_ptr + o, mask=m, other=1.0)
    y = tl.load(y_ptr + o, mask=m, other=1.0)
    tl.store(mx_ptr + o, tl.maximum(x, y), mask=m)
    tl.store(mn_ptr + o, tl.minimum(x, y), mask=m)
    tl.store(rmx_ptr, tl.max(tl.where(m, x, -1.0)))
    tl.store(rmn_ptr, tl.min(tl.where(m, y, 1.0)))


@pytest.mark.parametrize("arch", ARCHS)
def test_max_min_are_single_instructions(arch):
    src = tilec.ASTSource(zero_signs, "*fp32,*fp32,*fp32,*fp32,*fp32,*fp32,i32", constexprs={"B": 64})
    ck = tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": 1})
    ptx = ck.asm["ptx"]
    assert len(re.findall(r"\bmax\.f32", ptx)) >= 2 and len(re.findall(r"\bmin\.f32", ptx)) >= 2
    assert not re.search(r"setp\.(eq|equ)\.f32", ptx)  # the fix-up compared the operands for equality
    if HAVE_PTXAS:
        assert ck.asm["cubin"][:4] == b"\x7fELF"


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("n", [13, 37])
def test_zero_signs_on_the_device(dtype, n):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n)
    x = rng.choice(np.array([0.0, -0.0, 1.5, -2.0], dtype), n)
    y = np.where(rng.random(n) < 0.7, -x, rng.choice(np.array([0.0, -0.0], dtype), n)).astype(dtype)
    x[0], y[0] = -0.0, 0.0
    want_max = np.array([0.0 if a == b == 0 and not (np.signbit(a) and np.signbit(b)) else
                         (-0.0 if a == b == 0 else max(a, b)) for a, b in zip(x, y)], dtype)
    want_min = np.array([-0.0 if a == b == 0 and (np.signbit(a) or np.signbit(b)) else
                         (0.0 if a == b == 0 else min(a, b)) for a, b in zip(x, y)], dtype)
    xs = np.full(n, -0.0, dtype)
    xs[n // 2] = 0.0  # all -0.0 but one +0.0: the max is +0.0
    ys = np.zeros(n, dtype)
    ys[n - 1] = -0.0  # all +0.0 but one -0.0: the min is -0.0
    dev = lambda a: torch.from_numpy(a).cuda()
    for a, b, check in ((x, y, True), (xs, ys, False)):
        outs = [torch.zeros(n, dtype=getattr(torch, dtype), device="cuda") for _ in range(2)] + \
               [torch.zeros(1, dtype=getattr(torch, dtype), device="cuda") for _ in range(2)]
        zero_signs[(1,)](dev(a), dev(b), *outs, n, B=64)
        mx, mn, rmx, rmn = (o.cpu().numpy() for o in outs)
        if check:
            np.testing.assert_array_equal(np.signbit(mx), np.signbit(want_max))
            np.testing.assert_array_equal(mx, want_max)
            np.testing.assert_array_equal(np.signbit(mn), np.signbit(want_min))
            np.testing.assert_array_equal(mn, want_min)
        else:
            assert not np.signbit(rmx[0]) and rmx[0] == 0 and np.signbit(rmn[0]) and rmn[0] == 0
