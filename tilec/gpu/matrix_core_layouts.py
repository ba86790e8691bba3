"""Linear layouts of the MFMA and WMMA matrix-core instructions (``#mfma``, ``#wmma`` and their operands).

They live beside the other encodings so that gir text naming them parses and every generic pass and conversion
handles them from their bases alone; which instruction computes a given dot, and whether a target has it, is the
target's business (it chooses these layouts through ``GpuTarget.dot_layouts`` and lowers the dot itself).

Index bits, lowest first, per instruction tile (rows x columns, both ``m_dim``):

- ``#mfma`` accumulator, 64-lane waves. ``m_dim`` 32 (16 registers): registers 1, 2 -> rows 1, 2; lanes 0-4 ->
  columns; lane 5 -> row 4; registers 4, 8 -> rows 8, 16: lane ``l`` register ``r`` holds row
  ``8 (r / 4) + 4 (l / 32) + r % 4``, column ``l % 32``. ``m_dim`` 16 (4 registers): registers -> rows 1, 2; lanes
  0-3 -> columns; lanes 4, 5 -> rows 4, 8: row ``4 (l / 16) + r``, column ``l % 16``.
- ``#mfma_op`` operands: ``k_width`` consecutive k per lane (registers), lanes 0..log2(m_dim)-1 along rows (A) or
  columns (B), the remaining lane bits along k in steps of ``k_width``: one instruction consumes
  ``k_width * 64 / m_dim`` k.
- ``#wmma`` accumulator (16x16, 32-lane waves, 8 registers): lanes 0-3 -> columns, lane 4 -> row 1, registers ->
  rows 2, 4, 8: row ``2 r + l / 16``, column ``l % 16``.
- ``#wmma_op`` operands: all 16 k of a row (A) or column (B) in one lane's registers, lanes 0-3 along rows or
  columns; lane 4 holds copies (the instruction reads the same operand from both half-waves).

Warps tile instruction tiles over (rows, columns) by ``warps_per_cta``; larger shapes repeat in registers (k
first for operands, then columns, then rows); operands are copied across the warps that split the other
operand's dimension.
"""
from __future__ import annotations

from dataclasses import dataclass

from .layout_text import register_layout
from .linear_layouts import _fmt, _linear_checked, _log2, _log_bases, _repeat_bases
from .mma_layouts import MatrixUnitLayout, MatrixUnitOperandLayout


def _unit(dim, v):
    return (v, 0) if dim == 0 else (0, v)


def _warp_bases(tile, wpc, op_idx=None):
    """Warp index bits: rows first then columns, ``tile`` apart; for an operand the other operand's dimension
    gets zero bases (those warps hold copies)."""
    wm, wn = _log2(wpc[0]), _log2(wpc[1])
    rows = _log_bases(0, 2, tile, wm) if op_idx != 1 else [(0, 0)] * wm
    cols = _log_bases(1, 2, tile, wn) if op_idx != 0 else [(0, 0)] * wn
    return rows + cols


def _acc_linear(shape, tile, reg, lane, wpc):
    M, N = shape
    wm, wn = _log2(wpc[0]), _log2(wpc[1])
    reg = list(reg) + _repeat_bases(1, 2, tile << wn, N) + _repeat_bases(0, 2, tile << wm, M)
    return _linear_checked(shape, reg, lane, _warp_bases(tile, wpc))


def _operand_linear(shape, op_idx, tile, k_width, k_lane_bits, wpc, k_lane_step=None):
    """A [M, K] (op_idx 0) or B [K, N] (op_idx 1): ``k_width`` k per lane in registers, log2(tile) lane bits
    along the matrix's own dimension, then ``k_lane_bits`` lane bits along k (``k_lane_step`` apart, zero:
    copies), then repeats over k and the own dimension."""
    own = 0 if op_idx == 0 else 1
    kd = 1 - own
    step = k_width if k_lane_step is None else k_lane_step
    reg = [_unit(kd, 1 << i) for i in range(_log2(k_width))]
    lane = [_unit(own, 1 << i) for i in range(_log2(tile))]
    lane += [_unit(kd, step << i) if step else (0, 0) for i in range(k_lane_bits)]
    k_inst = k_width * (1 << k_lane_bits) if step else k_width
    wm, wn = _log2(wpc[0]), _log2(wpc[1])
    reg += _repeat_bases(kd, 2, k_inst, shape[kd]) + _repeat_bases(own, 2, tile << (wm if own == 0 else wn),
                                                                   shape[own])
    return _linear_checked(shape, reg, lane, _warp_bases(tile, wpc, op_idx))


