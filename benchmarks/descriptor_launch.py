"""Host time per call of a wrapper that makes its tensor descriptors on every call, as Triton's persistent-matmul
tutorial does (``matmul_tma``: a new output, three ``TensorDescriptor.from_tensor`` with a placeholder block
shape, an autotuned launch whose configs' ``pre_hook`` sets the block shapes), on the CPU path: the part of a GPU
launch that is tilec's Python (descriptor checks, the autotuner's dispatch, the binder's probes). On a GPU this
time decides whether ``do_bench`` of such a wrapper measures the kernel or the host (``docs/performance.md``).

    python benchmarks/descriptor_launch.py [--repeat 5]

Each figure is the minimum over repeats of the mean over many calls (the machine's noise only adds)."""
from __future__ import annotations

import argparse
import timeit

import numpy as np

import tilec
import tilec.language as tl
from tilec import TensorDescriptor


def _block_shapes(nargs):
    nargs["a_desc"].block_shape = [nargs["BM"], nargs["BK"]]
    nargs["b_desc"].block_shape = [nargs["BN"], nargs["BK"]]
    nargs["c_desc"].block_shape = [nargs["BM"], nargs["BN"]]


CONFIGS = [tilec.Config({"BM": 16, "BN": 16, "BK": bk}, num_warps=w, num_stages=s, pre_hook=_block_shapes)
           for bk in (16, 32) for w in (4, 8) for s in (2, 3, 4)]


@tilec.autotune(configs=CONFIGS, key=["M", "N", "K"])
@tilec.jit
def tiny(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """One block moved, so that the figures are the launch path's, not the kernel's."""
    a = a_desc.load([0, 0])
    c_desc.store([0, 0], tl.zeros((BM, BN), tl.float16) + tl.sum(a))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    M = N = K = 64
    rng = np.random.default_rng(0)
    a = rng.random((M, K)).astype(np.float16)
    b = rng.random((N, K)).astype(np.float16)

    def wrapper():
        c = np.empty((M, N), np.float16)
        descs = [TensorDescriptor.from_tensor(t, [1, 1]) for t in (a, b, c)]
        tiny[(1,)](*descs, M, N, K)
        return c

    c = wrapper()  # tunes (its configs compile) and checks the block it wrote
    want = np.float16(a[:16, :tiny.best_config.kwargs["BK"]].astype(np.float64).sum())  # the tuned block's sum
    np.testing.assert_allclose(c[:16, :16].astype(np.float32), np.full((16, 16), want, np.float32), rtol=1e-3)
    kept = [TensorDescriptor.from_tensor(t, [16, 16]) for t in (a, b, np.empty((M, N), np.float16))]

    def per_call(fn, number=2000):
        fn()
        return min(timeit.repeat(fn, number=number, repeat=args.repeat)) / number * 1e6

    rows = [("TensorDescriptor.from_tensor", per_call(lambda: TensorDescriptor.from_tensor(a, [1, 1]))),
            ("autotuned launch, descriptors kept", per_call(lambda: tiny[(1,)](*kept, M, N, K))),
            ("the wrapper (3 new descriptors + launch)", per_call(wrapper))]
    print(f"tilec {tilec.__version__}, CPU path, host time per call (us)")
    for name, us in rows:
        print(f"  {name:42s} {us:8.2f}")


if __name__ == "__main__":
    main()
