"""Tiled matmul with tl.dot: fp32, or fp16 inputs with fp32 accumulation; grouped program order for reuse."""
import numpy as np

import tilec
import tilec.language as tl
from common import bench, device, empty, strides, to_device, to_numpy


@tilec.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a, b, out_dtype=np.float32, block_m=64, block_n=64, block_k=32, group_m=8):
    M, K = a.shape
    _, N = b.shape
    c = empty((M, N), out_dtype, like=a)
    s = strides
    grid = lambda meta: (tilec.cdiv(M, meta["BLOCK_M"]) * tilec.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    matmul_kernel[grid](a, b, c, M, N, K, *s(a), *s(b), *s(c),
                        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m)
    return c


def main(m=333, n=517, k=259, timing=True, size=1024):
    dev = device()
    rng = np.random.default_rng(0)
    # fp32 dots default to tf32 tensor cores on GPUs, as in Triton: about 1e-3 relative error there
    for dt, tol in ((np.float32, 1e-4 if dev == "cpu" else 5e-3), (np.float16, 2e-2)):
        a = rng.standard_normal((m, k)).astype(dt)
        b = rng.standard_normal((k, n)).astype(dt)
        c = to_numpy(matmul(to_device(a, dev), to_device(b, dev)))
        ref = a.astype(np.float64) @ b.astype(np.float64)
        err = np.linalg.norm(c - ref) / np.linalg.norm(ref)
        assert err < tol, f"{np.dtype(dt).name}: relative error {err}"
        print(f"matmul {m}x{k} @ {k}x{n} {np.dtype(dt).name} on {dev}: ok (rel err {err:.1e})")
    if timing:
        a = rng.standard_normal((size, size)).astype(np.float32)
        b = rng.standard_normal((size, size)).astype(np.float32)
        ad, bd = to_device(a, dev), to_device(b, dev)
        t = bench(lambda: matmul(ad, bd), repeat=5, dev=dev)
        tn = bench(lambda: a @ b, repeat=5)
        fl = 2 * size ** 3
        print(f"  {size}^3 fp32: tilec {t * 1e3:8.2f} ms ({fl / t / 1e9:6.1f} GFLOP/s)   "
              f"numpy {tn * 1e3:8.2f} ms ({fl / tn / 1e9:6.1f} GFLOP/s)")


if __name__ == "__main__":
    main()
