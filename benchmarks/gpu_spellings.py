"""Tensor cores for every spelling: the same matmul and attention written each way a kernel author writes them
(``spelling_cases.py``: transposed operands, ``x @ W.T``, fp8, int8, tf32, epilogues, block pointers, persistent
loops, descriptors, batched 3-d dots, grouped GEMM, attention with ``tl.trans(k)`` / ``k.T``), compiled by tilec
and by Triton from one source and run on one GPU in one run. Every result is checked against torch first
(float64 references; int8 exactly), then timed (``triton.testing.do_bench``, median); the table gives TFLOP/s
(TOP/s for int8), tilec / Triton, and each compiler's registers and spill bytes.

    PYTHONPATH=. python benchmarks/gpu_spellings.py [--only NAME ...] [--sm80] [--csv FILE]

Without a GPU, ``tc_codegen.py`` compiles the same cases and compares the code.
"""
import argparse
import math
import os
import sys
import tempfile

import torch
import torch.nn.functional as F
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
sys.path.insert(0, HERE)
from kernel_loading import load_kernels  # noqa: E402
from spelling_cases import CASES  # noqa: E402

DTYPES = {"*fp16": torch.float16, "*bf16": torch.bfloat16, "*fp32": torch.float32, "*fp8e4nv": torch.float8_e4m3fn,
          "*i8": torch.int8, "*i32": torch.int32}


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e-3


