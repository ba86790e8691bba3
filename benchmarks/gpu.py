"""GPU benchmark: tilec vs Triton vs torch on one GPU in one run; prints a table (and writes it as CSV to $OUT).

    PYTHONPATH=. python benchmarks/gpu.py [--quick]

The kernels live once in ``gpu_kernels.py`` (Triton spelling); that file is loaded with the real Triton and again
with ``tilec.compat`` installed, so both compilers compile identical source with identical block sizes and
num_warps. Times are medians of ``triton.testing.do_bench`` (CUDA events, L2 flushed between runs); GB/s counts
each byte read once and each byte written once. Also: cold compile time (empty caches, first launch until the
result is on the device) and warm launch overhead (1000 launches of a 1-program kernel, host time per launch).
"""
import argparse
import os
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
import tilec  # noqa: E402
from tilec import compat  # noqa: E402,F401
from kernel_loading import load_kernels  # noqa: E402,F401

def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e-3


def cases(q):
    """(name, bytes moved, make_runner(kernels) -> fn, torch fn, check(kernels))"""
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)
    out = []

    n = 1 << (22 if q else 26)
    x, y = torch.rand(n, device=dev, generator=g), torch.rand(n, device=dev, generator=g)
    z = torch.empty_like(x)
    out.append((f"add fp32 2^{n.bit_length() - 1}", 12 * n,
                lambda K: lambda: K.add_kernel[(triton.cdiv(n, 1024),)](x, y, z, n, BLOCK=1024, num_warps=4),
                lambda: torch.add(x, y, out=z), lambda: torch.testing.assert_close(z, x + y)))

    for cols in ((1024,) if q else (1024, 4096, 16384)):
        rows = 4096
        a = torch.randn(rows, cols, device=dev, generator=g)
        b = torch.empty_like(a)
        blk = triton.next_power_of_2(cols)
        nw = 4 if blk <= 2048 else 8 if blk <= 4096 else 16
        out.append((f"softmax fp32 4096x{cols}", 8 * rows * cols,
                    lambda K, a=a, b=b, cols=cols, blk=blk, nw=nw, rows=rows: lambda: K.softmax_kernel[(rows,)](
                        b, a, a.stride(0), b.stride(0), cols, BLOCK=blk, num_warps=nw),
                    lambda a=a: torch.softmax(a, dim=1),
                    lambda a=a, b=b: torch.testing.assert_close(b, torch.softmax(a, 1))))

    rows, cols = (1024, 8192) if q else (4096, 8192)
    xl = torch.randn(rows, cols, device=dev, generator=g, dtype=torch.float16)
    w = torch.rand(cols, device=dev, generator=g, dtype=torch.float16)
    bb = torch.rand(cols, device=dev, generator=g, dtype=torch.float16)
    yl = torch.empty_like(xl)
    mean = torch.empty(rows, device=dev)
    rstd = torch.empty(rows, device=dev)
    out.append((f"layer norm fp16 {rows}x{cols}", 4 * rows * cols,
                lambda K: lambda: K.layer_norm_kernel[(rows,)](xl, yl, w, bb, mean, rstd, xl.stride(0), cols, 1e-5,
                                                               BLOCK=8192, num_warps=8),
                lambda: F.layer_norm(xl, (cols,), w, bb, 1e-5),
                lambda: torch.testing.assert_close(yl, F.layer_norm(xl, (cols,), w, bb, 1e-5), atol=2e-2,
                                                   rtol=1e-2)))

    yr = torch.empty_like(xl)
    out.append((f"rms norm fp16 {rows}x{cols}", 4 * rows * cols,
                lambda K: lambda: K.rms_norm_kernel[(rows,)](xl, yr, w, xl.stride(0), cols, 1e-6, BLOCK=8192,
                                                             num_warps=8),
                lambda: F.rms_norm(xl, (cols,), w, 1e-6),
                lambda: torch.testing.assert_close(yr, F.rms_norm(xl.float(), (cols,), w.float(), 1e-6).half(),
                                                   atol=2e-2, rtol=1e-2)))

    rows, vocab = (1024, 32768) if q else (4096, 32768)
    logits = torch.randn(rows, vocab, device=dev, generator=g)
    tgt = torch.randint(0, vocab, (rows,), device=dev, generator=g)
    loss = torch.empty(rows, device=dev)
    out.append((f"cross entropy fp32 {rows}x{vocab}", 4 * rows * vocab,
                lambda K: lambda: K.cross_entropy_fwd_kernel[(rows,)](logits, tgt, loss, logits.stride(0), vocab,
                                                                      BLOCK=4096, num_warps=8),
                lambda: F.cross_entropy(logits, tgt, reduction="none"),
                lambda: torch.testing.assert_close(loss, F.cross_entropy(logits, tgt, reduction="none"),
                                                   atol=1e-4, rtol=1e-4)))
    return out


