"""Registers, spills and occupancy of the tensor-core benchmark kernels (``gpu_tc_kernels.py``: the tutorial
matmul, flash attention D64 and D128, causal and not) compiled for AMD processors with each processor's tile and
warp choices (``tc_configs.py``) or NVIDIA's (matmul 128x128x64 with 8 warps, attention BLOCK_M 128, BLOCK_N 64,
D64 with 4 warps, D128 with 8); no GPU needed. Prints a table (docs/performance.md, AMD).

    PYTHONPATH=. python benchmarks/amd_resources.py [--targets gfx942,gfx1100] [--num-stages 2] [--configs nvidia]

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
from tc_configs import configs  # noqa: E402


def _kernels():
    compat.install()
    import gpu_tc_kernels
    return gpu_tc_kernels


def cases(K, cfgs):
    """(label, source, num_warps) of each benchmark kernel with the tile and warp choices ``cfgs``."""
    # as ``kernel[grid](...)`` specialises a launch on contiguous 4096^2 tensors (Triton's rules): unit strides
    # are constants, pointers and the other integers divisible by 16
    mm_sig = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16"
    mm = dict(cfgs["matmul"])
    warps = mm.pop("num_warps")
    yield (f"matmul {mm['BLOCK_M']}x{mm['BLOCK_N']}x{mm['BLOCK_K']}", tilec.ASTSource(
        K.matmul_kernel, mm_sig, constexprs=dict(mm, GROUP_M=8, stride_ak=1, stride_bn=1, stride_cn=1)), warps)
    attn_sig = "*fp16:16,*fp16:16,*fp16:16,*fp16:16,fp32,i32:16,i32:16,i32:16"
    for d in (64, 128):
        cfg = dict(cfgs[f"attention{d}"])
        warps = cfg.pop("num_warps")
        for causal in (False, True):
            src = tilec.ASTSource(K.attn_fwd_kernel, attn_sig, constexprs=dict(cfg, HEAD_DIM=d, CAUSAL=causal))
            yield (f"attention D{d}{' causal' if causal else ''} {cfg['BLOCK_M']}x{cfg['BLOCK_N']}", src, warps)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default="gfx942,gfx1100")
    ap.add_argument("--num-stages", type=int, default=2)
    ap.add_argument("--configs", choices=("device", "nvidia"), default="device",
                    help="each processor's own tile and warp choices (tc_configs.py), or NVIDIA's everywhere")
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
        for label, src, warps in cases(K, configs(name if a.configs == "device" else None)):
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
