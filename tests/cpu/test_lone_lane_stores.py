"""Masked stores with one lane on, on AVX-512 hosts (fuzz seeds 406280, 407096): LLVM 22's X86 backend turns a
masked store of a truncated integer vector whose constant mask has one lane on into a scalar store of the
untruncated element, so ``tl.umulhi`` stored to int32 under ``cols < n1`` with ``n1 == 1`` wrote 8 bytes and
zeroed the next element (llvm/llvm-project#179489). The CPU backend stores a lone lane as a scalar there
(``targets/cpu/memory.py: masked_store``). This host may lack AVX-512: the tests switch the workaround on, run
it, and read the x86 assembly an AVX-512 machine would get for the same LLVM IR."""
import inspect
import re

import llvmlite.binding as llvm
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.codegen import driver
from tilec.targets.cpu import memory


@tilec.jit
def lone_lanes(a_ptr, hi_ptr, b_ptr, h_ptr, n1, k, B: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, B)
    a = tl.load(a_ptr + pid * B + cols)
    hi = tl.umulhi(a, a)  # a 64-bit product truncated to 32 bits
    tl.store(hi_ptr + pid * B + cols, hi, mask=cols < n1)  # n1 == 1: a constant one-lane mask
    tl.store(b_ptr + pid * B + cols, (a * 3).to(tl.int8), mask=cols == k)  # one lane known at run time
    tl.store(h_ptr + pid * B + cols, (a + 1).to(tl.int16), mask=(cols == k) | (cols < n1))


@pytest.fixture
def lone_lane_workaround(monkeypatch):
    monkeypatch.setattr(memory, "lone_lane_stores", lambda: True)
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")  # the cache key does not see the switch


@pytest.mark.parametrize("n1,k", [(1, 0), (1, 3), (1, 7), (3, 5), (8, 2), (2, 9)])
def test_lone_lanes_store_one_element(lone_lane_workaround, n1, k):
    rng = np.random.default_rng(n1 * 16 + k)
    a = rng.integers(0, 2 ** 32, 16, dtype=np.uint64).astype(np.uint32)
    outs = {}
    for interpret in (True, False):
        bufs = [np.full(16, 48, np.uint32), np.full(16, 48, np.int8), np.full(16, 48, np.int16)]
        tilec.jit(lone_lanes.fn, interpret=interpret)[(2,)](a, *bufs, n1, k, B=8)
        outs[interpret] = bufs
    for got, want in zip(outs[False], outs[True]):
        np.testing.assert_array_equal(got, want)
    assert outs[True][0][1] == 48 or n1 > 1  # the element after a lone lane keeps its value


def test_no_one_lane_constant_masked_store_is_left(lone_lane_workaround):
    a = np.arange(16, dtype=np.uint32)
    ck = tilec.jit(lone_lanes.fn).warmup(a, np.zeros(16, np.uint32), np.zeros(16, np.int8), np.zeros(16, np.int16),
                                       1, 4, B=8, grid=(2,))
    llir = ck.asm["llir"]
    masks = re.findall(r"@llvm\.masked\.store\.[^(]*\(.*?<\d+ x i1> (<[^>]*>|%[\w.]+)\)", llir)
    assert all(m.count("true") != 1 for m in masks), masks
    # what an AVX-512 machine makes of it: every store to the int32 output is 4 bytes wide
    driver.init()
    tm = llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(cpu="skylake-avx512", opt=3)
    asm = tm.emit_assembly(llvm.parse_assembly(llir))
    source, first = inspect.getsourcelines(lone_lanes.fn)
    line = next(i for i, text in enumerate(source, first) if "tl.store(hi_ptr" in text)
    at, code = None, []
    for text in asm.splitlines():
        m = re.match(r"\s*\.loc\s+\d+\s+(\d+)", text)
        if m:
            at = int(m.group(1))
        elif at == line and not text.strip().startswith("."):
            code.append(text.strip())
    assert code  # the store's instructions, located by the line tables
    wide = [c for c in code if re.match(r"(movq\s+%r\w+|vmovq\s+%xmm\d+|vmovsd\s+%xmm\d+|vmovlps|vpextrq)\b.*\(", c)]
    assert not wide, code


def test_workaround_is_on_exactly_with_avx512():
    assert memory.lone_lane_stores() == (driver.host_vector_bytes() == 64)
