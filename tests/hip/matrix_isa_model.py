"""A numpy model of the MFMA and WMMA instructions as the AMD ISA documents describe them (CDNA3 ISA, "Matrix
fused multiply-add"; RDNA3 ISA, "Wave matrix multiply-accumulate"), written from those lane/register formulas
independently of tilec's layouts: one instruction takes every lane's operand and accumulator registers and
returns every lane's result registers.

- MFMA, ``m`` x ``m`` tiles (m = 32 or 16), ``kw`` k per lane: lane ``l`` holds A[l % m, kw (l // m) + j] and
  B[kw (l // m) + j, l % m] (j < kw); result register ``e`` of lane ``l`` is D[8 (e // 4) + 4 (l // 32) + e % 4,
  l % 32] for m = 32, D[4 (l // 16) + e, l % 16] for m = 16.
- WMMA 16x16x16 (32 lanes): lane ``l`` holds A[l % 16, j] and B[j, l % 16] for all 16 j (lanes 16-31 repeat
  lanes 0-15: the instruction requires it); result register ``e`` is D[2 e + l // 16, l % 16].
"""
from __future__ import annotations

import numpy as np


def a_coord(family, m, kw, lane, j):
    if family == "wmma":
        return lane % 16, j
    return lane % m, kw * (lane // m) + j


def b_coord(family, m, kw, lane, j):
    r, k = a_coord(family, m, kw, lane, j)
    return k, r


def d_coord(family, m, lane, e):
    if family == "wmma":
        return 2 * e + lane // 16, lane % 16
    if m == 32:
        return 8 * (e // 4) + 4 * (lane // 32) + e % 4, lane % 32
    return 4 * (lane // 16) + e, lane % 16


def execute(instr, a_regs, b_regs, c_regs):
    """``a_regs``/``b_regs``: [lanes, k_width], ``c_regs``: [lanes, acc_regs] -> result [lanes, acc_regs]."""
    fam, m, kw = instr.family, instr.m_dim, instr.k_width
    lanes = instr.lanes
    A = np.full((m, instr.k), np.nan)
    B = np.full((instr.k, m), np.nan)
    C = np.full((m, m), np.nan)
    for lane in range(lanes):
        for j in range(kw):
            for M, coord, regs in ((A, a_coord, a_regs), (B, b_coord, b_regs)):
                idx = coord(fam, m, kw, lane, j)
                if not np.isnan(M[idx]) and M[idx] != regs[lane][j]:
                    raise AssertionError(f"lanes disagree on the operand element {idx}: the instruction "
                                         f"requires both half-waves to hold it")
                M[idx] = regs[lane][j]
        for e in range(instr.acc_regs):
            C[d_coord(fam, m, lane, e)] = c_regs[lane][e]
    assert not (np.isnan(A).any() or np.isnan(B).any() or np.isnan(C).any()), "operand not fully covered"
    D = A @ B + C
    return np.array([[D[d_coord(fam, m, lane, e)] for e in range(instr.acc_regs)] for lane in range(lanes)])
