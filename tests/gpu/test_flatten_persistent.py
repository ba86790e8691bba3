"""A persistent matmul written as Triton's tutorial 09 writes it (``tl.range(..., flatten=True)`` around the K
loop) compiles to one loop on sm_90: tensor copies issued ahead across tiles, the warpgroup dot kept running
across iterations with its accumulator restarted by the units (``use_acc``), and the result handed over to the
epilogue only on a tile's last step. Compiled without a GPU (ptxas checks the PTX where it is on PATH)."""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl


@tilec.jit
def _pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_SIZE_M)
    return first_pid_m + (tile_id % group_size_m), (tile_id % num_pid_in_group) // group_size_m


@tilec.jit
def persistent(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               NUM_SMS: tl.constexpr, FLATTEN: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BN, BK])
    num_pid_m, num_pid_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, flatten=FLATTEN):
        pid_m, pid_n = _pid(tile_id, 8 * num_pid_n, num_pid_m, 8)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            a = a_desc.load([pid_m * BM, ki * BK])
            b = b_desc.load([pid_n * BN, ki * BK])
            acc = tl.dot(a, b.T, acc)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def _compile(arch, flatten=True):
    src = tilec.ASTSource(persistent, "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16",
                          constexprs=dict(BM=128, BN=128, BK=64, NUM_SMS=132, FLATTEN=flatten))
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
    persistent[(3,)](a, b, c, M, N, K, BM=32, BN=32, BK=32, NUM_SMS=3, FLATTEN=True)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32).T, atol=0.05,
                               rtol=0.01)
