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


def test_bf16_unary_ops_on_codes():
    """bf16 lives as 16-bit codes in CPU registers: neg/abs flip/clear the sign bit, the rest compute in f32."""
    import numpy as np
    import tilec
    import tilec.language as tl

    @tilec.jit
    def ops(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m).to(tl.bfloat16, bitcast=True)
        res = (-x, tl.abs(x), tl.maximum(x, -x * 0.5), tl.where(x > 0, x, tl.full((BLOCK,), 1.5, tl.bfloat16)))
        for i in tl.static_range(4):
            tl.store(out_ptr + i * n + offs, res[i].to(tl.uint16, bitcast=True), mask=m)

    rng = np.random.default_rng(7)
    f = rng.standard_normal(37).astype(np.float32)
    f[:3] = [0.0, -0.0, np.inf]
    bits = (f.view(np.uint32) >> 16).astype(np.uint16)
    out = np.zeros((4, 37), np.uint16)
    ops[(1,)](bits, out, 37, BLOCK=64)
    x = (bits.astype(np.uint32) << 16).view(np.float32)
    got = (out.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(out[0], bits ^ 0x8000)
    np.testing.assert_array_equal(out[1], bits & 0x7FFF)
    np.testing.assert_array_equal(got[2], np.maximum(x, -x * 0.5))  # exact in bf16 (halving)
    np.testing.assert_array_equal(got[3], np.where(x > 0, x, 1.5))


def test_bf16_scan_constants_and_int_casts():
    """bf16 codes in combine regions (constants encoded as codes), int -> bf16 and bf16 -> bool casts."""
    import numpy as np
    import tilec
    import tilec.language as tl

    @tilec.jit
    def roll(a1, b1_last, b1_cur, a2, b2_last, b2_cur):
        return a1 + a2, tl.where(a2 == 1, b1_cur, 0) + b2_last, b2_cur

    @tilec.jit
    def k(X, Z, C, BM: tl.constexpr, BN: tl.constexpr):
        rm, rn = tl.arange(0, BM), tl.arange(0, BN)
        x = tl.load(X + rm[:, None] * BN + rn[None, :]).to(tl.bfloat16, bitcast=True)
        _, z, _ = tl.associative_scan((1 + 0 * x, 0 * x, x), axis=1, combine_fn=roll)
        tl.store(Z + rm[:, None] * BN + rn[None, :], z.to(tl.uint16, bitcast=True))
        cnt = (rm[:, None] * BN + rn[None, :]).to(tl.bfloat16) + (x != 0).to(tl.bfloat16)
        tl.store(C + rm[:, None] * BN + rn[None, :], cnt.to(tl.uint16, bitcast=True))

    r = np.random.default_rng(8)
    f = np.round(r.standard_normal((8, 16)) * 4).astype(np.float32)
    bits = (f.view(np.uint32) >> 16).astype(np.uint16)
    z, c = np.zeros_like(bits), np.zeros_like(bits)
    k[(1,)](bits, z, c, BM=8, BN=16)
    got = (z.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got, np.concatenate([np.zeros((8, 1), np.float32), f[:, :-1]], axis=1))
    idx = np.arange(128, dtype=np.float32).reshape(8, 16) + (f != 0)
    np.testing.assert_array_equal((c.astype(np.uint32) << 16).view(np.float32), idx)  # exact below 256
