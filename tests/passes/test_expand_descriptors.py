"""Tensor descriptor accesses stay ``descriptor_load`` / ``descriptor_store`` ops in tir; expand-descriptors
turns them into the masked pointer accesses they mean, which must agree with the evaluator's own reading of the
ops on random data with blocks hanging over every edge; debug builds check them like any pointer access."""
import re
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import TilecError


@tilec.jit
def copy_blocks(X, Y, M, N, SX, SY, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    src = tl.make_tensor_descriptor(X, [M, N], [SX, 1], [BM, BN], padding_option=PAD)
    dst = tl.make_tensor_descriptor(Y, [M + 2, N + 3], [SY, 1], [BM, BN])
    pm, pn = tl.program_id(0), tl.program_id(1)
    t = src.load([pm * BM - 3, pn * BN - 5])  # blocks start before the tensor and run past its end
    dst.store([pm * BM - 3, pn * BN - 5], t * 2 + 1)


def _reference(x, M, N, BM, BN, grid, pad, yshape):
    y = np.full(yshape, -9.0, np.float32)
    for pm in range(grid[0]):
        for pn in range(grid[1]):
            for i in range(BM):
                for j in range(BN):
                    r, c = pm * BM - 3 + i, pn * BN - 5 + j
                    if 0 <= r < M and 0 <= c < N:
                        v = x[r, c]
                    else:
                        v = np.nan if pad == "nan" else 0.0
                    if 0 <= r < M + 2 and 0 <= c < N + 3:
                        y[r, c] = v * 2 + 1
    return y


@pytest.mark.parametrize("mode", ["cpu", "interpret"])
@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_descriptor_accesses_match_their_meaning(mode, pad, monkeypatch):
    if mode == "interpret":
        monkeypatch.setenv("TILEC_INTERPRET", "1")
    rng = np.random.default_rng(7)
    M, N, BM, BN = 19, 27, 8, 16
    x = np.zeros((M, 32), np.float32)
    x[:, :N] = rng.standard_normal((M, N))
    x[:, N:] = 1e6  # beyond the described columns: must never be read
    y = np.full((M + 2, 40), -9.0, np.float32)
    grid = (tilec.cdiv(M + 3, BM) + 1, tilec.cdiv(N + 5, BN) + 1)
    copy_blocks[grid](x, y, M, N, 32, 40, BM=BM, BN=BN, PAD=pad)
    ref = _reference(x, M, N, BM, BN, grid, pad, y.shape)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    np.testing.assert_allclose(np.nan_to_num(y), np.nan_to_num(ref), rtol=1e-6)


def test_tir_keeps_the_ops_and_the_cpu_expands_them():
    src = tilec.ASTSource(copy_blocks, "*fp32:16,*fp32:16,i32,i32,i32:16,i32:16",
                          constexprs=dict(BM=8, BN=16, PAD="zero"))
    ck = tilec.compile(src, tilec.Target("cpu"), {})
    assert "descriptor_load" in ck.asm["tir"] and "descriptor_store" in ck.asm["tir"]
    assert not re.search(r"descriptor_(load|store)", ck.asm["llir"])  # (the file name is in the debug info)


@tilec.jit(debug=True)
def overreach(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(X, [M + 8, N], [N, 1], [BM, BN])  # more rows than X holds
    tl.make_tensor_descriptor(Y, [M, N], [N, 1], [BM, BN]).store([tl.program_id(0) * BM, 0],
                                                                  d.load([tl.program_id(0) * BM, 0]))


@pytest.mark.parametrize("mode", ["cpu", "interpret"])
def test_debug_builds_check_descriptor_accesses(mode, monkeypatch):
    if mode == "interpret":
        monkeypatch.setenv("TILEC_INTERPRET", "1")
    x = np.random.default_rng(0).random((20, 16)).astype(np.float32)
    y = np.zeros_like(x)
    with pytest.raises(TilecError, match=r"out-of-bounds load in program \(1, 0, 0\).*'X'"):
        overreach[(2,)](x, y, 20, 16, BM=16, BN=16)
