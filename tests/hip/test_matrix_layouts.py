"""The MFMA/WMMA layouts and the lowering's register plan, run through a numpy model of each instruction
(matrix_isa_model.py, written from the ISA's lane formulas): every thread's registers are filled from random
A, B, C through tilec's linear layouts, the plan's instructions are executed lane by lane, and the accumulator
registers, read back through the accumulator layout, must equal A @ B + C everywhere. A wrong basis, a wrong
result-element order or a mismatched operand layout all change the product."""
import numpy as np
import pytest

from matrix_isa_model import execute
from tilec.errors import BackendError
from tilec.gpu.layouts import parse_layout
from tilec.gpu.matrix_core_layouts import MfmaLayout, MfmaOperandLayout, WmmaLayout
from tilec.targets.hip import matrix_dot, matrix_instructions as mi

SHAPES = ((32, 32, 32, 1), (64, 64, 64, 4), (128, 64, 32, 4), (32, 128, 64, 2), (64, 32, 64, 8), (16, 16, 64, 1))


def simulate(instr, M, N, K, num_warps, rows_only=False, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.integers(-4, 5, (M, K)).astype(np.float64)
    B = rng.integers(-4, 5, (K, N)).astype(np.float64)
    C = rng.integers(-4, 5, (M, N)).astype(np.float64)
    la, lb, lc = mi.layouts(instr, M, N, num_warps, rows_only)
    a_ll, b_ll, c_ll = la.to_linear((M, K)), lb.to_linear((K, N)), lc.to_linear((M, N))
    lanes = instr.lanes
    steps = matrix_dot.plan(instr, a_ll, b_ll, c_ll, K)

    def regs(ll, X, w):
        return np.array([[X[ll.coord(r, lane, w)] for r in range(ll.num_regs)] for lane in range(lanes)])
    covered = np.zeros((M, N), bool)
    for w in range(num_warps):
        ar, br, acc = regs(a_ll, A, w), regs(b_ll, B, w), regs(c_ll, C, w)
        for a_i, b_i, c_i in steps:
            acc[:, c_i] = execute(instr, ar[:, a_i], br[:, b_i], acc[:, c_i])
        want = A @ B + C
        for lane in range(lanes):
            for r in range(c_ll.num_regs):
                coord = c_ll.coord(r, lane, w)
                assert acc[lane, r] == want[coord], (w, lane, r, coord)
                covered[coord] = True
    assert covered.all()
    return len(steps)


@pytest.mark.parametrize("instr", mi.INSTRUCTIONS, ids=lambda i: i.intrinsic.split("amdgcn.")[1])
@pytest.mark.parametrize("M,N,K,nw", SHAPES)
def test_plan_and_layouts_compute_the_product(instr, M, N, K, nw):
    if M % instr.m_dim or N % instr.m_dim or K % instr.k:
        pytest.skip("shape not a multiple of the tile")
    steps = simulate(instr, M, N, K, nw)
    wm, wn = mi.warps(M, N, instr.m_dim, nw)
    tiles = max(1, M // instr.m_dim // wm) * max(1, N // instr.m_dim // wn)
    assert steps == tiles * (K // instr.k)


@pytest.mark.parametrize("instr", [i for i in mi.INSTRUCTIONS if i.intrinsic.endswith(("32x32x8f16", "16x16x16f16",
                                                                                         "16x16x16.f16"))])
def test_chained_dot_layout_rows_only(instr):
    simulate(instr, 128, 64, 64, 4, rows_only=True)


def test_model_catches_a_wrong_result_order():
    """The model is not vacuous: a plan with two result elements swapped fails."""
    instr = next(i for i in mi.INSTRUCTIONS if i.intrinsic.endswith("32x32x8f16"))
    real = matrix_dot.acc_offsets
    try:
        matrix_dot.acc_offsets = lambda i: (lambda o: [o[1], o[0]] + o[2:])(real(i))
        with pytest.raises(AssertionError):
            simulate(instr, 32, 32, 16, 1)
    finally:
        matrix_dot.acc_offsets = real


def test_wmma_operands_are_repeated_in_both_half_waves():
    la, lb, _ = mi.layouts(next(i for i in mi.INSTRUCTIONS if i.family == "wmma"), 16, 16, 1)
    for lay in (la, lb):
        ll = lay.to_linear((16, 16))
        assert ll.lane[4] == (0, 0) and ll.num_regs == 16 and ll.free_mask("lane") == 16


def test_accumulator_bases_match_the_isa():
    ll = MfmaLayout((1, 1), 32).to_linear((32, 32))
    assert ll.coord(5, 33, 0) == (8 * 1 + 4 * 1 + 1, 1)  # register 5 of lane 33
    ll = MfmaLayout((2, 2), 16).to_linear((64, 64))
    assert ll.coord(3, 17, 0) == (4 + 3, 1) and ll.coord(0, 0, 1) == (16, 0) and ll.coord(0, 0, 2) == (0, 16)
    ll = WmmaLayout((1, 1)).to_linear((16, 16))
    assert ll.coord(3, 20, 0) == (7, 4)


@pytest.mark.parametrize("lay", [MfmaLayout((2, 2), 16), MfmaOperandLayout(1, MfmaLayout((4, 1), 32), 8),
                                 WmmaLayout((2, 1)), mi.layouts(mi.INSTRUCTIONS[-1], 32, 32, 2)[0]])
def test_layout_text_round_trips(lay):
    assert parse_layout(str(lay)) == lay


def test_bad_layouts_and_mismatched_plans_are_errors():
    with pytest.raises(ValueError, match="m_dim"):
        MfmaLayout((1, 1), 8)
    instr = next(i for i in mi.INSTRUCTIONS if i.intrinsic.endswith("32x32x8f16"))
    other = next(i for i in mi.INSTRUCTIONS if i.intrinsic.endswith("16x16x16f16"))
    la, _, _ = mi.layouts(other, 64, 64, 1)
    _, lb, lc = mi.layouts(instr, 64, 64, 1)
    with pytest.raises(BackendError, match="do not match"):
        matrix_dot.plan(instr, la.to_linear((64, 32)), lb.to_linear((32, 64)), lc.to_linear((64, 64)), 32)
