"""Timing of matmul (tensor cores) plus vector add and softmax, tilec vs Triton, on the first CUDA device (run by hand; prints a table).

    PYTHONPATH=. python benchmarks/gpu_matmul.py

Both sides run the same algorithm with the same block sizes and num_warps; times are medians from
triton.testing.do_bench (CUDA events); GB/s counts bytes read + written once.
"""
import os
import sys

import torch
import triton
import triton.language as ttl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "gpu"))
import tilec  # noqa: E402
from gpu_jit_kernels import add_kernel, softmax_kernel  # noqa: E402


@triton.jit
def triton_add(x_ptr, y_ptr, out_ptr, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    mask = offs < n
    ttl.store(out_ptr + offs, ttl.load(x_ptr + offs, mask=mask) + ttl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def triton_softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: ttl.constexpr):
    row = ttl.program_id(0)
    offs = ttl.arange(0, BLOCK)
    mask = offs < n_cols
    x = ttl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x = x - ttl.max(x, axis=0)
    num = ttl.exp(x)
    ttl.store(out_ptr + row * out_stride + offs, num / ttl.sum(num, axis=0), mask=mask)


@triton.jit
def triton_matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr):
    pm = ttl.program_id(0)
    pn = ttl.program_id(1)
    rm = pm * BM + ttl.arange(0, BM)
    rn = pn * BN + ttl.arange(0, BN)
    rk = ttl.arange(0, BK)
    acc = ttl.zeros((BM, BN), dtype=ttl.float32)
    for k0 in range(0, K, BK):
        a = ttl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                     mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = ttl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                     mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += ttl.dot(a, b)
    ttl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def main():
    cap = torch.cuda.get_device_capability()
    tgt = tilec.Target("cuda", cap[0] * 10 + cap[1], 32)
    rows = []
    bench = lambda f: triton.testing.do_bench(f, warmup=50, rep=300, return_mode="median")  # noqa: E731
    for n in (1 << 20, 1 << 26, 100_000_003 // 4):
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        o1, o2 = torch.empty_like(x), torch.empty_like(x)
        g = (triton.cdiv(n, 1024),)
        f1 = lambda: add_kernel[g](x, y, o1, n, BLOCK=1024, target=tgt)  # noqa: E731
        f2 = lambda: triton_add[g](x, y, o2, n, BLOCK=1024)  # noqa: E731
        f1(), f2()
        torch.cuda.synchronize()
        assert torch.equal(o1, x + y) and torch.equal(o2, x + y)
        t1, t2 = bench(f1), bench(f2)
        gb = 3 * 4 * n / 1e9
        rows.append((f"vector add n={n}", t1, t2, gb / t1 * 1e3, gb / t2 * 1e3))
    for r, c in ((4096, 1024), (8192, 781), (32768, 512)):
        xx = torch.randn(r, c, device="cuda")
        o1, o2 = torch.empty_like(xx), torch.empty_like(xx)
        B = triton.next_power_of_2(c)
        f1 = lambda: softmax_kernel[(r,)](o1, xx, xx.stride(0), o1.stride(0), c, BLOCK=B, target=tgt)  # noqa: E731
        f2 = lambda: triton_softmax[(r,)](o2, xx, xx.stride(0), o2.stride(0), c, BLOCK=B)  # noqa: E731
        f1(), f2()
        torch.cuda.synchronize()
        ref = torch.softmax(xx, dim=1)
        assert torch.allclose(o1, ref, atol=1e-6, rtol=1e-4), (o1 - ref).abs().max()
        t1, t2 = bench(f1), bench(f2)
        gb = 2 * 4 * r * c / 1e9
        rows.append((f"softmax {r}x{c}", t1, t2, gb / t1 * 1e3, gb / t2 * 1e3))
    from gpu_jit_kernels import matmul_kernel
    for dt, (M, N, K), stages in ((torch.float16, (2048, 2048, 2048), 3), (torch.float16, (2048, 2048, 2048), 4),
                                  (torch.float32, (1024, 1024, 1024), 3)):
        a, b = torch.randn(M, K, device="cuda", dtype=dt), torch.randn(K, N, device="cuda", dtype=dt)
        c1, c2 = torch.empty(M, N, device="cuda"), torch.empty(M, N, device="cuda")
        g = (M // 64, N // 64)
        args = (a, b, c1, M, N, K, K, 1, N, 1, N, 1)
        f1 = lambda: matmul_kernel[g](*args, BM=64, BN=64, BK=32, num_stages=stages, target=tgt)  # noqa: E731
        f2 = lambda: triton_matmul[g](a, b, c2, M, N, K, K, 1, N, 1, N, 1, BM=64, BN=64, BK=32,  # noqa: E731
                                      **({"input_precision": "ieee"} if False else {}))
        f1(), f2()
        torch.cuda.synchronize()
        ref = (a.double() @ b.double()).float()
        err = ((c1 - ref).norm() / ref.norm()).item()
        assert err < 1e-3, err
        t1, t2 = bench(f1), bench(f2)
        fl = 2 * M * N * K / 1e12
        rows.append((f"matmul {str(dt)[6:]} {M}^3 st={stages} (TFLOP/s)", t1, t2, fl / t1 * 1e3, fl / t2 * 1e3))
    # launch overhead: a tiny kernel, host time per launch (no sync inside the loop)
    import time
    x, y = torch.randn(1024, device="cuda"), torch.randn(1024, device="cuda")
    o = torch.empty_like(x)
    compiled = add_kernel.warmup(x, y, o, 1024, BLOCK=1024, grid=(1,), target=tgt)
    args = [x, y, o, 1024]
    for name, f in (("tilec jit", lambda: add_kernel[(1,)](x, y, o, 1024, BLOCK=1024, target=tgt)),
                    ("tilec compiled.run", lambda: compiled.run((1, 1, 1), args)),
                    ("tilec launcher", lambda: compiled.launcher((1, 1, 1), args)),
                    ("triton", lambda: triton_add[(1,)](x, y, o, 1024, BLOCK=1024))):
        for _ in range(100):
            f()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(2000):
            f()
        torch.cuda.synchronize()
        rows.append((f"launch overhead {name} (us/launch)", (time.perf_counter() - t0) / 2000 * 1e6, 0, 0, 0))
    print(f"device: {torch.cuda.get_device_name()}  (times: median ms, do_bench)")
    print(f"{'case':<38}{'tilec ms':>10}{'triton ms':>11}{'tilec GB/s':>12}{'triton GB/s':>12}")
    for name, a, b, c, d in rows:
        print(f"{name:<38}{a:>10.4f}{b:>11.4f}{c:>12.1f}{d:>12.1f}")


if __name__ == "__main__":
    main()