def _scratch(size, alignment, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


def _rand(shape, dt, g):
    if dt == torch.int8:
        return torch.randint(-8, 8, shape, device="cuda", generator=g, dtype=torch.int8)
    x = torch.randn(shape, device="cuda", generator=g, dtype=torch.float32)
    return x.to(dt)


def _value(K, v):
    return getattr(K.tl, v[1]) if isinstance(v, tuple) and v[0] == "tl" else v


def matmul_problem(case, g):
    """(make_run(K), check(), flops) for the matmul_kernel family."""
    p = case.problem
    M, N, Kd = p["M"], p["N"], p["K"]
    dt = DTYPES[p.get("dt", "*fp16")]
    a = _rand((M, Kd), dt, g)
    b = _rand((Kd, N), dt, g)
    a_arg = a.t().contiguous() if p.get("trans_a") else a          # A^T stored [K, M]
    b_arg = b.t().contiguous() if p.get("trans_b") else b          # W stored [N, K]
    out_dt = DTYPES[p.get("out", "*fp16")]
    c = torch.empty((M, N), device="cuda", dtype=out_dt)
    bias = torch.randn(N, device="cuda", generator=g, dtype=torch.float16)
    ref = a.double() @ b.double()
    if p.get("epilogue"):
        ref = ref + bias.double()[None, :]
        ref = torch.where(ref >= 0, ref, 0.01 * ref)
    cx = case.constexprs
    sa = (a_arg.stride(1), a_arg.stride(0)) if p.get("trans_a") else (a_arg.stride(0), a_arg.stride(1))
    sb = (b_arg.stride(1), b_arg.stride(0)) if p.get("trans_b") else (b_arg.stride(0), b_arg.stride(1))
    grid = (triton.cdiv(M, cx["BLOCK_M"]) * triton.cdiv(N, cx["BLOCK_N"]),)

    def make_run(K):
        kw = {n: _value(K, v) for n, v in cx.items()}
        args = dict(a_ptr=a_arg, b_ptr=b_arg, c_ptr=c, bias_ptr=bias, M=M, N=N, K=Kd, stride_am=sa[0],
                    stride_ak=sa[1], stride_bk=sb[0], stride_bn=sb[1], stride_cm=c.stride(0), stride_cn=c.stride(1))
        args.update(kw)
        return lambda: K.matmul_kernel[grid](**args, num_warps=case.num_warps, num_stages=case.num_stages)
    return make_run, c, ref, 2 * M * N * Kd


def plain_problem(case, g, kernel):
    p = case.problem
    M, N, Kd = p["M"], p["N"], p["K"]
    a = _rand((M, Kd), torch.float16, g)
    b = _rand((Kd, N), torch.float16, g)
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    ref = a.double() @ b.double()
    cx = case.constexprs
    b_arg = b.t().contiguous() if p.get("trans_b") else b
    grid = (cx.get("NUM_SMS") or triton.cdiv(M, cx["BLOCK_M"]) * triton.cdiv(N, cx["BLOCK_N"]),)

    def make_run(K):
        fn = getattr(K, kernel)
        if kernel == "desc_matmul_kernel":
            args = (a, b_arg, c, M, N, Kd)
        else:
            args = (a, b, c, M, N, Kd, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        kw = {n: v for n, v in cx.items() if n not in ("stride_ak", "stride_bn", "stride_cn")}
        return lambda: fn[grid](*args, **kw, num_warps=case.num_warps, num_stages=case.num_stages)
    return make_run, c, ref, 2 * M * N * Kd


def batched_problem(case, g):
    p = case.problem
    Bt, M, N, Kd = p["batch"], p["M"], p["N"], p["K"]
    a = _rand((Bt, M, Kd), torch.float16, g)
    b = _rand((Bt, Kd, N), torch.float16, g)
    c = torch.empty((Bt, M, N), device="cuda", dtype=torch.float16)
    ref = a.double() @ b.double()
    cx = case.constexprs
    grid = (Bt // cx["BATCH_TILE"], M // cx["BLOCK_M"], N // cx["BLOCK_N"])

    def make_run(K):
        kw = {n: v for n, v in cx.items() if n.isupper()}
        return lambda: K.batched_matmul_kernel[grid](a, b, c, M, N, Kd, a.stride(0), a.stride(1), a.stride(2),
                                                     b.stride(0), b.stride(1), b.stride(2), c.stride(0),
                                                     c.stride(1), c.stride(2), **kw, num_warps=case.num_warps,
                                                     num_stages=case.num_stages)
    return make_run, c, ref, 2 * Bt * M * N * Kd


def grouped_problem(case, g):
    """Several GEMMs in one launch: their operands' addresses, sizes and leading dimensions in device arrays; the
    outputs are views of one buffer, so that one check covers them all."""
    sizes = case.problem["sizes"]
    As = [_rand((m, k), torch.float16, g) for m, n, k in sizes]
    Bs = [_rand((k, n), torch.float16, g) for m, n, k in sizes]
    out = torch.empty(sum(m * n for m, n, _ in sizes), device="cuda", dtype=torch.float16)
    starts = [sum(m * n for m, n, _ in sizes[:i]) for i in range(len(sizes))]
    Cs = [out[s:s + m * n].view(m, n) for s, (m, n, _) in zip(starts, sizes)]
    ref = torch.cat([(a.double() @ b.double()).flatten() for a, b in zip(As, Bs)])

    def on_device(values, dt):
        return torch.tensor(values, device="cuda", dtype=dt)
    ptrs = [on_device([x.data_ptr() for x in xs], torch.int64) for xs in (As, Bs, Cs)]
    dims = on_device([v for s in sizes for v in s], torch.int32)
    lds = on_device([v for m, n, k in sizes for v in (k, n, n)], torch.int32)
    cx = case.constexprs

    def make_run(K):
        return lambda: K.grouped_matmul_kernel[(cx["NUM_SMS"],)](*ptrs, dims, lds, len(sizes), **cx,
                                                                  num_warps=case.num_warps,
                                                                  num_stages=case.num_stages)
    return make_run, out, ref, sum(2 * m * n * k for m, n, k in sizes)


def attention_problem(case, g):
    p = case.problem
    B, H, S, D, causal = p["B"], p["H"], p["S"], p["D"], p["causal"]
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    o = torch.empty_like(q)
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=bool(causal)).double()
    cx = case.constexprs
    grid = (triton.cdiv(S, cx["BLOCK_M"]), B * H)

    def make_run(K):
        return lambda: K.attn_fwd_kernel[grid](q, k, v, o, 1.0 / math.sqrt(D), q.stride(1), q.stride(2), S, **cx,
                                               num_warps=case.num_warps, num_stages=case.num_stages)
    return make_run, o, ref, 4 * B * H * S * S * D * (0.5 if causal else 1.0)


def attention_bwd_problem(case, g):
    """dK and dV of attention (non-causal) from the forward's log-sum-exp and delta = rowsum(O * dO), checked
    against torch's autograd in float64; the output checked is dK and dV side by side."""
    p = case.problem
    B, H, S, D = p["B"], p["H"], p["S"], p["D"]
    q, k, v, do = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(4))
    scale = 1.0 / math.sqrt(D)
    qd, kd, vd = (x.double().requires_grad_() for x in (q, k, v))
    s = (qd @ kd.transpose(-1, -2)) * scale
    o = torch.softmax(s, -1) @ vd
    o.backward(do.double())
    lse = (torch.logsumexp(s, -1) * 1.4426950408889634).float().detach().contiguous()
    delta = (o * do.double()).sum(-1).float().detach().contiguous()
    ref = torch.cat([kd.grad, vd.grad], -1)
    dkv = torch.empty(B, H, S, 2 * D, device="cuda", dtype=torch.float16)
    dk, dv = dkv[..., :D], dkv[..., D:]
    dk_c, dv_c = torch.empty_like(q), torch.empty_like(q)
    cx = case.constexprs
    grid = (triton.cdiv(S, cx["BLOCK_N"]), B * H)

    class Out:  # the checked output: both gradients
        dtype = torch.float16

        @staticmethod
        def fill_(x):
            dk_c.fill_(x)
            dv_c.fill_(x)

        @staticmethod
        def double():
            dk.copy_(dk_c)
            dv.copy_(dv_c)
            return dkv.double()

    def make_run(K):
        return lambda: K.attn_bwd_dkdv_kernel[grid](q, k, v, do, dk_c, dv_c, lse, delta, scale, q.stride(1),
                                                    q.stride(2), S, **cx, num_warps=case.num_warps,
                                                    num_stages=case.num_stages)
    return make_run, Out, ref, 4 * 2 * B * H * S * S * D


def problem(case, g):
    if case.kernel == "attn_bwd_dkdv_kernel":
        return attention_bwd_problem(case, g)
    if case.kernel == "matmul_kernel":
        return matmul_problem(case, g)
    if case.kernel == "attn_fwd_kernel":
        return attention_problem(case, g)
    if case.kernel == "batched_matmul_kernel":
        return batched_problem(case, g)
    if case.kernel == "grouped_matmul_kernel":
        return grouped_problem(case, g)
    return plain_problem(case, g, case.kernel)


def check(out, ref, exact):
    """Relative error of ``out`` against the float64 reference (0 required for integer results)."""
    o = out.double()
    if exact:
        return 0.0 if torch.equal(o, ref) else float("inf")
    err = (torch.linalg.vector_norm(o - ref) / torch.linalg.vector_norm(ref)).item()
    return err if not math.isnan(err) else float("inf")


def run_case(case, Ks, g):
    make_run, out, ref, flops = problem(case, g)
    exact = out.dtype == torch.int32
    tol = 3e-3 if case.problem.get("dt", "*fp16") in ("*fp32",) else 2e-2
    row = {"name": case.name}
    for side, K in zip(("tilec", "triton"), Ks):
        try:
            run = make_run(K)
            out.fill_(0 if exact else float("nan"))
            h = run()
            torch.cuda.synchronize()
            err = check(out, ref, exact)
            if err > tol:
                row[side] = f"WRONG (rel. error {err:.2e})"
                continue
            t = bench(run)
            row[side] = flops / t / 1e12
            row[side + "_res"] = f"{getattr(h, 'n_regs', -1)}/{getattr(h, 'n_spills', -1)}"
        except Exception as e:  # one spelling failing must not hide the others
            row[side] = f"FAILED {type(e).__name__}: {str(e).splitlines()[0][:80] if str(e) else ''}"
    return row


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append")
    ap.add_argument("--sm80", action="store_true", help="compile tilec for the Ampere path (TILEC_CUDA_ARCH=80)")
    ap.add_argument("--csv")
    ap.add_argument("--exact", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--isolate", action="store_true",
                    help="each spelling in a process of its own (a faulting kernel spoils only its own row)")
    a = ap.parse_args(argv)
    if a.isolate:
        return isolated(a)
    if a.sm80:
        os.environ["TILEC_CUDA_ARCH"] = "80"
    os.environ.setdefault("TILEC_CACHE_DIR", tempfile.mkdtemp(prefix="tc-bench-"))
    import tilec
    triton.set_allocator(_scratch)
    tilec.set_allocator(_scratch)
    g = torch.Generator(device="cuda").manual_seed(0)
    Ks = (load_kernels(True, "gpu_spelling_kernels.py"), load_kernels(False, "gpu_spelling_kernels.py"))
    rows = []
    for case in CASES:
        if a.exact and case.name != a.exact or a.only and not any(o in case.name for o in a.only):
            continue
        rows.append(run_case(case, Ks, g))
        r = rows[-1]
        if a.json:
            import json
            print(json.dumps(r))
            return
        print(f"  {r['name']}: {r.get('tilec')} / {r.get('triton')}", file=sys.stderr, flush=True)
    report(rows, a)


def report(rows, a):
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; tilec path "
          f"{'sm_80 (TILEC_CUDA_ARCH=80)' if a.sm80 else 'native'}")
    print(f"{'spelling':<30}{'tilec':>9}{'triton':>9}{'ratio':>8}  {'regs/spill tilec':>17}{'triton':>9}")
    ratios = []
    for r in rows:
        t, tr = r.get("tilec"), r.get("triton")
        if isinstance(t, float) and isinstance(tr, float):
            ratios.append(t / tr)
            print(f"{r['name']:<30}{t:>9.1f}{tr:>9.1f}{t / tr:>7.2f}x  {r['tilec_res']:>17}{r['triton_res']:>9}")
        else:
            f = lambda x: f"{x:9.1f}" if isinstance(x, float) else f" {x}"  # noqa: E731
            print(f"{r['name']:<30}{f(t)}{f(tr)}")
    if ratios:
        ratios.sort()
        print(f"tilec/triton: min {ratios[0]:.2f}x, median {ratios[len(ratios) // 2]:.2f}x over {len(ratios)} rows")
    if a.csv:
        with open(a.csv, "w") as fh:
            for r in rows:
                fh.write(",".join(str(r.get(k, "")) for k in ("name", "tilec", "triton", "tilec_res",
                                                               "triton_res")) + "\n")


def isolated(a):
    """Run every selected spelling in its own process (``--exact``), then print the table from their rows."""
    import json
    import subprocess
    rows = []
    for case in CASES:
        if a.only and not any(o in case.name for o in a.only):
            continue
        cmd = [sys.executable, __file__, "--exact", case.name, "--json"] + (["--sm80"] if a.sm80 else [])
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        line = next((x for x in p.stdout.splitlines() if x.startswith("{")), None)
        if line is None:
            err = (p.stderr.strip().splitlines() or ["no output"])[-1]
            rows.append({"name": case.name, "tilec": f"FAILED {err[:80]}", "triton": ""})
        else:
            rows.append(json.loads(line))
        print(f"  {case.name}: {rows[-1].get('tilec')} / {rows[-1].get('triton')}", file=sys.stderr, flush=True)
    report(rows, a)


if __name__ == "__main__":
    main()
