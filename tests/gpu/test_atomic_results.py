"""The values tile atomics return, where threads hold copies of an element (a row of a 2-d layout, a tile
smaller than the threads): each element is updated once, by its owner, and every copy sees the owner's result.
Compiled for sm_80 and sm_90 here; the GPU-marked tests compare with numpy on random data and ragged sizes."""
import numpy as np
import pytest

import tilec
import tilec.language as tl

from gpu_helpers import ARCHS, HAVE_PTXAS


@tilec.jit
def row_counter(cnt_ptr, out_ptr, old_ptr, n0, n1, B0: tl.constexpr, B1: tl.constexpr):
    """A [B1] atomic in a 2-d kernel (a slice layout: several warps hold each column), its result broadcast
    over the rows and stored."""
    pid = tl.program_id(0)
    rows = pid * B0 + tl.arange(0, B0)
    cols = tl.arange(0, B1)
    mask = (rows[:, None] < n0) & (cols[None, :] < n1)
    old = tl.atomic_add(cnt_ptr + pid * B1 + cols, cols + 1, mask=cols < n1)
    tl.store(old_ptr + pid * B1 + cols, old, mask=cols < n1)
    tl.store(out_ptr + rows[:, None] * n1 + cols[None, :], old[None, :] * 1000 + rows[:, None], mask=mask)


@tilec.jit
def small_cas(x_ptr, old_ptr, n, B: tl.constexpr):
    """A tile smaller than the program's threads: lanes hold copies of each element."""
    o = tl.arange(0, B)
    old = tl.atomic_cas(x_ptr + o, tl.zeros([B], tl.int32) + 7, o * 3)
    tl.store(old_ptr + o, old + 1, mask=o < n)


SIG_ROW = "*i32,*i32,*i32,i32,i32"


@pytest.mark.parametrize("arch", ARCHS)
def test_results_reach_the_copies_through_shared_memory(arch):
    src = tilec.ASTSource(row_counter, SIG_ROW, constexprs={"B0": 32, "B1": 16})
    ck = tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": 4})
    ptx = ck.asm["ptx"]
    assert ptx.count("atom.global") + ptx.count("red.global") >= 1
    assert "st.shared" in ptx and "bar.sync" in ptx and ck.metadata["shared"] >= 16 * 4
    if HAVE_PTXAS:
        assert ck.asm["cubin"][:4] == b"\x7fELF"


@pytest.mark.gpu
@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("n0,n1", [(37, 13), (64, 16), (5, 3)])
def test_row_atomic_results_on_the_device(num_warps, n0, n1):
    torch = pytest.importorskip("torch")
    B0, B1 = 16, 16
    grid = (n0 + B0 - 1) // B0
    rng = np.random.default_rng(n0 * n1 + num_warps)
    start = rng.integers(-50, 50, grid * B1).astype(np.int32)
    cnt = torch.from_numpy(start.copy()).cuda()
    out = torch.full((n0, n1), -1, dtype=torch.int32, device="cuda")
    old = torch.full((grid * B1,), -1, dtype=torch.int32, device="cuda")
    row_counter[(grid,)](cnt, out, old, n0, n1, B0=B0, B1=B1, num_warps=num_warps)
    cols = np.arange(B1)
    want_cnt = start.reshape(grid, B1) + np.where(cols < n1, cols + 1, 0)
    np.testing.assert_array_equal(cnt.cpu().numpy().reshape(grid, B1), want_cnt)  # each element updated once
    want_old = np.where(cols < n1, start.reshape(grid, B1), -1)
    np.testing.assert_array_equal(old.cpu().numpy().reshape(grid, B1), want_old)
    rows = np.arange(n0)
    want_out = start.reshape(grid, B1)[rows // B0][:, :n1] * 1000 + rows[:, None]
    np.testing.assert_array_equal(out.cpu().numpy(), want_out)


@pytest.mark.gpu
@pytest.mark.parametrize("num_warps", [1, 4])
def test_small_tile_cas_results_on_the_device(num_warps):
    torch = pytest.importorskip("torch")
    B, n = 8, 7
    x0 = np.array([7, 0, 7, 7, 1, 7, -3, 7], np.int32)
    x = torch.from_numpy(x0.copy()).cuda()
    old = torch.zeros(B, dtype=torch.int32, device="cuda")
    small_cas[(1,)](x, old, n, B=B, num_warps=num_warps)
    o = np.arange(B)
    np.testing.assert_array_equal(x.cpu().numpy(), np.where(x0 == 7, o * 3, x0))
    np.testing.assert_array_equal(old.cpu().numpy()[:n], x0[:n] + 1)
