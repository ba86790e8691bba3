"""8-bit tensor-core operands stored the other way round (int8/fp8 ``A @ B`` with B n-contiguous, ``tl.trans``
of a k-major A) are transposed on their way into shared memory, since every matrix unit reads 8-bit operands
k-contiguous. Coalesce gives such a load four consecutive k per thread, the loop carries it as 32-bit words,
and the write into shared memory transposes 4x4 byte blocks into words: no byte stores. Checked on the PTX
(assembled by ptxas where it is on PATH); the results are checked on a GPU in ``test_operand_spellings.py``."""
import re

import pytest
from hypothesis import given, settings, strategies as st

from tilec.gpu.layouts import default_blocked
from tilec.gpu.register_runs import register_run, run_groups

from test_stage_operands import _mm


@pytest.mark.parametrize("dt,acc", [("i8", "i32"), ("fp8e4nv", "fp32")])
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, True)])
def test_transposed_8bit_operands_are_stored_as_words(dt, acc, trans_a, trans_b):
    ck = _mm(90, trans_a=trans_a, trans_b=trans_b, dt=dt, acc_dt=acc, bk=128)
    ptx, gir = ck.asm["ptx"], ck.asm["gir"]
    assert "local_store" in gir  # the transposed operand goes through registers
    assert re.search(r"= load .*tile<128x128x(i8|f8E4M3FN)[^\n]*spt = \[4, 16\]", gir), "4 k per thread"
    assert not re.search(r"st\.shared\.(b8|u8|s8)", ptx)
    assert "prmt.b32" in ptx
    if "cubin" in ck.asm:
        assert ck.metadata["spill_stores"] == 0 and ck.metadata["num_regs"] <= 168


def test_k_major_8bit_operands_keep_their_copies():
    """Operands already k-contiguous are copied as stored: no transposing store, one k per thread."""
    ck = _mm(90, trans_b=True, dt="i8", acc_dt="i32", bk=128)
    assert "local_store" not in ck.asm["gir"] and "spt = [4, 16]" not in ck.asm["gir"]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_register_runs_partition_the_registers_into_consecutive_runs(data):
    shape = (data.draw(st.sampled_from([8, 16, 64])), data.draw(st.sampled_from([4, 16, 128])))
    spt = (data.draw(st.sampled_from([1, 2, 4])), data.draw(st.sampled_from([1, 4, 16])))
    order = data.draw(st.sampled_from([(1, 0), (0, 1)]))
    spt = tuple(min(s, n) for s, n in zip(spt, shape))
    ll = default_blocked(shape, data.draw(st.sampled_from([1, 4])), 32, spt, order).to_linear(shape)
    dim = data.draw(st.sampled_from([0, 1]))
    bits, n = register_run(ll, dim)
    assert n == 1 << len(bits)
    groups = run_groups(ll, bits)
    regs = sorted(r for g in groups for r in g)
    assert regs == list(range(1 << len(ll.reg)))
    for g in groups:
        coords = [ll.coord(r, 0, 0) for r in g]
        assert all(c[dim] == coords[0][dim] + i for i, c in enumerate(coords))
        assert all(c[1 - dim] == coords[0][1 - dim] for c in coords)
