"""tl.dot_scaled (microscaling formats, software-emulated) against a numpy decoding of the same codes."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch, rng

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def e4m3_table():
    out = []
    for c in range(256):
        sgn, e, m = c >> 7, (c >> 3) & 15, c & 7
        v = np.nan if (e == 15 and m == 7) else (m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
        out.append(-v if sgn else v)
    return np.array(out)


@tilec.jit
def scaled_kernel(A, SA, B, SB, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, KA: tl.constexpr,
                  KB: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr):
    a = tl.load(A + tl.arange(0, M)[:, None] * KA + tl.arange(0, KA)[None, :])
    b = tl.load(B + tl.arange(0, KB)[:, None] * N + tl.arange(0, N)[None, :])
    G: tl.constexpr = K // 32
    sa = tl.load(SA + tl.arange(0, M)[:, None] * G + tl.arange(0, G)[None, :])
    sb = tl.load(SB + tl.arange(0, N)[:, None] * G + tl.arange(0, G)[None, :])
    tl.store(Z + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], tl.dot_scaled(a, sa, FA, b, sb, FB))


@pytest.mark.parametrize("fa,fb", [("e2m1", "e2m1"), ("e4m3", "e2m1"), ("e4m3", "e4m3"), ("fp16", "e2m1")])
def test_dot_scaled(mode, fa, fb):
    r = rng(95)
    m, n, k = 16, 16, 64
    t8 = e4m3_table()

    def operand(fmt, rows, cols, k_axis):
        if fmt == "e2m1":
            codes = r.integers(0, 16, (rows, cols))
            vals = E2M1[codes]
            lo, hi = (codes[:, 0::2], codes[:, 1::2]) if k_axis == 1 else (codes[0::2, :], codes[1::2, :])
            return (lo | (hi << 4)).astype(np.uint8), vals
        if fmt == "e4m3":
            codes = r.integers(0, 256, (rows, cols))
            codes[np.isnan(t8[codes])] = 0
            return codes.astype(np.uint8), t8[codes]
        x = r.standard_normal((rows, cols)).astype(np.float16)
        return x, x.astype(np.float64)

    a, av = operand(fa, m, k, 1)
    b, bv = operand(fb, k, n, 0)
    sa = r.integers(120, 134, (m, k // 32)).astype(np.uint8)
    sb = r.integers(120, 134, (n, k // 32)).astype(np.uint8)
    ka = a.shape[1]
    kb = b.shape[0]
    z = np.zeros((m, n), np.float32)
    launch(scaled_kernel, (1,), mode, a, sa, b, sb, z, M=m, N=n, K=k, KA=ka, KB=kb, FA=fa, FB=fb)
    fa_ = 2.0 ** (np.repeat(sa.astype(np.float64), 32, 1) - 127)
    fb_ = 2.0 ** (np.repeat(sb.astype(np.float64), 32, 1) - 127).T
    want = (av * fa_) @ (bv * fb_)
    np.testing.assert_allclose(z, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
