"""``python -m tilec.tools.selfcheck [--backend hip|cuda]``: does tilec work on this machine's GPU, end to end?

Prints the environment (tilec, LLVM, torch, hip-python or cuda-python, the device and its architecture), then
compiles for the device, loads the code objects and launches, each result compared with torch on the same data:
a vector add over a ragged size (exact), a row softmax, a matrix-unit dot (MFMA/WMMA on AMD, tensor cores on
NVIDIA) and a 1,024-element sort. Each check prints PASS or FAIL with the numbers behind it and its
resources (registers, spills, occupancy); the exit status is the number of failures. This is the first thing
to run on a new GPU (docs/amd.md, "First run on real hardware"): its output is a complete report.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
import traceback

import tilec
import tilec.language as tl
from ..targets.hip import driver


@tilec.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@tilec.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, 0), mask=cols < n_cols)


@tilec.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b))


@tilec.jit
def sort_kernel(x_ptr, out_ptr, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(out_ptr + o, tl.sort(tl.load(x_ptr + o)))


def _environment(torch, backend):
    import llvmlite
    import llvmlite.binding as llvm
    lines = [f"python {platform.python_version()} on {platform.platform()}",
             f"tilec {tilec.__version__} ({tilec.__file__})",
             f"llvmlite {llvmlite.__version__}, LLVM {'.'.join(map(str, llvm.llvm_version_info))}",
             f"torch {torch.__version__} (hip {getattr(torch.version, 'hip', None)}, cuda "
             f"{getattr(torch.version, 'cuda', None)})"]
    if backend == "hip":
        try:
            from importlib.metadata import version
            lines.append(f"hip-python {version('hip-python')}")
        except Exception as e:  # noqa: BLE001 - reported, not fatal here
            lines.append(f"hip-python: {e}")
        lines.append(f"device {torch.cuda.get_device_name()}, architecture {driver.current_arch()}")
    else:
        lines.append(f"device {torch.cuda.get_device_name()}, compute capability "
                     f"{'.'.join(map(str, torch.cuda.get_device_capability()))}")
    return lines


def _resources(kernel) -> str:
    md = kernel.metadata
    out = [f"{md.get('num_regs')} registers", f"{md.get('spill_stores', 0)} bytes spilled"]
    if md.get("occupancy") is not None:
        out.append(f"occupancy {md['occupancy']}")
    return ", ".join(out)


def _checks(torch):
    g = torch.Generator(device="cuda").manual_seed(0)

    def vector_add():
        n = 1_000_003
        x, y = torch.randn(n, device="cuda", generator=g), torch.randn(n, device="cuda", generator=g)
        out = torch.full_like(x, float("nan"))
        k = add_kernel[(tilec.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        torch.cuda.synchronize()
        bad = int((out != x + y).sum())
        return bad == 0, f"{n} elements, {bad} differ from torch", k

    def softmax():
        rows, cols = 97, 781
        x = torch.randn(rows, cols, device="cuda", generator=g) * 4
        out = torch.empty_like(x)
        k = softmax_kernel[(rows,)](x, out, cols, BLOCK=1024)
        torch.cuda.synchronize()
        err = float((out - torch.softmax(x, 1)).abs().max())
        return err < 1e-5, f"{rows}x{cols}, max abs error {err:.2e}", k

    def matrix_dot():
        a = torch.randn(64, 32, device="cuda", generator=g).half()
        b = torch.randn(32, 64, device="cuda", generator=g).half()
        c = torch.empty(64, 64, device="cuda")
        k = dot_kernel[(1,)](a, b, c, M=64, N=64, K=32)
        torch.cuda.synchronize()
        err = float((c - a.float() @ b.float()).abs().max())
        asm = next((v for key, v in k.asm.items() if key in ("amdgcn", "ptx")), "")
        unit = next((u for u in ("v_mfma", "v_wmma", "mma.sync", "wgmma") if u in asm), "no matrix unit")
        return err < 1e-2, f"64x64x32 fp16, max abs error {err:.2e}, {unit}", k

    def sort():
        x = torch.randn(1024, device="cuda", generator=g)
        out = torch.empty_like(x)
        k = sort_kernel[(1,)](x, out, N=1024)
        torch.cuda.synchronize()
        ok = bool((out == torch.sort(x).values).all())
        return ok, "1024 fp32 elements", k

    return [("vector add", vector_add), ("softmax", softmax), ("dot on matrix units", matrix_dot),
            ("sort", sort)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tilec.tools.selfcheck", description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("hip", "cuda"), help="default: hip when torch is a ROCm build")
    a = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("selfcheck: torch is needed (a ROCm build on AMD: pip install torch --index-url "
              "https://download.pytorch.org/whl/rocm6.2)")
        return 1
    if not torch.cuda.is_available():
        print(f"selfcheck: torch {torch.__version__} sees no GPU")
        return 1
    backend = a.backend or ("hip" if getattr(torch.version, "hip", None) else "cuda")
    print(f"tilec self-check ({backend}), {time.strftime('%Y-%m-%d %H:%M:%S')}")
    try:
        for line in _environment(torch, backend):
            print(f"  {line}")
    except Exception as e:  # noqa: BLE001 - the environment report must not stop the checks
        print(f"  environment: {type(e).__name__}: {e}")
    failures = 0
    for name, check in _checks(torch):
        t0 = time.perf_counter()
        try:
            ok, detail, kernel = check()
            detail += f"; {_resources(kernel)}"
        except Exception as e:  # noqa: BLE001 - every failure is reported and counted
            ok, detail = False, f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail} ({time.perf_counter() - t0:.1f} s with the compile)")
    print(f"selfcheck: {len(_checks(torch)) - failures} of {len(_checks(torch))} passed")
    return failures


if __name__ == "__main__":
    sys.exit(main())
