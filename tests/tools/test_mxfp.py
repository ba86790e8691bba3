"""tilec.tools.mxfp (triton.tools.mxfp): e2m1 and e8m0 codes from floats and back, the packing tl.dot_scaled
reads, and a block-scaled product through the compatibility layer against torch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tilec  # noqa: E402
import tilec.language as tl  # noqa: E402
from tilec.tools.mxfp import E2M1_VALUES, MXFP4Tensor, MXScaleTensor  # noqa: E402


def test_every_e2m1_code_round_trips():
    values = torch.tensor(E2M1_VALUES + tuple(-v for v in E2M1_VALUES))
    t = MXFP4Tensor(data=values)
    assert t.data.tolist() == list(range(16))
    assert torch.equal(t.to(torch.float32), values) and torch.equal(torch.signbit(t.to(torch.float32)),
                                                                    torch.signbit(values))


def test_e2m1_rounds_to_nearest_ties_to_even_and_saturates():
    x = torch.tensor([0.2, 0.25, 0.3, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.1, 7.0, 1e9, -0.75, -1e9, float("inf")])
    got = MXFP4Tensor(data=x).to(torch.float32).tolist()
    assert got == [0.0, 0.0, 0.5, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 6.0, 6.0, 6.0, -1.0, -6.0, 6.0]
    with pytest.raises(ValueError, match="NaN"):
        MXFP4Tensor(data=torch.tensor([float("nan")]))


def test_packing_puts_the_first_of_each_pair_in_the_low_nibble():
    t = MXFP4Tensor(data=torch.tensor([[0.5, 6.0, -1.0], [1.0, 2.0, 3.0]]))  # codes [[1, 7, 10], [2, 4, 5]]
    assert t.to_packed_tensor(dim=1).tolist() == [[0x71, 0x0A], [0x42, 0x05]]
    assert t.to_packed_tensor(dim=0).tolist() == [[0x21, 0x47, 0x5A]]
    assert t.to_packed_tensor(dim=1).dtype == torch.uint8
    r = MXFP4Tensor(size=(64, 32)).random()
    assert r.data.max() < 16 and len(r.data.unique()) == 16


def test_scales_are_powers_of_two():
    s = MXScaleTensor(data=torch.tensor([1.0, 0.5, 3.0, 1e-30, 1e30, 0.7]))
    assert s.data.tolist() == [127, 126, 129, 27, 227, 126]
    assert s.to(torch.float32).tolist() == [1.0, 0.5, 4.0, 2.0 ** -100, 2.0 ** 100, 0.5]
    assert MXScaleTensor(size=(2,)).to(torch.float32).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="<= 0"):
        MXScaleTensor(data=torch.tensor([0.0]))


@tilec.jit
def _mx_dot(A, SA, B, SB, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = tl.load(A + tl.arange(0, M)[:, None] * (K // 2) + tl.arange(0, K // 2)[None, :])
    b = tl.load(B + tl.arange(0, K // 2)[:, None] * N + tl.arange(0, N)[None, :])
    sa = tl.load(SA + tl.arange(0, M)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    sb = tl.load(SB + tl.arange(0, N)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    tl.store(Z + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :],
             tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1"))


def test_dot_scaled_reads_the_packed_bytes():
    """The bytes the helpers make are what tl.dot_scaled takes: its product equals torch's on the decoded values."""
    torch.manual_seed(0)
    m, n, k = 16, 16, 64
    a, b = MXFP4Tensor(size=(m, k)).random(), MXFP4Tensor(size=(k, n)).random()
    sa = MXScaleTensor(data=torch.rand(m, k // 32) * 4 + 0.1)
    sb = MXScaleTensor(data=torch.rand(n, k // 32) * 4 + 0.1)
    z = np.zeros((m, n), np.float32)
    _mx_dot[(1,)](a.to_packed_tensor(dim=1).numpy(), sa.data.numpy(), b.to_packed_tensor(dim=0).numpy(),
                  sb.data.numpy(), z, M=m, N=n, K=k)
    want = (a.to(torch.float32) * sa.to(torch.float32).repeat_interleave(32, 1)) @ \
        (b.to(torch.float32) * sb.to(torch.float32).repeat_interleave(32, 1).T)
    np.testing.assert_allclose(z, want.numpy(), rtol=1e-5, atol=1e-5)
