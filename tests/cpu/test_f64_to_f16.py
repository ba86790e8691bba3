"""f64 -> f16 casts on the CPU go through f32 rounded to odd; values just off f16 rounding ties are where a plain
double rounding through f32 would pick the wrong neighbour."""
import numpy as np

import tilec
import tilec.language as tl


@tilec.jit
def narrow_kernel(X, Y, Z, N, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < N
    x = tl.load(X + o, mask=m)
    tl.store(Y + o, x.to(tl.float16), mask=m)
    tl.store(Z + o, x.to(tl.float16, fp_downcast_rounding="rtz"), mask=m)


def _same(a, b):
    return (a.view(np.uint16) == b.view(np.uint16)) | (np.isnan(a) & np.isnan(b))


def test_f64_to_f16_rounds_once():
    r = np.random.default_rng(0)
    base = r.standard_normal(1500).astype(np.float16).astype(np.float64)
    half_ulp = np.abs(np.spacing(base.astype(np.float16)).astype(np.float64)) / 2
    tiny = 2.0 ** -40 * np.abs(base)
    x = np.concatenate([base + half_ulp + tiny, base + half_ulp, base - half_ulp - tiny,
                        r.standard_normal(1500) * 2.0 ** r.integers(-30, 20, 1500),
                        [np.nan, np.inf, -np.inf, 1e300, -1e300, 65520.0, 65519.99, 5.96e-8, 2.9e-8, 3.0e-8]])
    y, z = np.zeros(x.size, np.float16), np.zeros(x.size, np.float16)
    narrow_kernel[(1,)](x, y, z, x.size, BLOCK=8192)
    with np.errstate(over="ignore"):
        ref = x.astype(np.float16)
    assert _same(y, ref).all()
    rz = ref.copy()
    over = (np.abs(ref.astype(np.float64)) > np.abs(x)) & np.isfinite(x)
    rz[over] = np.nextafter(rz[over], np.float16(0))
    assert _same(z, rz).all()
