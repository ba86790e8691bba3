"""Kernels the autotuning benchmarks tune, in a module of their own so that compile workers can import them."""
import tilec
import tilec.language as tl
from tilec.runtime.autotuner import Config


@tilec.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


CONFIGS = [Config({"BM": bm, "BN": bn, "BK": bk}) for bm in (32, 64) for bn in (32, 64) for bk in (32, 64)]
tuned_matmul = tilec.autotune(CONFIGS, key=["M", "N", "K"], warmup=1, rep=5)(matmul)
