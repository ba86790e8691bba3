"""Both compilers' Ampere code paths on a newer GPU, beside their native paths, in one run; prints a table.

    PYTHONPATH=. python benchmarks/gpu_ampere_paths.py

The tutorial matmul (benchmarks/gpu_tc_kernels.py, 128x128x64, 8 warps, 3 stages) at 4096^3 and 8192^3:
Triton and tilec natively, tilec's sm_80 path (TILEC_CUDA_ARCH=80: cp.async, ldmatrix, mma.sync), and
Triton's: compiled for GPUTarget("cuda", 80, 32), its PTX assembled for the device by Triton's ptxas and
launched by Triton. Why: it tells what mma.sync itself reaches on the card, whoever generates it."""
import glob, os, subprocess, sys, tempfile, time
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE); sys.path.insert(0, os.path.join(HERE, os.pardir))
import torch, triton
from triton.backends.compiler import GPUTarget
import gpu_tensorcores as G

def ptxas_path():
    import triton.backends.nvidia as nv
    c = glob.glob(os.path.join(os.path.dirname(nv.__file__), "bin", "ptxas"))
    return c[0]

def main():
    torch.manual_seed(0)
    rows = []
    for n in (4096, 8192):
        a = torch.randn(n, n, device="cuda", dtype=torch.float16)
        b = torch.randn(n, n, device="cuda", dtype=torch.float16)
        c = torch.empty(n, n, device="cuda", dtype=torch.float16)
        ref = a @ b
        flops = 2 * n ** 3
        res = {}
        def go(name, run):
            c.fill_(float("nan")); run(); torch.cuda.synchronize()
            torch.testing.assert_close(c, ref, atol=1e-1, rtol=1e-2)
            res[name] = flops / G.bench(run) / 1e12
        os.environ.pop("TILEC_CUDA_ARCH", None)
        go("triton sm90", G.matmul_runner(G.load_kernels(False), a, b, c))
        go("tilec sm90", G.matmul_runner(G.load_kernels(True), a, b, c))
        os.environ["TILEC_CUDA_ARCH"] = "80"
        go("tilec sm80", G.matmul_runner(G.load_kernels(True), a, b, c))
        os.environ.pop("TILEC_CUDA_ARCH", None)
        drv = triton.runtime.driver.active
        orig = drv.get_current_target
        drv.get_current_target = lambda: GPUTarget("cuda", 80, 32)
        try:
            K = G.load_kernels(False)
            M, Kd = a.shape; N = b.shape[1]
            grid = (triton.cdiv(M, 128) * triton.cdiv(N, 128),)
            ck = K.matmul_kernel.warmup(a, b, c, M, N, Kd, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                        c.stride(0), c.stride(1), BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8,
                                        num_warps=8, num_stages=3, grid=grid)
            ptx = ck.asm["ptx"]
            assert "mma.sync" in ptx and "wgmma" not in ptx
            with tempfile.TemporaryDirectory() as d:
                open(f"{d}/k.ptx", "w").write(ptx)
                p = subprocess.run([ptxas_path(), "-arch=sm_90", "-v", "-O3", f"{d}/k.ptx", "-o", f"{d}/k.cubin"],
                                   capture_output=True, text=True)
                print("triton sm80 ptx -> sm_90:", p.stderr.strip().splitlines()[-2:])
                cub = open(f"{d}/k.cubin", "rb").read()
            ck.kernel = cub
            ck.asm["cubin"] = cub
            go("triton sm80", G.matmul_runner(K, a, b, c))
        except Exception as e:
            import traceback; traceback.print_exc()
        finally:
            drv.get_current_target = orig
        rows.append((n, res))
    print("\n| n | " + " | ".join(rows[0][1]) + " | tilec80/tilec90 | triton80/triton90 |")
    for n, r in rows:
        print(f"| {n} | " + " | ".join(f"{v:.1f}" for v in r.values()) +
              f" | {r['tilec sm80']/r['tilec sm90']:.2f} | {r.get('triton sm80', 0)/r['triton sm90']:.2f} |")

if __name__ == "__main__":
    main()
