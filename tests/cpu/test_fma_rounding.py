"""Compiled ``tl.fma`` rounds once for every float type, as the evaluator does (``tests/ir/test_fma.py``): f16 and
bf16 are computed in f32, where a plain f32 fma rounds twice (``codegen/fma.py`` rounds to odd first)."""
import numpy as np
import pytest

import tilec

from fma_cases import DTYPES, MIDPOINTS, fma_kernel


def _run(dt, a, b, c, interpret):
    out = np.zeros(len(a), np.float64)
    tilec.jit(fma_kernel.fn, interpret=interpret)[(1,)](a, b, c, out, DT=DTYPES[dt], B=len(a))
    return out


@pytest.mark.parametrize("dt", list(DTYPES))
def test_fma_rounds_once(dt):
    rng = np.random.default_rng(3)
    n = 64
    x, y, z, want = MIDPOINTS[dt]
    a = np.concatenate([[x, -x, x, 2.0, np.inf, 0.0], rng.standard_normal(n - 6) * 3])
    b = np.concatenate([[y, y, y, 3.0, 0.0, -1.0], rng.standard_normal(n - 6) * 3])
    c = np.concatenate([[z, -z, -z, -6.0, 1.0, -0.0], rng.standard_normal(n - 6) * 3])
    if dt != "f64":  # operands of the format (the casts in the kernel round them alike in both modes)
        a, b, c = (np.asarray(_run(dt, v, np.ones(n), np.full(n, -0.0), True)) for v in (a, b, c))
    got = _run(dt, a, b, c, False)
    assert got[0] == want and got[1] == -want  # ties broken by the addend's sign, not to even
    np.testing.assert_array_equal(got, _run(dt, a, b, c, True))
    assert np.signbit(got[3]) == False and np.isnan(got[4]) and np.signbit(got[5])  # noqa: E712
