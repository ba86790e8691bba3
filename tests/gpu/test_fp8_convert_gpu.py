"""f32 -> fp8 on the device: the conversion instruction of sm_89+ (``targets/cuda/fp8_convert.py``) stores the same
codes as the evaluator for every code's value, the ties between neighbours, values just off them, overflow,
subnormals, infinities and NaN; and the Ampere path (the integer encoding) the same. Needs a GPU (``-m gpu``)."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.ir import types as T
from tilec.ir.numerics import encode, round_to

from test_scalar_casts import FP8, _fp8_inputs

pytestmark = pytest.mark.gpu


@tilec.jit
def to_fp8(x, codes, n, E5M2: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + o, mask=o < n)
    y = v.to(tl.float8e5) if E5M2 else v.to(tl.float8e4nv)
    tl.store(codes + o, y.to(tl.uint8, bitcast=True), mask=o < n)


@pytest.mark.parametrize("block", [256, 4096])  # 2 values per thread; 32, where one test guards the fix-ups
@pytest.mark.parametrize("arch", [None, 80])
@pytest.mark.parametrize("e", FP8, ids=str)
def test_device_fp8_codes_are_the_evaluators(e, arch, block, monkeypatch):
    from tilec.targets.cuda import array as cuda
    if arch is not None:
        monkeypatch.setenv("TILEC_CUDA_ARCH", str(arch))
    xs = np.ascontiguousarray(_fp8_inputs(e, np.float32))
    x, out = cuda.from_numpy(xs), cuda.from_numpy(np.zeros(len(xs), np.uint8))
    to_fp8[(tilec.cdiv(len(xs), block),)](x, out, len(xs), E5M2=e == T.f8e5m2, BLOCK=block)
    got = out.numpy()
    want = encode(round_to(xs, e, "rtne"), e)
    bad = np.nonzero(got != want)[0]
    assert not len(bad), [(float(xs[i]), int(got[i]), int(want[i])) for i in bad[:8]]
