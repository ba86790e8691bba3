"""tl.sort/tl.topk on the GPUs are bitonic networks whose every step stays in the tile's own layout: pairs in
a thread's registers, across lanes (shuffles) or across warps (a shared-memory reduction); no ``n x n``
intermediate, no data-moving reshape, no layout conversion. Compiled for sm_80/sm_90 (PTX assembled with
ptxas) and gfx942/gfx1100 (code objects validated); the device runs are the language tests' ``cuda`` mode.
Kernels too large to compile in reasonable time are refused with a located error."""
import os
import sys

import pytest

import tilec
import tilec.language as tl
from gpu_helpers import HAVE_PTXAS

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "hip"))
from hsaco_check import validate_hsaco  # noqa: E402


@tilec.jit
def sort_kernel(X, Y, N: tl.constexpr, K: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    tl.store(Y + o, tl.sort(x, descending=True))
    tl.store(Y + N + tl.arange(0, K), tl.topk(x, K))


@tilec.jit
def transpose_kernel(X, Y, N: tl.constexpr):
    r = tl.arange(0, N)[:, None]
    c = tl.arange(0, N)[None, :]
    tl.store(Y + c * N + r, tl.load(X + r * N + c))


TARGETS = [("cuda", 80, 32), ("cuda", 90, 32), ("hip", "gfx942", 64), ("hip", "gfx1100", 32)]


def _compile(src, target, **options):
    k = tilec.compile(src, tilec.Target(*target), options)
    if target[0] == "cuda" and HAVE_PTXAS:
        assert k.asm["cubin"][:4] == b"\x7fELF"
    if target[0] == "hip":
        validate_hsaco(k.asm["hsaco"], k.name, target[1], target[2])
    return k


# fp32 (unsigned keys around the network) on every target; i32 (the network on signed values, the same layouts
# and steps) on one target of each vendor
@pytest.mark.parametrize("dtype,target", [pytest.param(d, t, id=f"{d}-{t[0]}-{t[1]}") for d, t in
                                          [("fp32", t) for t in TARGETS] + [("i32", TARGETS[1]), ("i32", TARGETS[2])]])
def test_a_1024_sort_is_a_network_in_place(target, dtype):
    k = _compile(tilec.ASTSource(sort_kernel, f"*{dtype},*{dtype}", constexprs={"N": 1024, "K": 16}), target)
    gir = k.asm["gir"]
    assert "1024x1024" not in gir
    moves = [line for line in gir.splitlines() if " = reshape " in line or " = convert_layout " in line]
    assert moves and not any("smem_offset" in line for line in moves)  # all within each thread
    # only the steps whose pairs lie across warps use shared memory: a few KB, not the tile squared
    assert k.metadata["shared"] <= 4 * 1024 * 4
    assert k.metadata.get("spill_stores", 0) == 0


@pytest.mark.parametrize("target", [("cuda", 90, 32), ("hip", "gfx942", 64)])
def test_a_sort_too_large_to_compile_is_refused_where_it_is(target):
    # the budget is per thread: over one warp a 16384-element sort is well past it (3-6x), and the passes before
    # the check take ~2 s where a sort as far past it over four warps (65536 elements) takes 7-30 s
    src = tilec.ASTSource(sort_kernel, "*fp32,*fp32", constexprs={"N": 16384, "K": 16})
    with pytest.raises(tilec.CompilationError) as e:
        tilec.compile(src, tilec.Target(*target), {"num_warps": 1})
    text = str(e.value)
    assert "test_sort_network_gpu.py:" in text and "unrolls into" in text and "num_warps" in text


def test_a_tile_past_the_register_file_is_refused_where_it_is():
    src = tilec.ASTSource(transpose_kernel, "*fp32,*fp32", constexprs={"N": 1024})
    with pytest.raises(tilec.CompilationError, match=r"test_sort_network_gpu.py:\d+:\d+: tile<1024x1024x") as e:
        tilec.compile(src, tilec.Target("cuda", 90, 32))
    assert "tl.load(X + r * N + c)" in str(e.value) and "8192 values" in str(e.value)
    # the same tile over 16 warps is within the budget
    assert "1024x1024" in tilec.compile(src, tilec.Target("cuda", 90, 32), {"num_warps": 32}).asm["gir"]
