"""``python -m tilec.tools.selfcheck``: without a GPU it says what is missing and fails; its kernels compile for
the GPUs a first run may meet, without spills, the dot on the matrix units."""
import subprocess
import sys

import pytest

import tilec
from tilec.tools import selfcheck


def test_without_a_gpu_it_says_so_and_fails():
    p = subprocess.run([sys.executable, "-m", "tilec.tools.selfcheck"], capture_output=True, text=True)
    assert p.returncode != 0
    assert "selfcheck:" in p.stdout and ("no GPU" in p.stdout or "torch is needed" in p.stdout)


@pytest.mark.parametrize("target", [("hip", "gfx942", 64), ("hip", "gfx1100", 32), ("cuda", 90, 32)])
def test_its_kernels_compile_for_the_gpus(target):
    t = tilec.Target(*target)
    srcs = [tilec.ASTSource(selfcheck.add_kernel, "*fp32,*fp32,*fp32,i32", constexprs={"BLOCK": 1024}),
            tilec.ASTSource(selfcheck.softmax_kernel, "*fp32,*fp32,i32", constexprs={"BLOCK": 1024}),
            tilec.ASTSource(selfcheck.dot_kernel, "*fp16,*fp16,*fp32", constexprs={"M": 64, "N": 64, "K": 32}),
            tilec.ASTSource(selfcheck.sort_kernel, "*fp32,*fp32", constexprs={"N": 1024})]
    for src in srcs:
        k = tilec.compile(src, t)
        assert k.metadata.get("spill_stores", 0) == 0
    dot = tilec.compile(srcs[2], t).asm["amdgcn" if target[0] == "hip" else "ptx"]
    assert any(u in dot for u in ("v_mfma", "v_wmma", "mma.sync", "wgmma"))
