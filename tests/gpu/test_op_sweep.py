"""Every elementwise op and cast on every element type: compiles for sm_80/sm_90 (ptxas-checked) and, on a GPU,
agrees with the reference evaluator (the IR's meaning) on random inputs, including zero divisors, oversized
shifts, out-of-range float->int casts, NaN and infinities."""
import numpy as np
import pytest

from tilec.ir.evaluator import run_kernel
from tilec.ir.types import bf16, f16, f32, f64, i8, i16, i32, i64, u8, u32, u64

import gpu_ir_kernels as K
from gpu_helpers import ARCHS, compile_ir, device_arch, to_device

ELEMS = [i8, i16, i32, i64, u8, u32, u64, f16, bf16, f32, f64]
CAST_TYPES = [i8, i32, i64, u8, u32, f16, bf16, f32, f64]
BLOCK = 128
# approximate rows (relative error bound, with an absolute floor for results near 0)
APPROX = {"exp": 2e-6, "exp2": 2e-6, "log": 2e-6, "log2": 2e-6, "rsqrt": 2e-6, "sin": 2e-6, "cos": 2e-6,
          "tan": 1e-5, "tanh": 2e-6, "erf": 2e-6, "log1p": 2e-6, "expm1": 2e-6, "sigmoid": 2e-6, "pow": 1e-5,
          "atan2": 2e-6, "fdiv": 2.4e-7}  # fdiv: div.full.f32 on NVIDIA, within 2 ulp (as Triton compiles /)


def _inputs(elem, rng):
    n = BLOCK
    if elem.is_float:
        x = rng.standard_normal(n) * 4
        y = rng.standard_normal(n) * 4
        x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]
        y[6:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0]
        x[12:16] = np.abs(x[12:16])  # some valid pow bases
        dt = np.float32 if elem in (bf16,) else elem.numpy
        x, y = x.astype(dt), y.astype(dt)
        if elem == bf16:  # values exactly representable in bf16
            x = (x.view(np.uint32) & 0xFFFF0000).view(np.float32)
            y = (y.view(np.uint32) & 0xFFFF0000).view(np.float32)
        return x, y
    info = np.iinfo(elem.numpy)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    x = rng.integers(lo, hi, n, endpoint=True, dtype=elem.numpy)
    y = rng.integers(lo, hi, n, endpoint=True, dtype=elem.numpy)
    y[:8] = 0
    x[8], y[8] = info.min, -1 if info.min < 0 else 1
    y[16:32] = rng.integers(0, min(hi, elem.bits + 8), 16, dtype=elem.numpy)  # shift amounts, some >= width
    x[32:40] = rng.integers(info.min, info.max, 8, endpoint=True, dtype=elem.numpy)
    return x, y


def _host(a, elem):
    """A numpy array in the memory format of ``elem`` (bf16 as its 16-bit patterns)."""
    if elem == bf16:
        return (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return a


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("elem", ELEMS, ids=str)
def test_sweep_compiles(elem, arch):
    k = compile_ir(K.make_op_sweep(elem), arch)
    assert "ptx" in k.asm


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("src", CAST_TYPES, ids=str)
def test_casts_compile(src, arch):
    compile_ir(K.make_cast_sweep(src, CAST_TYPES), arch)


def _compare(name, got, exp, elem):
    if elem.is_float:
        got, exp = got.astype(np.float64), exp.astype(np.float64)
        nan = np.isnan(exp)
        assert np.array_equal(np.isnan(got), nan), f"{name}: NaN positions differ"
        g, e = got[~nan], exp[~nan]
        tol = APPROX.get(name, 0)
        if elem in (f16, bf16) and tol:
            tol = 4e-3 if elem == f16 else 2e-2
        if tol == 0:
            assert np.array_equal(g, e), f"{name}: {g[g != e][:5]} != {e[g != e][:5]}"
        else:
            inf = np.isinf(e)
            assert np.array_equal(g[inf], e[inf]), f"{name}: infinities differ"
            err = np.abs(g[~inf] - e[~inf]) / np.maximum(np.abs(e[~inf]), 1e-6)
            assert err.max(initial=0) <= tol, f"{name}: max relative error {err.max():.3g}"
    else:
        assert np.array_equal(got, exp), f"{name}: {got[got != exp][:5]} != {exp[got != exp][:5]}"


@pytest.mark.gpu
@pytest.mark.parametrize("elem", ELEMS, ids=str)
def test_sweep_matches_evaluator(elem):
    rows = K.sweep_rows(elem)
    m = K.make_op_sweep(elem)
    x, y = _inputs(elem, np.random.default_rng(7))
    hx, hy = _host(x, elem), _host(y, elem)
    out_ref = np.zeros(len(rows) * BLOCK, hx.dtype)
    run_kernel(m, f"sweep_{elem}", [hx.copy(), hy.copy(), out_ref], (1,))
    k = compile_ir(K.make_op_sweep(elem), device_arch())
    dev = to_device([hx, hy, np.zeros_like(out_ref)])
    k.run((1, 1, 1), dev)
    got = dev[2].numpy()
    as_val = (lambda a: (a.astype(np.uint32) << 16).view(np.float32)) if elem == bf16 else (lambda a: a)
    failures = []
    for i, name in enumerate(rows):
        try:
            _compare(name, as_val(got[i * BLOCK:(i + 1) * BLOCK]), as_val(out_ref[i * BLOCK:(i + 1) * BLOCK]), elem)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


@pytest.mark.gpu
@pytest.mark.parametrize("src", CAST_TYPES, ids=str)
def test_casts_match_evaluator(src):
    m = K.make_cast_sweep(src, CAST_TYPES)
    rng = np.random.default_rng(11)
    x, _ = _inputs(src, rng)
    if src.is_float:
        x[16:24] = np.array([1e10, -1e10, 300.7, -300.7, 65504 * 2, 2.5, -2.5, 0.5], dtype=x.dtype) \
            if src != f16 else np.array([60000, -60000, 300.7, -300.7, 255.9, 2.5, -2.5, 0.5], dtype=x.dtype)
    hx = _host(x, src)
    outs = [np.zeros(BLOCK, np.uint16 if d == bf16 else d.numpy) for d in CAST_TYPES]
    ref = [o.copy() for o in outs]
    run_kernel(m, f"casts_{src}", [hx.copy()] + ref, (1,))
    k = compile_ir(K.make_cast_sweep(src, CAST_TYPES), device_arch())
    dev = to_device([hx] + outs)
    k.run((1, 1, 1), dev)
    failures = []
    for d, r, g in zip(CAST_TYPES, ref, dev[1:]):
        got = g.numpy()
        if not np.array_equal(got.view(np.uint8), r.view(np.uint8)):
            bad = np.nonzero(got.view(np.uint8).reshape(BLOCK, -1).any(1) != 0)[0]
            diff = np.nonzero((got != r) & ~(np.isnan(got.astype(np.float64)) & np.isnan(r.astype(np.float64))))[0]
            if len(diff):
                failures.append(f"{src}->{d}: x={x[diff[:4]]} got {got[diff[:4]]} want {r[diff[:4]]}")
            del bad
    assert not failures, "\n".join(failures)
