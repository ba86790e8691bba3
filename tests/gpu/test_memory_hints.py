"""Cache operators, eviction priorities and volatile loads reach the PTX as NVIDIA spells them (the forms Triton
emits), on every access width, and assemble, combined as far as PTX's instruction forms allow."""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from gpu_helpers import ARCHS, HAVE_PTXAS, compile_jit, device_arch, to_device


@tilec.jit
def copy_load_hints(dst, src, n, CACHE: tl.constexpr, EVICT: tl.constexpr, VOLATILE: tl.constexpr,
                    BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + o, mask=o < n, other=0, cache_modifier=CACHE, eviction_policy=EVICT, volatile=VOLATILE)
    tl.store(dst + o, x, mask=o < n)


@tilec.jit
def copy_store_hints(dst, src, n, CACHE: tl.constexpr, EVICT: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + o, mask=o < n)
    tl.store(dst + o, x, mask=o < n, cache_modifier=CACHE, eviction_policy=EVICT)


@tilec.jit
def scalar_hints(dst, src, CACHE: tl.constexpr):
    tl.store(dst, tl.load(src, cache_modifier=CACHE) + 1, cache_modifier=".wt")


def _ops(ptx, op):
    return {m for m in re.findall(op + r"\.[\w:.]+", ptx)}


def _load(arch, dtype=np.float32, n=1000, cache="", evict="", volatile=False):
    x = np.zeros(n, dtype)
    return compile_jit(copy_load_hints, [x, x, n], arch, CACHE=cache, EVICT=evict, VOLATILE=volatile, BLOCK=512)


def _store(arch, dtype=np.float32, n=1000, cache="", evict=""):
    x = np.zeros(n, dtype)
    return compile_jit(copy_store_hints, [x, x, n], arch, CACHE=cache, EVICT=evict, BLOCK=512)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("cache", ["", ".ca", ".cg", ".cv"])
def test_load_cache_operator(cache, arch):
    ptx = _load(arch, cache=cache).asm["ptx"]
    loads = _ops(ptx, "ld.global")
    assert loads and all(cache in ld for ld in loads) if cache else not any(
        c in ld for ld in loads for c in (".ca", ".cg", ".cv"))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("cache", ["", ".wb", ".cg", ".cs", ".wt"])
def test_store_cache_operator(cache, arch):
    ptx = _store(arch, cache=cache).asm["ptx"]
    stores = _ops(ptx, "st.global")
    assert stores
    for c in (".wb", ".cg", ".cs", ".wt"):
        assert all((c in s) == (c == cache) for s in stores), (c, stores)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("evict", ["evict_first", "evict_last"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.float64])
def test_eviction_priority_on_loads_and_stores(evict, dtype, arch):
    """``.L1::evict_*`` with, from sm_80, an L2 policy of the same kind (``createpolicy``), as Triton emits them; the
    PTX ISA version is raised to what those need (7.4) even where the architecture's own is older."""
    other = "evict_last" if evict == "evict_first" else "evict_first"
    for k, op in ((_load(arch, dtype, evict=evict), "ld.global"), (_store(arch, dtype, evict=evict), "st.global")):
        ptx = k.asm["ptx"]
        accesses = _ops(ptx, op)
        assert accesses and all(f".L1::{evict}.L2::cache_hint" in a for a in accesses), accesses
        assert f"createpolicy.fractional.L2::{evict}.b64" in ptx and other not in ptx
        assert k.metadata["ptx_version"] >= 74
        if HAVE_PTXAS:
            assert k.asm["cubin"][:4] == b"\x7fELF"
    plain = _load(arch, dtype).asm["ptx"]
    assert "evict" not in plain and "createpolicy" not in plain


def test_eviction_normal_is_the_default():
    assert "evict" not in _load(90, evict="evict_normal").asm["ptx"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.float32, np.int64])
def test_volatile_loads(dtype, arch):
    loads = _ops(_load(arch, dtype, volatile=True).asm["ptx"], "ld")
    assert loads and all(ld.startswith("ld.volatile.global") for ld in loads if ".global" in ld)


@pytest.mark.parametrize("cache", [".ca", ".cg", ".cv"])
def test_scalar_accesses_keep_their_hints(cache):
    x = np.zeros(4, np.int8)
    ptx = compile_jit(scalar_hints, [x, x], 90, CACHE=cache).asm["ptx"]
    assert f"ld.global{cache}.u8" in ptx and "st.global.wt.b8" in ptx


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("cache, evict", [(".cg", "evict_last"), (".ca", "evict_first"), (".cv", "evict_normal")])
def test_cache_operator_with_an_eviction_policy(cache, evict, arch):
    """Both, as a Triton kernel may ask: the cache operator stays, the priority goes to the L2 policy from sm_80
    (PTX's cache-operator form takes ``.L2::cache_hint`` but no L1 priority); priorities without an L2 policy
    are hints and dropped."""
    k = _load(arch, cache=cache, evict=evict)
    loads = _ops(k.asm["ptx"], "ld.global")
    l2 = arch >= 80 and evict in ("evict_first", "evict_last")
    assert loads and all(ld.startswith("ld.global" + cache) and ("L2::cache_hint" in ld) == l2
                         and ".L1::" not in ld for ld in loads), loads
    assert (f"createpolicy.fractional.L2::{evict}.b64" in k.asm["ptx"]) == l2
    stores = _ops(_store(arch, cache=".wt", evict=evict).asm["ptx"], "st.global")
    assert stores and all(st.startswith("st.global.wt") and ".L1::" not in st for st in stores), stores
    if HAVE_PTXAS:
        assert k.asm["cubin"][:4] == b"\x7fELF"


@pytest.mark.parametrize("kwargs", [{"cache": ".ca", "volatile": True}, {"evict": "evict_first", "volatile": True}])
def test_volatile_wins_over_hints(kwargs):
    loads = _ops(_load(90, **kwargs).asm["ptx"], "ld")
    assert loads and all(ld.startswith("ld.volatile.global.") and "evict" not in ld and ".ca" not in ld
                         for ld in loads if ".global" in ld), loads


@pytest.mark.gpu
@pytest.mark.parametrize("cache, evict, volatile", [
    ("", "", False), (".ca", "", False), (".cg", "", False), (".cv", "", False),
    ("", "evict_first", False), ("", "evict_last", False), ("", "", True)])
@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.int64])
def test_hinted_loads_run(cache, evict, volatile, dtype):
    n = 1000
    x = (np.arange(n) % 120).astype(dtype)
    dev = to_device([np.zeros(n, dtype), x])
    tgt = tilec.Target("cuda", device_arch(), 32)
    copy_load_hints[(2,)](dev[0], dev[1], n, CACHE=cache, EVICT=evict, VOLATILE=volatile, BLOCK=512, target=tgt)
    np.testing.assert_array_equal(dev[0].numpy(), x)


@pytest.mark.gpu
@pytest.mark.parametrize("cache, evict", [("", ""), (".wb", ""), (".cg", ""), (".cs", ""), (".wt", ""),
                                          ("", "evict_first"), ("", "evict_last")])
@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.int64])
def test_hinted_stores_run(cache, evict, dtype):
    n = 1000
    x = (np.arange(n) % 120).astype(dtype)
    dev = to_device([np.zeros(n, dtype), x])
    tgt = tilec.Target("cuda", device_arch(), 32)
    copy_store_hints[(2,)](dev[0], dev[1], n, CACHE=cache, EVICT=evict, BLOCK=512, target=tgt)
    np.testing.assert_array_equal(dev[0].numpy(), x)
