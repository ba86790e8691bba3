"""tl.randint/rand/randn against an independent numpy Philox, itself checked against Random123's known-answer
vectors, so the stream is the published Philox-4x32-10 bit for bit (and Triton's integer -> float mappings)."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from langhelp import launch

M32 = 0xFFFFFFFF


def philox4x32(c, k, rounds=10):
    """Reference Philox-4x32 on numpy uint64 arrays holding 32-bit values."""
    c = [np.asarray(x, np.uint64) & M32 for x in c]
    k0, k1 = (np.uint64(x & M32) for x in k)
    for _ in range(rounds):
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & M32, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & M32]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & M32, (k1 + np.uint64(0xBB67AE85)) & M32
    return [x.astype(np.uint32) for x in c]


KAT = [  # Random123 kat_vectors, philox4x32 10 rounds: counter, key, expected
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((M32,) * 4, (M32, M32), (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def test_reference_matches_known_answers():
    for ctr, key, want in KAT:
        got = philox4x32([np.array([v]) for v in ctr], key)
        assert [int(g[0]) for g in got] == list(want)


@tilec.jit
def philox_impl_kernel(C, K, Out, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    a, b, cc, d = tl.philox_impl(tl.load(C + i * 4), tl.load(C + i * 4 + 1), tl.load(C + i * 4 + 2),
                                 tl.load(C + i * 4 + 3), tl.load(K + i * 2), tl.load(K + i * 2 + 1))
    tl.store(Out + i * 4, a)
    tl.store(Out + i * 4 + 1, b)
    tl.store(Out + i * 4 + 2, cc)
    tl.store(Out + i * 4 + 3, d)


def test_philox_impl_known_answers(mode):
    c = np.array([v for ctr, _, _ in KAT for v in ctr] + [0] * 4, np.uint32)
    k = np.array([v for _, key, _ in KAT for v in key] + [0] * 2, np.uint32)
    out = np.zeros(16, np.uint32)
    launch(philox_impl_kernel, (1,), mode, c, k, out, BLOCK=4)
    assert out[:12].tolist() == [v for _, _, want in KAT for v in want]


@tilec.jit
def random_kernel(seed, Ints, Uni, Nrm, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a, b, c, d = tl.randint4x(seed, offs)
    tl.static_assert(a.dtype == tl.uint32)
    tl.store(Ints + offs * 4, a, mask=mask)
    tl.store(Ints + offs * 4 + 1, b, mask=mask)
    tl.store(Ints + offs * 4 + 2, c, mask=mask)
    tl.store(Ints + offs * 4 + 3, d, mask=mask)
    tl.store(Uni + offs, tl.rand(seed, offs), mask=mask)
    tl.store(Nrm + offs, tl.randn(seed, offs), mask=mask)


def to_uniform(i):
    x = i.view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x)
    return (x.astype(np.float32) * np.float32(4.6566127342e-10)).astype(np.float32)


@pytest.mark.parametrize("seed", [0, 12345, -7, 2**33 + 5])
def test_streams(mode, seed):
    n = 300
    ints = np.zeros(4 * n, np.uint32)
    uni, nrm = np.zeros(n, np.float32), np.zeros(n, np.float32)
    launch(random_kernel, (3,), mode, seed, ints, uni, nrm, n, BLOCK=128)
    s64 = seed & 0xFFFFFFFFFFFFFFFF  # the seed is sign-extended to 64 bits, then split into the key
    ref = philox4x32([np.arange(n), 0, 0, 0], (s64 & M32, s64 >> 32))
    np.testing.assert_array_equal(ints.reshape(n, 4), np.stack(ref, -1))
    np.testing.assert_array_equal(uni, to_uniform(ref[0]))
    assert uni.min() >= 0 and uni.max() < 1
    u1, u2 = np.maximum(to_uniform(ref[0]), np.float32(1e-7)), to_uniform(ref[1])
    want = np.sqrt(-2.0 * np.log(u1.astype(np.float64))) * np.cos(6.283185307179586 * u2.astype(np.float64))
    np.testing.assert_allclose(nrm, want, rtol=1e-4, atol=1e-4)


@tilec.jit
def random_64_kernel(seed, Ints, Uni, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK).to(tl.int64) + 2**40
    r = tl.randint(seed, offs)
    tl.static_assert(r.dtype == tl.uint64)
    tl.store(Ints + tl.arange(0, BLOCK), r)
    tl.store(Uni + tl.arange(0, BLOCK), tl.rand(seed, offs))


def test_64_bit_offsets_use_philox_4x64(mode):
    ints, uni = np.zeros(16, np.uint64), np.zeros(16, np.float32)
    launch(random_64_kernel, (1,), mode, 42, ints, uni, BLOCK=16)
    assert len(set(ints.tolist())) == 16
    x = ints.view(np.int64).astype(object)
    want = np.array([float(v if v >= 0 else -v - 1) * 1.0842020432385337e-19 for v in x], np.float32)
    np.testing.assert_allclose(uni, want, rtol=1e-6)
    assert uni.min() >= 0 and uni.max() < 1


@tilec.jit
def rand4x_kernel(seed, U, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    u = tl.rand4x(seed, offs)
    n = tl.randn4x(seed, offs)
    for j in tl.static_range(4):
        tl.store(U + offs * 4 + j, u[j])
        tl.store(N + offs * 4 + j, n[j])


def test_rand4x_randn4x(mode):
    u, n = np.zeros(64 * 4, np.float32), np.zeros(64 * 4, np.float32)
    launch(rand4x_kernel, (1,), mode, 3, u, n, BLOCK=64)
    ref = philox4x32([np.arange(64), 0, 0, 0], (3, 0))
    np.testing.assert_array_equal(u.reshape(64, 4), np.stack([to_uniform(r) for r in ref], -1))
    assert abs(n.mean()) < 0.2 and 0.8 < n.std() < 1.2
