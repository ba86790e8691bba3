"""Launch one spelling of ``spelling_cases.py`` a few times under one compiler, for a profiler to look at:

    ncu -k regex:matmul_kernel --launch-skip 2 --launch-count 1 --section SpeedOfLight --section WarpStateStats \\
        python benchmarks/profile_spelling.py "int8 x@W.T" --side triton

The first launch compiles and is checked against torch (as ``gpu_spellings.py`` does)."""
import argparse
import os
import sys
import tempfile

import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
sys.path.insert(0, HERE)
from gpu_spellings import _scratch, check, problem  # noqa: E402
from kernel_loading import load_kernels  # noqa: E402
from spelling_cases import CASES  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--side", choices=("tilec", "triton"), default="tilec")
    ap.add_argument("--launches", type=int, default=4)
    a = ap.parse_args(argv)
    os.environ.setdefault("TILEC_CACHE_DIR", tempfile.mkdtemp(prefix="tc-prof-"))
    import tilec
    triton.set_allocator(_scratch)
    tilec.set_allocator(_scratch)
    case = next(c for c in CASES if c.name == a.name)
    K = load_kernels(a.side == "tilec", "gpu_spelling_kernels.py")
    make_run, out, ref, _ = problem(case, torch.Generator(device="cuda").manual_seed(0))
    run = make_run(K)
    for _ in range(a.launches):
        run()
    torch.cuda.synchronize()
    print(f"{a.name} ({a.side}): relative error {check(out, ref, out.dtype == torch.int32):.2e}")


if __name__ == "__main__":
    main()
