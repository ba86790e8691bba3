"""Matrix-unit layouts: the bases every accumulator and operand layout of a matrix-unit dot derives from, and the
``m16n8k*`` / warpgroup encodings (``#mma``, ``#mma_op``). The MFMA and WMMA ones are in
``matrix_core_layouts.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .linear_layouts import OperandLayout, WarpGridLayout, _fmt, _linear_checked, _log2, _log_bases, _repeat_bases


class MatrixUnitLayout(WarpGridLayout):
    """Base of the accumulator layouts of matrix-unit dots (each vendor's instruction family is one subclass):
    the generic passes treat any of them alike (a dot's result stays there, the math after it sinks into it);
    only the target that chose it lowers the dot itself. Two questions stage-operands asks of the instructions
    behind a layout: whether they read operand ``op_idx`` from shared memory themselves, and which placement
    order they need there for an element type (None: any; e.g. (1, 0) for A [M, K]: k contiguous)."""

    #: whether a dot operand computed before the loop around the dot (attention's ``q``) is kept in shared
    #: memory rather than in registers through the loop: worth it where registers are the scarcer resource
    invariant_operands_in_shared = True

    def operand_in_shared(self, op_idx: int, element=None) -> bool:
        return False

    def shared_operand_order(self, op_idx: int, element) -> tuple | None:
        return None


class MatrixUnitOperandLayout(OperandLayout):
    """Base of the operand layouts (A or B) of matrix-unit dots: a ``dot`` whose operands carry one is lowered
    by the target's ``lower_dot``, never by the FMA path."""


@dataclass(frozen=True, repr=False)
class MmaLayout(MatrixUnitLayout):
    """Accumulator of the ``m16n8k*`` matrix-unit instructions (arch 80+): per warp a 16x8 tile where lane
    ``4g + t`` holds rows g and g+8, columns 2t and 2t+1; ``warps_per_cta`` tile warps over (rows, columns); the
    pattern repeats in registers over larger shapes. ``version`` 3: the same registers computed by warpgroup
    instructions (four consecutive warps, 64 rows, operands read from shared memory); warps along rows come in
    fours (whole warpgroups), and warpgroups along columns each take one contiguous block of columns
    (``column_block``). Three entries in ``warps_per_cta`` make it the layout of batched dots, warps first along the batch."""
    warps_per_cta: tuple
    version: int = 2
    name = "mma"

    def _body(self):
        v = f", version = {self.version}" if self.version != 2 else ""
        return f"wpc = {_fmt(self.warps_per_cta)}{v}"

    def flat(self) -> "MmaLayout":
        """The rank-2 layout of one matrix of a batched (rank-3) one."""
        return MmaLayout(tuple(self.warps_per_cta[-2:]), self.version)

    def operand_in_shared(self, op_idx: int, element=None) -> bool:
        # warpgroup units read B through a descriptor; A may come in registers, except tf32 (f32) elements
        return self.version == 3 and (op_idx == 1 or element is not None and element.name == "f32")

    def shared_operand_order(self, op_idx: int, element) -> tuple | None:
        # warpgroup units transpose 16-bit operands while reading; 8-bit and tf32 operands must be k-contiguous
        if self.version == 3 and element.name not in ("f16", "bf16"):
            return (1, 0) if op_idx == 0 else (0, 1)
        return None

    def _linear(self, shape):
        if len(shape) == 3:
            return _batched(self, shape, self.warps_per_cta[0])
        M, N = shape
        wm, wn = _log2(self.warps_per_cta[0]), _log2(self.warps_per_cta[1])
        reg = [(0, 1), (8, 0)]
        lane = [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)]
        col = self.column_block(N)
        warp = _log_bases(0, 2, 16, wm) + _log_bases(1, 2, col, wn)
        reg += _repeat_bases(1, 2, 8, col) if col > 8 else _repeat_bases(1, 2, 8 << wn, N)
        reg += _repeat_bases(0, 2, 16 << wm, M)
        return _linear_checked(shape, reg, lane, warp)

    def column_block(self, N: int) -> int:
        """Columns between warps that split N: 8 (m16n8 tiles interleaved) for ``mma.sync``; for warpgroup
        units (version 3) each warpgroup past the row ones takes one contiguous block of N / warps-along-N
        columns, the range one instruction computes."""
        wn = self.warps_per_cta[1]
        return max(8, N // wn) if self.version == 3 and wn > 1 else 8


def _batched(layout, shape, wb):
    """A batched (rank-3) matrix-unit layout: the rank-2 layout of the same encoding with the batch warps
    removed, for every matrix of the batch; warps take batch entries first (``wb`` of them), then registers
    repeat over the rest of the batch."""
    flat = layout.flat()
    ll = flat.to_linear(tuple(shape[1:]))
    up = lambda bs: tuple((0,) + tuple(x) for x in bs)  # noqa: E731
    warp = _log_bases(0, 3, 1, _log2(wb)) + list(up(ll.warp))
    reg = list(up(ll.reg)) + _repeat_bases(0, 3, wb, shape[0])
    return _linear_checked(shape, reg, up(ll.lane), warp)


@dataclass(frozen=True, repr=False)
class MmaOperandLayout(MatrixUnitOperandLayout):
    """Operand ``op_idx`` (0: A [M, K], 1: B [K, N]) of ``mma.sync`` for an accumulator in ``parent``.
    ``k_width`` 2 (16-bit inputs, m16n8k16): A fragments hold (row g, k 2t..2t+1) with +8 on rows and k, B
    fragments (k 2t..2t+1, column g) with +8 on k; ``k_width`` 4 (8-bit inputs, m16n8k32) the same with four
    consecutive k per register and +16 on k. ``k_width`` 1 (tf32, m16n8k8): A holds (row g, k t) with +8 on
    rows and +4 on k, B holds (k t, column g) with +4 on k. Warps that split the other operand's dimension hold
    copies."""
    op_idx: int
    parent: MmaLayout
    k_width: int = 2
    name = "mma_op"

    def flat(self) -> "MmaOperandLayout":
        return MmaOperandLayout(self.op_idx, self.parent.flat(), self.k_width)

    def _options(self):
        return f", kw = {self.k_width}" if self.k_width != 2 else ""

    def _linear(self, shape):
        if len(shape) == 3:
            return _batched(self, shape, self.parent.warps_per_cta[0])
        wm, wn = _log2(self.parent.warps_per_cta[0]), _log2(self.parent.warps_per_cta[1])
        if self.k_width == 1:
            if self.op_idx == 0:
                M, K = shape
                reg = [(8, 0), (0, 4)] + _repeat_bases(1, 2, 8, K) + _repeat_bases(0, 2, 16 << wm, M)
                lane = [(0, 1), (0, 2), (1, 0), (2, 0), (4, 0)]
                warp = _log_bases(0, 2, 16, wm) + [(0, 0)] * wn
            else:
                K, N = shape
                col = self.parent.column_block(N)
                reg = [(4, 0)] + _repeat_bases(0, 2, 8, K)
                reg += _repeat_bases(1, 2, 8, col) if col > 8 else _repeat_bases(1, 2, 8 << wn, N)
                lane = [(1, 0), (2, 0), (0, 1), (0, 2), (0, 4)]
                warp = [(0, 0)] * wm + _log_bases(1, 2, col, wn)
            return _linear_checked(shape, reg, lane, warp)
        kw = self.k_width  # consecutive k elements per 32-bit register: 2 (16-bit inputs) or 4 (8-bit)
        within = [1 << i for i in range(kw.bit_length() - 1)]
        kt = 8 * kw  # k per instruction: 16 or 32
        if self.op_idx == 0:
            M, K = shape
            reg = [(0, w) for w in within] + [(8, 0), (0, 4 * kw)]
            lane = [(0, kw), (0, 2 * kw), (1, 0), (2, 0), (4, 0)]
            warp = _log_bases(0, 2, 16, wm) + [(0, 0)] * wn
            reg += _repeat_bases(1, 2, kt, K) + _repeat_bases(0, 2, 16 << wm, M)
        else:
            K, N = shape
            reg = [(w, 0) for w in within] + [(4 * kw, 0)]
            lane = [(kw, 0), (2 * kw, 0), (0, 1), (0, 2), (0, 4)]
            col = self.parent.column_block(N)
            warp = [(0, 0)] * wm + _log_bases(1, 2, col, wn)
            reg += _repeat_bases(0, 2, kt, K)
            reg += _repeat_bases(1, 2, 8, col) if col > 8 else _repeat_bases(1, 2, 8 << wn, N)
        return _linear_checked(shape, reg, lane, warp)
