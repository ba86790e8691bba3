"""flatten-loops: a tl.range(..., flatten=True) loop holding one inner loop becomes one loop over all the inner
iterations (and the original nest for an inner loop of no iterations), with the same results: checked with the
evaluator on random data against the nest, for ragged trip counts, carried values on both levels, an epilogue
that stores and empty inner loops; and what stays a nest."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tilec
import tilec.language as tl
from tilec.ir.evaluator import run_kernel
from tilec.passes.flatten_loops import FlattenLoops
from tilec.passes.manager import PassManager, tir_pipeline
from tilec.frontend.codegen import generate


@tilec.jit
def tiles(x_ptr, out_ptr, count_ptr, n_tiles, n_k, NUM: tl.constexpr, BLOCK: tl.constexpr, FLAT: tl.constexpr):
    start = tl.program_id(0)
    count = 0
    for tile in tl.range(start, n_tiles, NUM, flatten=FLAT):
        base = tile * 3 + 1
        acc = tl.zeros((BLOCK,), dtype=tl.float32) + base
        for k in range(1, n_k):
            acc = acc * 0.5 + tl.load(x_ptr + (tile * n_k + k) * BLOCK + tl.arange(0, BLOCK))
        tl.store(out_ptr + tile * BLOCK + tl.arange(0, BLOCK), acc)
        count += 1
    tl.store(count_ptr + start, count)


def _module(flat):
    x = np.zeros(8, np.float32)
    values = tiles._bind((x, x, np.zeros(4, np.int32), 7, 3), dict(NUM=3, BLOCK=8, FLAT=flat))
    _, _, src = tiles.specialize(values)
    m = generate(src, {})
    PassManager("k").run(m, tir_pipeline())
    return m


def _run(m, n_tiles, n_k, seed):
    x = np.random.default_rng(seed).standard_normal(n_tiles * max(n_k, 1) * 8).astype(np.float32)
    out = np.full(n_tiles * 8, np.nan, np.float32)
    count = np.full(3, -1, np.int32)
    run_kernel(m, "tiles", [x, out, count, n_tiles, n_k], (3,))
    return out, count


def test_the_nest_becomes_one_loop_and_the_original_for_an_empty_inner_loop():
    m = _module(True)
    assert FlattenLoops().run(m)
    f = m.funcs[0]
    version = next(op for op in f.body.ops if op.name == "if")
    flat, nest = (r.block.ops for r in version.regions)
    loops = [op for op in flat if op.name == "for"]
    assert len(loops) == 1 and not any(op.name == "for" for op in loops[0].body.ops)
    assert any(op.name == "if" for op in loops[0].body.ops)  # the epilogue, on an outer iteration's last
    assert [op.name for op in nest if op.name == "for"] == ["for"] and "flatten" not in nest[0].attrs
    assert not FlattenLoops().run(_module(False))  # only where the loop asks for it


@settings(max_examples=25, deadline=None)
@given(n_tiles=st.integers(0, 9), n_k=st.integers(0, 5), seed=st.integers(0, 2 ** 16))
def test_flattened_results_are_the_nests(n_tiles, n_k, seed):
    nest, flat = _module(True), _module(True)
    FlattenLoops().run(flat)
    a, ca = _run(nest, n_tiles, n_k, seed)
    b, cb = _run(flat, n_tiles, n_k, seed)
    np.testing.assert_array_equal(ca, cb)
    np.testing.assert_array_equal(a, b)