@dataclass(frozen=True, repr=False)
class MfmaLayout(MatrixUnitLayout):
    """Accumulator of the 64-lane MFMA instructions with ``m_dim`` x ``m_dim`` tiles (32 or 16)."""
    invariant_operands_in_shared = False  # 512 registers per lane; the LDS is better spent on operand rings
    warps_per_cta: tuple
    m_dim: int = 32
    name = "mfma"

    def __post_init__(self):
        if self.m_dim not in (16, 32):
            raise ValueError(f"mfma layout: m_dim must be 16 or 32, not {self.m_dim}")

    @property
    def k_lane_bits(self) -> int:
        """Lane bits along k in the operands: the lanes a row leaves over (64 / m_dim groups)."""
        return 6 - _log2(self.m_dim)

    def _body(self):
        return f"wpc = {_fmt(self.warps_per_cta)}, m = {self.m_dim}"

    def _linear(self, shape):
        t = self.m_dim
        if t == 32:
            reg, lane = [(1, 0), (2, 0), (8, 0), (16, 0)], [(0, 1 << i) for i in range(5)] + [(4, 0)]
        else:
            reg, lane = [(1, 0), (2, 0)], [(0, 1 << i) for i in range(4)] + [(4, 0), (8, 0)]
        return _acc_linear(shape, t, reg, lane, self.warps_per_cta)


@dataclass(frozen=True, repr=False)
class MfmaOperandLayout(MatrixUnitOperandLayout):
    """Operand ``op_idx`` (0: A [M, K], 1: B [K, N]) of an MFMA dot into ``parent``, ``k_width`` consecutive k
    per lane per instruction (4 for 16-bit inputs, 1 for f32, 2 for xf32, 4 or 8 for 8-bit integers)."""
    op_idx: int
    parent: MfmaLayout
    k_width: int = 4
    name = "mfma_op"

    def _options(self):
        return f", kw = {self.k_width}"

    def _linear(self, shape):
        p = self.parent
        return _operand_linear(shape, self.op_idx, p.m_dim, self.k_width, p.k_lane_bits, p.warps_per_cta)


@dataclass(frozen=True, repr=False)
class WmmaLayout(MatrixUnitLayout):
    """Accumulator of the 32-lane 16x16x16 WMMA instructions whose operands are repeated in both half-waves."""
    # each half-wave holds its own copy of an operand's rows, so an operand held in registers across a loop (the
    # Q of attention) costs twice its size: 64 VGPRs a lane for a 16x128 f16 tile, which made attention D128
    # spill. Held in LDS and read per K step, as the loop's own operands are, it fits (docs/performance.md)
    invariant_operands_in_shared = True
    warps_per_cta: tuple
    name = "wmma"
    m_dim = 16

    def _body(self):
        return f"wpc = {_fmt(self.warps_per_cta)}"

    def _linear(self, shape):
        reg = [(2, 0), (4, 0), (8, 0)]
        lane = [(0, 1), (0, 2), (0, 4), (0, 8), (1, 0)]
        return _acc_linear(shape, 16, reg, lane, self.warps_per_cta)


@dataclass(frozen=True, repr=False)
class WmmaOperandLayout(MatrixUnitOperandLayout):
    """Operand ``op_idx`` of a WMMA dot into ``parent``: a lane holds a whole 16-k row (A) or column (B)."""
    op_idx: int
    parent: WmmaLayout
    name = "wmma_op"
    k_width = 16

    def _linear(self, shape):
        return _operand_linear(shape, self.op_idx, 16, 16, 1, self.parent.warps_per_cta, k_lane_step=0)


register_layout("mfma", lambda f: MfmaLayout(f["wpc"], f.get("m", 32)))
register_layout("mfma_op", lambda f: MfmaOperandLayout(f["idx"], f["parent"], f.get("kw", 4)))
register_layout("wmma", lambda f: WmmaLayout(f["wpc"]))
register_layout("wmma_op", lambda f: WmmaOperandLayout(f["idx"], f["parent"]))
