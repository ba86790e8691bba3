"""Atomics under contention across the grid's programs (the CPU runs them on several threads): add/max/min/and/
or/xor/xchg/cas with masks, sem= and scope=, returned old values, and Triton's float max/min semantics."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch, rng

PROGRAMS = 48
BLOCK = 64


@tilec.jit
def rmw_kernel(X, Out, Old, n, KIND: tl.constexpr, SEM: tl.constexpr, BLOCK: tl.constexpr, SLOTS: tl.constexpr):
    pid = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    m = o < n
    v = tl.load(X + pid * n + o, mask=m)
    p = Out + o % SLOTS
    if KIND == "add":
        old = tl.atomic_add(p, v, mask=m, sem=SEM)
    elif KIND == "max":
        old = tl.atomic_max(p, v, mask=m, sem=SEM, scope="gpu")
    elif KIND == "min":
        old = tl.atomic_min(p, v, mask=m, sem=SEM, scope="cta")
    elif KIND == "and":
        old = tl.atomic_and(p, v, mask=m, sem=SEM)
    elif KIND == "or":
        old = tl.atomic_or(p, v, mask=m, sem=SEM, scope="sys")
    elif KIND == "xor":
        old = tl.atomic_xor(p, v, mask=m, sem=SEM)
    else:
        old = tl.atomic_xchg(p, v, mask=m, sem=SEM)
    tl.store(Old + pid * n + o, old, mask=m)


REDUCE = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor}


def _data(kind, dt, n):
    r = rng(40)
    if dt.startswith("f"):
        x = r.standard_normal((PROGRAMS, n)) * 10
        if kind == "add":
            x = np.round(x * 4) / 4  # exact sums in any order
        return x.astype(dt)
    info = np.iinfo(dt)
    if kind == "add":
        return r.integers(-1000 if info.min else 1, 1000, (PROGRAMS, n)).astype(dt)
    return r.integers(info.min, info.max, (PROGRAMS, n), dtype=dt, endpoint=True)


CASES = [("add", "int32"), ("add", "uint64"), ("add", "float32"), ("add", "float64"), ("max", "int32"),
         ("max", "uint32"), ("max", "float32"), ("min", "int64"), ("min", "float32"), ("min", "float64"),
         ("and", "int32"), ("or", "uint32"), ("xor", "int64"), ("xchg", "int32"), ("xchg", "float32"),
         ("max", "int8"), ("min", "uint16"), ("or", "uint8"), ("xchg", "int16"), ("max", "float16")]


@pytest.mark.parametrize("kind,dt", CASES)
def test_contended_rmw(mode, kind, dt):
    n, slots = 45, 8
    x = _data(kind, dt, n)
    start = {"add": 0, "max": x.min(), "min": x.max(), "and": -1, "or": 0, "xor": 0, "xchg": 0}[kind]
    out = np.full(slots, start, dt) if kind != "and" else np.full(slots, np.array(-1).astype(dt), dt)
    old = np.zeros((PROGRAMS, n), dt)
    launch(rmw_kernel, (PROGRAMS,), mode, x, out, old, n, KIND=kind, SEM="acq_rel", BLOCK=BLOCK, SLOTS=slots)
    lanes = np.arange(n) % slots
    for s in range(slots):
        vals = x[:, lanes == s].ravel()
        if kind == "xchg":
            # every written value, plus the initial one, is seen exactly once as an old value or the final one
            seen = np.sort(np.concatenate([old[:, lanes == s].ravel(), out[s:s + 1]]))
            np.testing.assert_array_equal(seen, np.sort(np.concatenate([vals, [start]]).astype(dt)))
            continue
        want = REDUCE[kind].reduce(np.concatenate([[out.dtype.type(start)], vals]).astype(dt))
        if kind == "add" and dt.startswith("f"):
            np.testing.assert_allclose(out[s], want, rtol=1e-6)
        else:
            assert out[s] == want, (s, out[s], want)
    if kind == "add" and not dt.startswith("f"):  # positive increments: old values are distinct partial sums
        for s in range(slots):
            olds, vals = old[:, lanes == s].ravel(), x[:, lanes == s].ravel()
            if (vals > 0).all():
                assert len(np.unique(olds)) == len(olds)


@tilec.jit
def float_max_kernel(X, Out, Old, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    v = tl.load(X + o)
    tl.store(Old + o, tl.atomic_max(Out + o, v))
    tl.store(Old + BLOCK + o, tl.atomic_min(Out + BLOCK + o, v))


def test_float_max_min_semantics(mode):
    """Triton's float atomics order values by their bits: a NaN value is ignored, -0.0 < +0.0, and a NaN in
    memory (positive bits) beats every non-negative value in max and loses to it in min."""
    x = np.array([np.nan, 1.0, -1.0, -0.0, 0.0, -5.0, 3.0, np.inf], np.float32)
    cur = np.array([2.0, np.nan, -2.0, 0.0, -0.0, -4.0, -np.inf, 1.0], np.float32)
    out = np.concatenate([cur, cur])
    old = np.zeros(16, np.float32)
    launch(float_max_kernel, (1,), mode, x, out, old, BLOCK=8)
    mx, mn = out[:8], out[8:]
    np.testing.assert_array_equal(old[1:8], cur[1:8])
    np.testing.assert_array_equal(mx.view(np.uint32), np.array(
        [2.0, np.nan, -1.0, 0.0, 0.0, -4.0, 3.0, np.inf], np.float32).view(np.uint32))
    np.testing.assert_array_equal(mn.view(np.uint32), np.array(
        [2.0, 1.0, -2.0, -0.0, -0.0, -5.0, -np.inf, 1.0], np.float32).view(np.uint32))


@tilec.jit
def lock_kernel(Lock, Counter, ITERS: tl.constexpr):
    for _ in range(ITERS):
        while tl.atomic_cas(Lock, 0, 1, sem="acquire") != 0:
            pass
        c = tl.load(Counter, volatile=True)  # a plain read-modify-write, safe only under the lock
        tl.store(Counter, c + 1)
        tl.atomic_xchg(Lock, 0, sem="release")


def test_cas_spin_lock(mode):
    lock, counter = np.zeros(1, np.int32), np.zeros(1, np.int32)
    launch(lock_kernel, (PROGRAMS,), mode, lock, counter, ITERS=20)
    assert counter[0] == PROGRAMS * 20 and lock[0] == 0


@tilec.jit
def cas_kernel(X, Cmp, Val, Old, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Old + o, tl.atomic_cas(X + o, tl.load(Cmp + o), tl.load(Val + o), sem="relaxed", scope="gpu"))


@pytest.mark.parametrize("dt", ["int32", "int64", "uint32", "float32"])
def test_cas_values(mode, dt):
    x = np.arange(8).astype(dt)
    cmp = np.array([0, 9, 2, 9, 4, 9, 6, 9]).astype(dt)
    val = (np.arange(8) + 100).astype(dt)
    old = np.zeros(8, dt)
    launch(cas_kernel, (1,), mode, x, cmp, val, old, BLOCK=8)
    np.testing.assert_array_equal(old, np.arange(8).astype(dt))
    np.testing.assert_array_equal(x, np.where(np.arange(8) % 2 == 0, val, np.arange(8)).astype(dt))


@tilec.jit
def scalar_atomic_kernel(Out):
    tl.atomic_add(Out, 1)
    tl.atomic_max(Out + 1, tl.program_id(0))


def test_scalar_atomics_across_programs(mode):
    out = np.zeros(2, np.int32)
    launch(scalar_atomic_kernel, (300,), mode, out)
    assert out.tolist() == [300, 299]


def test_bad_sem_is_an_error(mode):
    x = np.zeros(64 * PROGRAMS, np.int32)
    with pytest.raises(tilec.CompilationError, match="sem"):
        launch(rmw_kernel, (1,), mode, x, np.zeros(8, np.int32), x.copy(), 4, KIND="add", SEM="strong",
               BLOCK=BLOCK, SLOTS=8)


@tilec.jit
def bf16_add_kernel(X, Out, Old, n, SLOTS: tl.constexpr, BLOCK: tl.constexpr):
    """bf16 memory given as its 16-bit codes (a uint16 array) whose every other element is targeted: an atomic
    writing more than its two bytes shows in the untouched ones."""
    pid = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    m = o < n
    v = tl.load(X + pid * n + o, mask=m)
    out = Out.to(tl.pointer_type(tl.bfloat16), bitcast=True)
    old = tl.atomic_add(out + (o % SLOTS) * 2, v.to(tl.bfloat16), mask=m)
    tl.store(Old + pid * n + o, old.to(tl.float32), mask=m)


def _bf16_codes(x):
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)  # exact for these values


def test_bf16_add_touches_only_its_element(mode):
    """Small integers stay exact in bf16 whatever the order, so the sums and the set of partial sums are known;
    the guard codes between the slots show each atomic wrote two bytes, not a 4-byte float (bf16 lives in f32
    registers on the GPU)."""
    programs, n, slots = 12, 13, 4
    x = rng(41).integers(-3, 4, (programs, n)).astype(np.float32)
    out = np.zeros(2 * slots, np.uint16)
    out[1::2] = 0x7777
    old = np.zeros((programs, n), np.float32)
    launch(bf16_add_kernel, (programs,), mode, x, out, old, n, SLOTS=slots, BLOCK=16)
    lanes = np.arange(n) % slots
    want = np.array([x[:, lanes == s].sum() for s in range(slots)], np.float32)
    np.testing.assert_array_equal(out[::2], _bf16_codes(want))
    np.testing.assert_array_equal(out[1::2], 0x7777)
    assert np.isin(old, np.arange(-200, 201)).all()


@tilec.jit
def fp8_atomic_kernel(X, V, CAS: tl.constexpr):
    p = X.to(tl.pointer_type(tl.float8e5), bitcast=True)
    if CAS:
        tl.atomic_cas(p, V.to(tl.float8e5), V.to(tl.float8e5))
    else:
        tl.atomic_add(p, V.to(tl.float8e5))


@pytest.mark.parametrize("cas", [False, True])
def test_fp8_atomics_are_refused(mode, cas):
    with pytest.raises(tilec.CompilationError, match=r"atomic_(add|cas) does not support tl.float8e5"):
        launch(fp8_atomic_kernel, (1,), mode, np.zeros(4, np.uint8), 1.0, CAS=cas)
