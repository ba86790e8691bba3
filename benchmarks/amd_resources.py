"""Registers, spills and occupancy of the tensor-core benchmark kernels (``gpu_tc_kernels.py``: the tutorial
matmul 128x128x64 with 8 warps; flash attention D64 with 4 warps and D128 with 8 warps, causal and not, BLOCK_M
128, BLOCK_N 64) compiled for AMD processors; no GPU needed. Prints a table (docs/performance.md, AMD).

    PYTHONPATH=. python benchmarks/amd_resources.py [--targets gfx942,gfx1100] [--num-stages 2] [--warps-d128 8]

``--targets device`` compiles for the AMD GPU this machine has.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
sys.path.insert(0, HERE)
import tilec  # noqa: E402
from tilec import compat  # noqa: E402


def _kernels():
    compat.install()
    import gpu_tc_kernels
    return gpu_tc_kernels


def cases(K, warps_d128: int):
    mm_sig = "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32"
    yield ("matmul 128x128x64", tilec.ASTSource(K.matmul_kernel, mm_sig, constexprs={
        "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}), 8)
    attn_sig = "*fp16,*fp16,*fp16,*fp16,fp32,i32,i32,i32"
    for d in (64, 128):
        for causal in (False, True):
            src = tilec.ASTSource(K.attn_fwd_kernel, attn_sig, constexprs={
                "HEAD_DIM": d, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": causal})
            yield (f"attention D{d}{' causal' if causal else ''}", src, 4 if d <= 64 else warps_d128)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default="gfx942,gfx1100")
    ap.add_argument("--num-stages", type=int, default=2)
    ap.add_argument("--warps-d128", type=int, default=8)
    a = ap.parse_args(argv)
    targets = a.targets.split(",")
    if targets == ["device"]:
        from tilec.targets.hip import driver
        targets = [driver.current_arch()]
    K = _kernels()
    print(f"num_stages {a.num_stages}; registers per lane (VGPR count includes AGPRs on gfx90a/gfx942/gfx950)")
    print("| kernel | target | warps | VGPRs | AGPRs | spilled VGPRs | scratch bytes/lane | LDS bytes | occupancy "
          "(waves/SIMD) | compile CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for arch in targets:
        name = arch.split(":")[0]
        ws = 64 if name.startswith("gfx9") else 32
        for label, src, warps in cases(K, a.warps_d128):
            t0 = time.process_time()
            try:
                k = tilec.compile(src, tilec.Target("hip", arch, ws), {"num_warps": warps,
                                                                      "num_stages": a.num_stages})
            except tilec.errors.TilecError as e:
                print(f"| {label} | {name} | {warps} | not compiled: {str(e).splitlines()[0][:100]} |||||||")
                continue
            md = k.metadata
            print(f"| {label} | {name} | {warps} | {md.get('num_vgprs')} | {md.get('num_agprs', 0)} | "
                  f"{md.get('vgpr_spills', 0)} | {md.get('scratch_bytes', 0)} | {md.get('shared', 0)} | "
                  f"{md.get('occupancy')} | {time.process_time() - t0:.1f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