def cold_compile(use_tilec, name, make):
    """Seconds from the first launch of a freshly loaded kernel (empty caches) until its result is ready."""
    d = tempfile.mkdtemp(prefix="bench-cache-")
    os.environ["TILEC_CACHE_DIR" if use_tilec else "TRITON_CACHE_DIR"] = d
    K = load_kernels(use_tilec)
    fn = make(K)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def launch_overhead(K, n=1000):
    x = torch.rand(16, device="cuda")
    y = torch.empty_like(x)
    run = lambda: K.add_kernel[(1,)](x, x, y, 16, BLOCK=16, num_warps=1)  # noqa: E731
    for _ in range(10):
        run()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        run()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    q = ap.parse_args().quick
    props = torch.cuda.get_device_properties(0)
    big = torch.empty(1 << 28, device="cuda")
    copy_s = bench(lambda: big.clone())
    copy_bw = 2 * big.numel() * 4 / copy_s / 1e9
    del big
    rows = []
    for name, nbytes, make, torch_fn, check in cases(q):
        cc_tl = cold_compile(True, name, make)
        cc_tr = cold_compile(False, name, make)
        res = {}
        for who in ("tilec", "triton"):
            K = load_kernels(who == "tilec")
            fn = make(K)
            fn()
            try:
                check()
                ok = "ok"
            except AssertionError as e:
                ok = "WRONG"
                print(f"{name} {who}: {str(e).splitlines()[0]}")
            res[who] = (bench(fn), ok)
        tt = bench(torch_fn)
        rows.append((name, nbytes, res["tilec"], res["triton"], tt, cc_tl, cc_tr))

    oh_tl = launch_overhead(load_kernels(True))
    oh_tr = launch_overhead(load_kernels(False))

    print(f"\n{props.name}, torch {torch.__version__}, triton {triton.__version__}, tilec {tilec.__version__}; "
          f"copy bandwidth {copy_bw:.0f} GB/s (device-to-device clone, read + write)")
    head = (f"{'kernel':30} {'tilec GB/s':>10} {'triton GB/s':>11} {'torch GB/s':>10} {'tilec/triton':>12} "
            f"{'tilec/copy':>10} {'cold tilec s':>12} {'cold triton s':>13}")
    print(head)
    lines = []
    for name, nb, (t1, ok1), (t2, ok2), t3, c1, c2 in rows:
        g1, g2, g3 = nb / t1 / 1e9, nb / t2 / 1e9, nb / t3 / 1e9
        flag = "" if ok1 == ok2 == "ok" else f"  [tilec {ok1}, triton {ok2}]"
        print(f"{name:30} {g1:10.0f} {g2:11.0f} {g3:10.0f} {g1 / g2:11.2f}x {g1 / copy_bw:9.0%} {c1:12.2f} "
              f"{c2:13.2f}{flag}")
        lines.append(f"{name},{g1:.1f},{g2:.1f},{g3:.1f},{c1:.3f},{c2:.3f},{ok1},{ok2}")
    print(f"launch overhead (1-program kernel, host µs per launch): tilec {oh_tl * 1e6:.1f}, "
          f"triton {oh_tr * 1e6:.1f}")
    outdir = os.environ.get("OUT")
    if outdir:
        with open(os.path.join(outdir, "gpu_bench.csv"), "w") as f:
            f.write("kernel,tilec_gbps,triton_gbps,torch_gbps,cold_tilec_s,cold_triton_s,tilec_ok,triton_ok\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
