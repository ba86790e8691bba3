"""Tensor-core benchmark: tilec vs Triton vs torch on one GPU in one run; prints a table.

    PYTHONPATH=. python benchmarks/gpu_tensorcores.py [--quick] [--sm80] [--only matmul|attention]
    (benchmarks/gpu_matmul.py and benchmarks/gpu_attention.py run one family each)

Kernels (one source, gpu_tc_kernels.py, compiled by Triton and by tilec through tilec.compat): the tutorial
matmul fp16 -> fp32 accumulate with grouped order, 128x128x64 tiles, 8 warps, 3 stages, at 4096^3 and 8192^3,
with pointers and with in-kernel tensor descriptors (the tensor copy engine on sm_90);
flash-attention forward fp16, B4 H32 S4096, D64 (BM128 BN64, 4 warps) and D128 (BM128 BN64, 8 warps), causal and
not (torch: scaled_dot_product_attention); on AMD GPUs the tiles and warps of tc_configs.py. ``--sm80`` compiles tilec for the Ampere path (TILEC_CUDA_ARCH=80).
Times are medians of triton.testing.do_bench; every result is checked against torch before it is timed.
"""
import argparse
import math
import os
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
sys.path.insert(0, HERE)
from gpu import load_kernels as _load  # noqa: E402
from tc_configs import configs  # noqa: E402


def load_kernels(use_tilec):
    return _load(use_tilec, "gpu_tc_kernels.py")


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e-3


def _device_configs():
    """This GPU's tile and warp choices (tc_configs.py): AMD's on ROCm, else NVIDIA's."""
    if getattr(torch.version, "hip", None):
        from tilec.targets.hip import driver
        return configs(driver.current_arch())
    return configs(None)


def matmul_runner(K, a, b, c):
    M, Kd = a.shape
    N = b.shape[1]
    cfg = _device_configs()["matmul"]
    grid = (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"]),)
    return lambda: K.matmul_kernel[grid](a, b, c, M, N, Kd, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                         c.stride(0), c.stride(1), GROUP_M=8, num_stages=3, **cfg)


def desc_matmul_runner(K, a, b, c):
    M, Kd = a.shape
    N = b.shape[1]
    cfg = _device_configs()["matmul"]
    grid = (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"]),)
    return lambda: K.desc_matmul_kernel[grid](a, b, c, M, N, Kd, GROUP_M=8, num_stages=3, **cfg)


def _scratch(size, alignment, stream):
    """Launch-time scratch for in-kernel tensor descriptors (both compilers ask for it)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def attn_runner(K, q, k, v, o, causal):
    B, H, S, D = q.shape
    cfg = _device_configs()["attention64" if D <= 64 else "attention128"]
    grid = (triton.cdiv(S, cfg["BLOCK_M"]), B * H)
    return lambda: K.attn_fwd_kernel[grid](q, k, v, o, 1.0 / math.sqrt(D), q.stride(1), q.stride(2), S,
                                           HEAD_DIM=D, CAUSAL=causal, num_stages=3, **cfg)


def time_both(kernels, make_run, ref, out, atol, rtol):
    """[TFLOP-time, cold seconds] per compiler: the first launch (compiling) timed, its result checked, then
    the median time."""
    row = []
    for K in kernels:
        out.fill_(float("nan"))
        run = make_run(K)
        t0 = time.perf_counter()
        run()
        torch.cuda.synchronize()
        cold = time.perf_counter() - t0
        torch.testing.assert_close(out, ref, atol=atol, rtol=rtol)
        row += [bench(run), cold]
    return row


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sm80", action="store_true")
    ap.add_argument("--only", choices=("matmul", "attention"), help="one family (gpu_matmul.py, gpu_attention.py)")
    a = ap.parse_args(argv)
    if a.sm80:
        os.environ["TILEC_CUDA_ARCH"] = "80"
    os.environ["TILEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tc-bench-")
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)
    Ktl, Ktr = load_kernels(True), load_kernels(False)
    triton.set_allocator(_scratch)
    import tilec
    tilec.set_allocator(_scratch)
    rows = []

    sizes = (2048,) if a.quick else (4096, 8192)
    for n in sizes if a.only != "attention" else ():
        x = torch.randn(n, n, device=dev, dtype=torch.float16, generator=g)
        y = torch.randn(n, n, device=dev, dtype=torch.float16, generator=g)
        ref = x @ y
        flops = 2 * n ** 3
        c = torch.empty_like(ref)
        t = time_both((Ktl, Ktr), lambda K: matmul_runner(K, x, y, c), ref, c, 1e-1, 2e-2)
        torch_tf = flops / bench(lambda: torch.matmul(x, y)) / 1e12
        rows.append([f"matmul fp16 {n}^3", flops / t[0] / 1e12, t[1], flops / t[2] / 1e12, t[3], torch_tf])
        t = time_both((Ktl, Ktr), lambda K: desc_matmul_runner(K, x, y, c), ref, c, 1e-1, 2e-2)
        rows.append([f"  descriptors {n}^3", flops / t[0] / 1e12, t[1], flops / t[2] / 1e12, t[3], torch_tf])

    B, H, S = (1, 8, 1024) if a.quick else (4, 32, 4096)
    for D in (64, 128) if a.only != "matmul" else ():
        q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=torch.float16, generator=g) for _ in range(3))
        for causal in (False, True):
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            flops = 4 * B * H * S * S * D * (0.5 if causal else 1.0)
            o = torch.empty_like(q)
            t = time_both((Ktl, Ktr), lambda K: attn_runner(K, q, k, v, o, causal), ref, o, 2e-2, 2e-2)
            torch_t = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            rows.append([f"attention fwd D{D}{' causal' if causal else ''}", flops / t[0] / 1e12, t[1],
                         flops / t[2] / 1e12, t[3], flops / torch_t / 1e12])

    name = torch.cuda.get_device_name()
    print(f"{name}, torch {torch.__version__}, triton {triton.__version__}; tilec path "
          f"{'sm_80 (TILEC_CUDA_ARCH=80)' if a.sm80 else 'native'}")
    print(f"{'kernel':<28}{'tilec TF/s':>11}{'triton TF/s':>12}{'torch TF/s':>11}{'tilec/triton':>13}"
          f"{'cold tilec s':>13}{'cold triton s':>14}")
    for r in rows:
        print(f"{r[0]:<28}{r[1]:>11.1f}{r[3]:>12.1f}{r[5]:>11.1f}{r[1] / r[3]:>12.2f}x{r[2]:>13.2f}{r[4]:>14.2f}")


if __name__ == "__main__":
    main()
