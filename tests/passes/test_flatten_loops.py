"""flatten-loops: a tl.range(..., flatten=True) loop holding one inner loop becomes one loop over all the inner
iterations (and the original nest for an inner loop of no iterations), with the same results: checked with the
evaluator on random data against the nest, for ragged trip counts, carried values on both levels, an epilogue
that stores and empty inner loops; and what stays a nest."""
import numpy as np
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


@tilec.jit
def carried(x_ptr, out_ptr, aux_ptr, n_tiles, n_k, NUM: tl.constexpr, BLOCK: tl.constexpr):
    """The prologue's values reach the inner body through shape ops (an offset row broadcast to a tile), the
    epilogue reads one the body does not, and an inner value starts from the prologue (an advanced pointer)."""
    for tile in tl.range(tl.program_id(0), n_tiles, NUM, flatten=True):
        row = (tile * 7 + 3) % n_tiles                      # prologue arithmetic (a remainder, as tile orders use)
        offs = row * BLOCK + tl.arange(0, BLOCK)            # read by the body through expand_dims/broadcast
        scale = (row + 1).to(tl.float32)                    # read by the epilogue only
        ptrs = x_ptr + offs                                 # an inner value that starts from the prologue
        acc = tl.zeros((2, BLOCK), dtype=tl.float32)
        for k in range(0, n_k):
            acc = acc * 0.5 + tl.load(ptrs)[None, :] + offs[None, :].to(tl.float32)
            ptrs += n_tiles * BLOCK
        tl.store(out_ptr + tile * 2 * BLOCK + tl.arange(0, 2)[:, None] * BLOCK + tl.arange(0, BLOCK)[None, :],
                 acc * scale)
        tl.store(aux_ptr + tile, row)


def _carried_module():
    x = np.zeros(8, np.float32)
    values = carried._bind((x, x, np.zeros(4, np.int32), 7, 3), dict(NUM=3, BLOCK=8))
    _, _, src = carried.specialize(values)
    m = generate(src, {})
    PassManager("k").run(m, tir_pipeline())
    return m


def test_prologue_values_are_carried_and_renewed_under_an_if():
    m = _carried_module()
    assert FlattenLoops().run(m)
    loop = next(op for op in m.funcs[0].walk() if op.name == "for" and op.parent.parent_op.name == "if")
    ifs = [op for op in loop.body.ops if op.name == "if"]
    assert len(ifs) >= 2  # the epilogue and the renewal of the carried prologue values
    renewal = ifs[1]
    assert all(op.is_pure or op.name == "yield" for r in renewal.regions for op in r.block.ops)
    assert not any(op.name in ("div", "rem") for op in loop.body.ops)  # the prologue runs once per tile


@settings(max_examples=25, deadline=None)
@given(n_tiles=st.integers(0, 9), n_k=st.integers(0, 4), seed=st.integers(0, 2 ** 16))
def test_flattened_with_carried_prologue_values_is_the_nest(n_tiles, n_k, seed):
    x = np.random.default_rng(seed).standard_normal(max(n_tiles, 1) * (n_k + 1) * 8).astype(np.float32)
    outs = []
    for flat in (False, True):
        m = _carried_module()
        if flat:
            FlattenLoops().run(m)
        out = np.full(max(n_tiles, 1) * 16, np.nan, np.float32)
        aux = np.full(max(n_tiles, 1), -1, np.int32)
        run_kernel(m, "carried", [x, out, aux, n_tiles, n_k], (3,))
        outs.append((out, aux))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
