"""A persistent matmul written as Triton's tutorial 09 writes it (``tl.range(..., flatten=True)`` around the K
loop) compiles to one loop on sm_90: tensor copies issued ahead across tiles, the warpgroup dot kept running
across iterations with its accumulator restarted by the units (``use_acc``), and the result handed over to the
epilogue only on a tile's last step. Compiled without a GPU (ptxas checks the PTX where it is on PATH)."""
import re

import numpy as np
import pytest

import tilec
from tc_kernels import persistent_desc_matmul as persistent


def _compile(arch, flatten=True):
    src = tilec.ASTSource(persistent, "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16",
                          constexprs=dict(BM=128, BN=128, BK=64, NUM_SMS=132, FLATTEN=flatten, WS=False))
    return tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": 8, "num_stages": 3})


def test_sm90_one_loop_copies_across_tiles_and_keeps_the_dot_running():
    gir = _compile(90).asm["gir"]
    flat = gir[:gir.index("\n    } {\n")]  # the flattened version (then); the nest for an empty K loop follows
    loops = lambda text: len(re.findall(r"\bfor %", text))  # noqa: E731
    assert loops(flat) == 1 and flat.count("tma_copy") >= 4  # the prologue's and the loop's copies
    dot = next(line for line in flat.splitlines() if "= warp_group_dot " in line)
    assert "pending = 1" in dot and dot.split(" : ")[0].count("%") == 5  # a, b, acc and use_acc
    epilogue = flat[flat.index(dot):]
    assert "if " in epilogue and "warp_group_dot_wait" in epilogue.split("if ", 1)[1].splitlines()[1]
    nest = _compile(90, flatten=False).asm["gir"]
    assert loops(nest) == 2 and all(line.split(" : ")[0].count("%") == 4
                                    for line in nest.splitlines() if "= warp_group_dot " in line)


@pytest.mark.parametrize("arch", [80, 90])
def test_flattened_kernel_runs_on_the_cpu_and_compiles_for_the_gpu(arch):
    _compile(arch)
    M, N, K = 200, 264, 192
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    persistent[(3,)](a, b, c, M, N, K, BM=32, BN=32, BK=32, NUM_SMS=3, FLATTEN=True, WS=False)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32).T, atol=0.05,
                               rtol=0.01)
