"""Reductions over every axis of 1-3-d tiles (within threads, across lanes by shuffles, across warps through
shared memory) and atomics with contended addresses: compile everywhere, agree with the evaluator on a GPU."""
import numpy as np
import pytest

from tilec.ir.evaluator import run_kernel
from tilec.ir.types import f16, f32, f64, i32, i64, u32

import gpu_ir_kernels as K
from gpu_helpers import ARCHS, compile_ir, device_arch, to_device

REDUCE_CASES = [(f32, (1024,), 0, "add"), (f32, (64,), 0, "max"), (i32, (8, 256), 1, "add"), (i32, (256, 8), 0, "min"),
                (f32, (32, 64), 0, "add"), (f32, (32, 64), 1, "max"), (i64, (16, 32), 1, "xor"),
                (u32, (4, 8, 32), 1, "max"), (f64, (128, 4), 0, "add"), (f16, (16, 128), 1, "max"),
                (f32, (2, 4, 16), 2, "min")]
IDS = [f"{e}-{'x'.join(map(str, s))}-ax{a}-{c}" for e, s, a, c in REDUCE_CASES]
ATOMIC_CASES = [(i32, "add"), (i32, "max"), (i32, "min"), (u32, "max"), (i32, "and"), (i32, "or"), (i32, "xor"),
                (f32, "add"), (f32, "max"), (i64, "add")]


def _data(elem, n, rng):
    if elem.is_float:
        return (rng.standard_normal(n) * 8).astype(elem.numpy)
    info = np.iinfo(elem.numpy)
    return rng.integers(max(info.min, -10**6), min(info.max, 10**6), n, endpoint=True, dtype=elem.numpy)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", REDUCE_CASES, ids=IDS)
def test_reduce_compiles(case, arch):
    compile_ir(K.make_reduce_sweep(*case), arch, num_warps=8)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", ATOMIC_CASES, ids=[f"{e}-{k}" for e, k in ATOMIC_CASES])
def test_atomics_compile(case, arch):
    compile_ir(K.make_atomic_sweep(*case), arch)


@pytest.mark.gpu
@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("case", REDUCE_CASES, ids=IDS)
def test_reduce_matches_evaluator(case, num_warps):
    elem, shape, axis, comb = case
    x = _data(elem, int(np.prod(shape)), np.random.default_rng(5))
    nout = max(1, int(np.prod(shape)) // shape[axis])
    ref = np.zeros(nout, elem.numpy)
    run_kernel(K.make_reduce_sweep(*case), f"reduce_{elem}_{axis}", [x.copy(), ref], (1,))
    k = compile_ir(K.make_reduce_sweep(*case), device_arch(), num_warps=num_warps)
    dev = to_device([x, np.zeros_like(ref)])
    k.run((1, 1, 1), dev)
    got = dev[1].numpy()
    if elem.is_float and comb == "add":
        np.testing.assert_allclose(got, ref, rtol=1e-5 if elem != f16 else 1e-2, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, ref)


@pytest.mark.gpu
@pytest.mark.parametrize("case", ATOMIC_CASES, ids=[f"{e}-{k}" for e, k in ATOMIC_CASES])
def test_atomics_match_evaluator(case):
    elem, kind = case
    x = _data(elem, 256, np.random.default_rng(9))
    init = _data(elem, 13, np.random.default_rng(10))
    ref_out = init.copy()
    run_kernel(K.make_atomic_sweep(*case), f"atomic_{kind}_{elem}", [x.copy(), ref_out, np.zeros_like(x)], (1,))
    k = compile_ir(K.make_atomic_sweep(*case), device_arch())
    dev = to_device([x, init.copy(), np.zeros_like(x)])
    k.run((1, 1, 1), dev)
    got = dev[1].numpy()
    if elem.is_float and kind == "add":
        np.testing.assert_allclose(got, ref_out, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, ref_out)
    if kind == "add" and not elem.is_float:
        # the old values returned to the lanes of one slot chain from its initial to its final value
        olds, n = dev[2].numpy(), 253
        for slot in range(13):
            idx = np.arange(slot, n, 13)
            left = sorted([int(init[slot])] + [int(v) for v in olds[idx] + x[idx]])
            right = sorted([int(v) for v in olds[idx]] + [int(got[slot])])
            assert left == right, f"slot {slot}: old values do not chain"


@pytest.mark.parametrize("arch", ARCHS)
def test_cas_compiles(arch):
    compile_ir(K.make_cas(), arch)


@pytest.mark.gpu
@pytest.mark.parametrize("elem", [i32, f32], ids=str)
def test_cas_swaps_only_where_the_comparison_holds(elem):
    rng = np.random.default_rng(2)
    init = _data(elem, 64, rng)
    new = _data(elem, 64, rng)
    cmp = init.copy()
    cmp[::3] = new[::3]  # these compare unequal (almost surely): no swap
    keep = cmp != init
    k = compile_ir(K.make_cas(elem=elem), device_arch())
    dev = to_device([init, cmp, new, np.zeros_like(init)])
    k.run((1, 1, 1), dev)
    np.testing.assert_array_equal(dev[0].numpy(), np.where(keep, init, new))
    np.testing.assert_array_equal(dev[3].numpy(), init)


SCAN_CASES = [(i32, (1024,), 0, "add", False), (i32, (256,), 0, "add", True), (f32, (64, 32), 1, "add", False),
              (i32, (32, 64), 0, "max", False), (i32, (16, 64), 1, "first", False), (i32, (128, 8), 0, "first", True),
              (f32, (512,), 0, "first", True),
              (i64, (4, 8, 32), 2, "add", True)]
SCAN_IDS = [f"{e}-{'x'.join(map(str, s))}-ax{a}-{c}{'-rev' if r else ''}" for e, s, a, c, r in SCAN_CASES]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", SCAN_CASES, ids=SCAN_IDS)
def test_scan_compiles(case, arch):
    compile_ir(K.make_scan(*case), arch, num_warps=8)


@pytest.mark.gpu
@pytest.mark.parametrize("num_warps", [1, 4, 8])
@pytest.mark.parametrize("case", SCAN_CASES, ids=SCAN_IDS)
def test_scan_matches_evaluator(case, num_warps):
    """Including ``first`` (keep the earlier value), associative but not commutative: any combination out of
    scan order shows."""
    elem, shape, axis, comb, rev = case
    x = _data(elem, int(np.prod(shape)), np.random.default_rng(6)) % 1000
    ref = np.zeros_like(x)
    run_kernel(K.make_scan(*case), f"scan_{elem}_{axis}", [x.copy(), ref], (1,))
    k = compile_ir(K.make_scan(*case), device_arch(), num_warps=num_warps)
    dev = to_device([x, np.zeros_like(x)])
    k.run((1, 1, 1), dev)
    got = dev[1].numpy()
    if elem.is_float:
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-3)
    else:
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("arch", ARCHS)
def test_scalar_atomic_result_compiles(arch):
    k = compile_ir(K.make_ticket(), arch)
    assert k.metadata["shared"] >= 4


@pytest.mark.gpu
def test_scalar_atomic_result_reaches_every_thread():
    programs = 37
    k = compile_ir(K.make_ticket(), device_arch())
    dev = to_device([np.zeros(1, np.int32), np.full(programs * 128, -1, np.int32)])
    k.run((programs, 1, 1), dev)
    out = dev[1].numpy().reshape(programs, 128)
    assert (out == out[:, :1]).all(), "threads of one program disagree on the ticket"
    assert sorted(out[:, 0].tolist()) == list(range(programs)) and dev[0].numpy()[0] == programs
