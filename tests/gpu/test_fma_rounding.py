"""``tl.fma`` on the GPU rounds once for every float type, as the evaluator does (``tests/ir/test_fma.py``). bf16
lives in f32 registers, where an f32 fma and the rounding to bf16 would round twice: its fma is rounded to odd in
f32 first (``codegen/fma.py``, f64 arithmetic, no f32 fma); f16, f32 and f64 are the hardware's ``fma.rn``.
Compiled for sm_80 and sm_90 here; the GPU-marked test compares with the interpreter on a device."""
import re

import numpy as np
import pytest

import tilec

from fma_cases import DTYPES, MIDPOINTS, fma_kernel
from gpu_helpers import ARCHS, HAVE_PTXAS


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dt", list(DTYPES))
def test_fma_instructions(dt, arch):
    src = tilec.ASTSource(fma_kernel, "*fp64,*fp64,*fp64,*fp64", constexprs={"DT": DTYPES[dt], "B": 64})
    ptx = tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": 1}).asm["ptx"]
    if dt == "bf16":
        assert not re.search(r"\bfma\.rn\.(f32|bf16)", ptx) and re.search(r"\b(add|fma)\.rn\.f64", ptx)
    else:
        assert re.search(rf"\bfma\.rn\.{dt}\b", ptx)
    if HAVE_PTXAS:
        assert tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": 1}).asm["cubin"][:4] == b"\x7fELF"


@pytest.mark.gpu
@pytest.mark.parametrize("dt", list(DTYPES))
def test_fma_rounds_once_on_the_device(dt):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    n = 64
    x, y, z, want = MIDPOINTS[dt]
    a = np.concatenate([[x, -x, 2.0, np.inf, 0.0], rng.standard_normal(n - 5) * 3])
    b = np.concatenate([[y, y, 3.0, 0.0, -1.0], rng.standard_normal(n - 5) * 3])
    c = np.concatenate([[z, -z, -6.0, 1.0, -0.0], rng.standard_normal(n - 5) * 3])
    ref = np.zeros(n)
    tilec.jit(fma_kernel.fn, interpret=True)[(1,)](a, b, c, ref, DT=DTYPES[dt], B=n)
    dev = [torch.from_numpy(v).cuda() for v in (a, b, c)]
    out = torch.zeros(n, dtype=torch.float64, device="cuda")
    fma_kernel[(1,)](*dev, out, DT=DTYPES[dt], B=n, enable_fp_fusion=False)
    got = out.cpu().numpy()
    assert got[0] == want and got[1] == -want
    np.testing.assert_array_equal(got, ref)
    num = ~np.isnan(ref)  # a NaN's sign bit is the hardware's (x86 sets it, NVIDIA does not)
    assert np.array_equal(np.signbit(got[num]), np.signbit(ref[num]))
