"""Launch grids are checked before any launcher runs: the same rules on the compiled CPU path, in the
interpreter and for CompiledKernel.run; a zero-sized grid launches nothing."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.targets.grid import MAX_GRID, normalize_grid


@tilec.jit
def fill(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs.to(tl.float32) + 1.0, mask=offs < n)


BAD = [
    ((1.9,), "must be an int, got 1.9"),
    ((-1,), "dimension 0 is negative"),
    ((4, -2), "dimension 1 is negative"),
    (("3",), "must be an int"),
    ((True,), "must be an int"),
    ((2**31,), "over the limit of 2147483647"),
    ((1, 65536), "dimension 1 is 65536, over the limit of 65535"),
    ((1, 1, 70000), "dimension 2 is 70000"),
    ((), "1 to 3 dimensions"),
    ((1, 1, 1, 1), "1 to 3 dimensions"),
    (None, "must be an int"),
]


@pytest.mark.parametrize("grid,msg", BAD)
@pytest.mark.parametrize("mode", ["cpu", "interpret", "compiled"])
def test_bad_grids_raise_value_error(grid, msg, mode, monkeypatch):
    out = np.zeros(37, np.float32)
    if mode == "interpret":
        monkeypatch.setattr(fill, "interpret", True)
    with pytest.raises(ValueError, match=msg):
        if mode == "compiled":
            k = fill.warmup(out, 37, BLOCK=16, grid=(1,))
            k.run(grid, [out, 37])
        else:
            fill[grid](out, 37, BLOCK=16)
    assert not out.any()  # nothing ran


@pytest.mark.parametrize("grid", [(0,), 0, (3, 0), (0, 5, 1), lambda meta: (0,)])
@pytest.mark.parametrize("interpret", [False, True])
def test_zero_sized_grid_is_a_no_op(grid, interpret, monkeypatch):
    monkeypatch.setattr(fill, "interpret", interpret)
    out = np.zeros(37, np.float32)
    fill[grid](out, 37, BLOCK=16)
    assert not out.any()


def test_good_grids_run_everywhere(monkeypatch):
    for interpret in (False, True):
        monkeypatch.setattr(fill, "interpret", interpret)
        out = np.zeros(37, np.float32)
        fill[(np.int64(3),)](out, 37, BLOCK=16)  # numpy integers are ints
        np.testing.assert_array_equal(out, np.arange(37, dtype=np.float32) + 1)


def test_normalize_grid():
    assert normalize_grid(5) == (5, 1, 1)
    assert normalize_grid([2, 3]) == (2, 3, 1)
    assert normalize_grid(MAX_GRID) == MAX_GRID
    assert normalize_grid((4, 0, 2)) is None
