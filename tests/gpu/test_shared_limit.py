"""Shared memory (LDS) checked at compile time against the target: a kernel needing more than one block may have is
refused before any code is generated, at the line of its largest user, naming the kernel, the bytes needed and
allowed, and the tile sizes to reduce (compiles only: no GPU)."""
import pytest

import tilec
import tilec.language as tl
from tilec.compiler import ASTSource
from tilec.errors import CompilationError, LaunchError, OutOfResources


@tilec.jit
def transpose(x, out, M: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    t = tl.load(x + r * N + c)
    tl.store(out + c.T * M + r.T, tl.trans(t))  # the transpose goes through shared memory


@pytest.mark.parametrize("target, M, N, need, allowed, what", [
    (("hip", "gfx942", 64), 128, 256, 131072, 65536, "gfx942 LDS"),
    (("hip", "gfx1100", 32), 128, 256, 131072, 65536, "gfx1100 LDS"),
    (("hip", "gfx950", 64), 256, 256, 262144, 163840, "gfx950 LDS"),
    (("cuda", 86, 32), 128, 256, 131072, 101376, "sm_86 shared memory"),
    (("cuda", 80, 32), 256, 256, 262144, 166912, "sm_80 shared memory"),
    (("cuda", 90, 32), 256, 256, 262144, 232448, "sm_90 shared memory"),
])
def test_too_much_shared_memory_is_refused_at_compile_time(target, M, N, need, allowed, what):
    src = ASTSource(transpose, signature="*fp32,*fp32", constexprs={"M": M, "N": N})
    with pytest.raises(OutOfResources) as info:
        tilec.compile(src, target=tilec.Target(*target))
    e = info.value
    assert (e.required, e.limit, e.name) == (need, allowed, "shared memory")
    text = str(e)
    assert f"kernel 'transpose' needs {need:,} bytes of shared memory, {what} allows {allowed:,} per block" in text
    assert f"{need:,} bytes for a transpose of a {M}x{N} f32 tile (line 17)" in text
    assert f"use smaller tiles (M={M}, N={N})" in text
    lines = text.splitlines()  # located at the user's line, with a caret under the transpose
    assert lines[0].startswith(f"{__file__}:17:") and "tl.trans(t)" in lines[1] and lines[2].strip() == "^"
    assert isinstance(e, CompilationError) and isinstance(e, LaunchError)  # Triton code catches OutOfResources


@pytest.mark.parametrize("target, allowed, staged", [(("cuda", 90, 32), "232,448", "3 stages"),
                                                     (("hip", "gfx942", 64), "65,536", "1 stage")])
def test_matmul_operand_buffers_and_num_stages(target, allowed, staged):
    """A 256x256x128 fp16 matmul: its operand buffers are named, and num_stages where they have several stages."""
    from gpu_jit_kernels import matmul_kernel
    constexprs = {"BM": 256, "BN": 256, "BK": 128}
    sig = ",".join(["*fp16", "*fp16", "*fp32"] + ["i32"] * 9)
    src = ASTSource(matmul_kernel, signature=sig, constexprs=constexprs)
    with pytest.raises(OutOfResources, match=rf"kernel 'matmul_kernel' needs .* allows {allowed} per block; .*"
                                             rf"{staged} of 256x128 f16 tiles .*use smaller tiles \(BM=256, BN=256, "
                                             r"BK=128\)") as info:
        tilec.compile(src, target=tilec.Target(*target), options={"num_warps": 8, "num_stages": 3})
    assert ("or fewer stages (num_stages=3)" in str(info.value)) == (staged == "3 stages")


@tilec.jit
def permuted_sum(x, out, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    idx = tl.arange(0, A * B * C).reshape(A, B, C)  # index math: rebuilt in the load's layout, never moved
    v = tl.permute(tl.load(x + idx), [2, 0, 1])
    tl.store(out + tl.arange(0, C * A).reshape(C, A), tl.sum(v, 2))


def test_address_tiles_are_rebuilt_in_the_layout_a_load_wants():
    """An arange reshaped into a pointer tile is recomputed in the load's layout (reshapes rematerialised as
    linear images): converting the 64-bit pointers took 8 bytes of shared memory an element, past sm_90's limit
    for 16,384 elements here (test_core's test_chained_reductions)."""
    src = ASTSource(permuted_sum, signature="*i32,*i32", constexprs={"A": 32, "B": 32, "C": 16})
    k = tilec.compile(src, target=tilec.Target("cuda", 90, 32))
    gir = k.asm["gir"]
    converted = [line for line in gir.splitlines() if " = convert_layout " in line and "ptr<" in line]
    assert not converted, converted
    assert k.metadata["shared"] <= 16384 * 4


def test_a_pointer_tile_in_the_message():
    """The largest users of shared memory are named whatever their element type (pointer tiles included)."""
    from tilec.gpu.shared_limit import _shape
    from tilec.ir.types import PointerType, TileType, i32
    t = TileType((4, 8), PointerType(i32))
    assert _shape(t.shape, t) == "4x8 ptr<i32>"


def test_a_scan_across_warps_takes_a_slot_per_chunk_not_the_whole_tile():
    """Each warp publishes one total per chunk and row: a 1024x2 scan along the rows over 16 warps needs
    16 x 4 totals, not 16 copies of the tile (393,216 bytes, refused before)."""
    import tilec
    import tilec.language as tl
    from tilec.gpu.layouts import default_blocked
    from tilec.gpu.scratch import scan_slot_shape

    @tilec.jit
    def scan_rows(X, Z, BM: tl.constexpr, BN: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        x = tl.load(X + rm[:, None] * BN + rn[None, :])
        tl.store(Z + rm[:, None] * BN + rn[None, :], tl.cumsum(x, axis=0))

    src = tilec.ASTSource(scan_rows, "*i32:16,*i32:16", constexprs=dict(BM=1024, BN=2))
    ck = tilec.compile(src, tilec.Target("cuda", 90, 32), {"num_warps": 16})
    assert ck.metadata["shared"] <= 4096
    ll = default_blocked((1024, 2), 16, 32, (1, 2), (1, 0)).to_linear((1024, 2))
    assert scan_slot_shape(ll, (1024, 2), 0) == (2, 2)  # rows 0 and 512 start the two chunks
