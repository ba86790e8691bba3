"""A dot's result cast to 8 bits and fed straight into the next dot (attention's ``p @ v`` in fp8, an int8 chain):
the accumulator's registers become the A operand by lane shuffles (``gpu/lowering/byte_operands.py``). Exact
against numpy on integer data, for fp8 (both formats) and int8, over tile shapes and warp counts, on the sm_90
path (warpgroup instructions, fp8 native) and the Ampere one (``mma.sync``). Needs a GPU (``-m gpu``)."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.ir import types as T
from tilec.ir.numerics import round_to

pytestmark = pytest.mark.gpu


@tilec.jit
def chained(q, k, v, o, M, KIND: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """o = cast(q @ k^T) @ v for one BM-row block; M rows (a mask on the last block)."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    d, n = tl.arange(0, D), tl.arange(0, BN)
    qt = tl.load(q + rows[:, None] * D + d[None, :], mask=rows[:, None] < M, other=0)
    kt = tl.load(k + n[:, None] * D + d[None, :])
    vt = tl.load(v + n[:, None] * D + d[None, :])
    s = tl.dot(qt, tl.trans(kt))
    if KIND == 0:
        p = s.to(tl.float8e5)
    elif KIND == 1:
        p = s.to(tl.float8e4nv)
    else:
        p = (s >> 2).to(tl.int8)
    acc = tl.dot(p, vt)
    tl.store(o + rows[:, None] * D + d[None, :], acc, mask=rows[:, None] < M)


KINDS = {0: ("f8e5m2", T.f8e5m2), 1: ("f8e4m3", T.f8e4m3), 2: ("int8", None)}


def _reference(qv, kv, vv, kind):
    s = qv.astype(np.int64) @ kv.astype(np.int64).T
    if kind == 2:
        p = (s >> 2).astype(np.int8).astype(np.int64)  # wraps, as the cast does
        return p @ vv.astype(np.int64)
    p = round_to(s.astype(np.float32), KINDS[kind][1], "rtne").astype(np.float64)
    return p @ vv.astype(np.float64)


@pytest.mark.parametrize("arch", [None, 80])
@pytest.mark.parametrize("kind", sorted(KINDS), ids=lambda k: KINDS[k][0])
@pytest.mark.parametrize("BM,BN,D,nw", [(64, 64, 64, 4), (128, 64, 32, 4), (128, 128, 64, 8), (64, 32, 128, 4)])
def test_chained_byte_dot(kind, BM, BN, D, nw, arch, monkeypatch):
    torch = pytest.importorskip("torch")
    if arch is not None:
        monkeypatch.setenv("TILEC_CUDA_ARCH", str(arch))
    rng = np.random.default_rng(BM * 7 + BN + D + kind)
    M = 3 * BM - 5
    if kind == 2:
        qv, kv = (rng.integers(-4, 5, s).astype(np.int8) for s in ((M, D), (BN, D)))
        vv = rng.integers(-3, 4, (BN, D)).astype(np.int8)
        q, k, v = (torch.from_numpy(x).cuda() for x in (qv, kv, vv))
        out = torch.zeros((M, D), dtype=torch.int32, device="cuda")
    else:
        qv, kv = (rng.integers(-2, 3, s).astype(np.float16) for s in ((M, D), (BN, D)))
        vv = rng.integers(-1, 2, (BN, D)).astype(np.float32)
        fp8 = torch.float8_e5m2 if kind == 0 else torch.float8_e4m3fn
        q, k = torch.from_numpy(qv).cuda(), torch.from_numpy(kv).cuda()
        v = torch.from_numpy(vv).cuda().to(fp8)
        out = torch.zeros((M, D), dtype=torch.float32, device="cuda")
    chained[(tilec.cdiv(M, BM),)](q, k, v, out, M, KIND=kind, BM=BM, BN=BN, D=D, num_warps=nw)
    want = _reference(qv, kv, vv, kind)
    got = out.cpu().numpy()
    bad = np.argwhere(got != want)
    assert not len(bad), f"{len(bad)} wrong, first at {tuple(bad[0])}: {got[tuple(bad[0])]} vs {want[tuple(bad[0])]}"
