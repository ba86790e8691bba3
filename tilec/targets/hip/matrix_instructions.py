"""Which matrix-core instruction (MFMA on gfx9, WMMA on gfx11) computes a dot, and the layouts it needs.

This table is the only place that decides whether a matrix intrinsic may be emitted: LLVM aborts the whole
process on an MFMA/WMMA intrinsic the processor lacks, so :func:`select` answers only from it, and the lowering
(``matrix_dot.py``) refuses any instruction the table does not list for the architecture. Each entry was
checked against LLVM 22's AMDGPU backend (``tests/hip/test_matrix_cores.py`` compiles every listed pair and
shows that an unlisted one aborts). Dots no entry covers (fp8, u8 on MFMA, f16 accumulators, gfx10, gfx12,
wave64 on gfx11, shapes that are not multiples of a tile) keep the generic FMA path.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import BackendError
from ...gpu.matrix_core_layouts import MfmaLayout, MfmaOperandLayout, WmmaLayout, WmmaOperandLayout

CDNA1 = ("gfx908",)
CDNA2 = ("gfx90a",)
CDNA3 = ("gfx942",)
CDNA4 = ("gfx950",)
RDNA3 = ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152")


@dataclass(frozen=True)
class Instruction:
    """One matrix instruction: its LLVM intrinsic, family (``mfma``/``wmma``), tile (``m_dim`` square), k
    elements per lane per operand (``k_width``), input and accumulator kinds, the processors that have it."""
    intrinsic: str
    family: str
    m_dim: int
    k_width: int
    inputs: str  # f16, bf16, f32, xf32, i8, iu8
    acc: str  # f32 or i32
    archs: tuple

    @property
    def lanes(self) -> int:
        return 64 if self.family == "mfma" else 32

    @property
    def k(self) -> int:
        """k consumed per instruction."""
        return self.k_width * (64 // self.m_dim) if self.family == "mfma" else 16

    @property
    def acc_regs(self) -> int:
        return self.m_dim * self.m_dim // self.lanes


def _mfma(name, m, kw, inputs, acc, archs):
    return Instruction(f"llvm.amdgcn.mfma.{name}", "mfma", m, kw, inputs, acc, archs)


INSTRUCTIONS = (
    _mfma("f32.32x32x8f16", 32, 4, "f16", "f32", CDNA1 + CDNA2 + CDNA3 + CDNA4),
    _mfma("f32.16x16x16f16", 16, 4, "f16", "f32", CDNA1 + CDNA2 + CDNA3 + CDNA4),
    _mfma("f32.32x32x8bf16.1k", 32, 4, "bf16", "f32", CDNA2 + CDNA3 + CDNA4),
    _mfma("f32.16x16x16bf16.1k", 16, 4, "bf16", "f32", CDNA2 + CDNA3 + CDNA4),
    _mfma("f32.32x32x2f32", 32, 1, "f32", "f32", CDNA1 + CDNA2 + CDNA3 + CDNA4),
    _mfma("f32.16x16x4f32", 16, 1, "f32", "f32", CDNA1 + CDNA2 + CDNA3 + CDNA4),
    _mfma("f32.32x32x4.xf32", 32, 2, "xf32", "f32", CDNA3),
    _mfma("f32.16x16x8.xf32", 16, 2, "xf32", "f32", CDNA3),
    _mfma("i32.32x32x8i8", 32, 4, "i8", "i32", CDNA1 + CDNA2),
    _mfma("i32.16x16x16i8", 16, 4, "i8", "i32", CDNA1 + CDNA2),
    _mfma("i32.32x32x16.i8", 32, 8, "i8", "i32", CDNA3 + CDNA4),
    _mfma("i32.16x16x32.i8", 16, 8, "i8", "i32", CDNA3 + CDNA4),
    Instruction("llvm.amdgcn.wmma.f32.16x16x16.f16", "wmma", 16, 16, "f16", "f32", RDNA3),
    Instruction("llvm.amdgcn.wmma.f32.16x16x16.bf16", "wmma", 16, 16, "bf16", "f32", RDNA3),
    Instruction("llvm.amdgcn.wmma.i32.16x16x16.iu8", "wmma", 16, 16, "iu8", "i32", RDNA3),
)


def available(arch) -> list:
    """The instructions ``arch`` (an :class:`~.arch.Arch`) can execute: MFMA needs 64-lane waves, the gfx11
    WMMA layouts here are the 32-lane ones."""
    return [i for i in INSTRUCTIONS if arch.name in i.archs and arch.warp_size == i.lanes]


def input_kind(op) -> str | None:
    """The instruction input kind a dot asks for (None: no matrix instruction computes it)."""
    a, b, c = op.a.type.element.name, op.b.type.element.name, op.acc.type.element.name
    if a != b:
        return None
    if a in ("f16", "bf16") and c == "f32":
        return a
    if a == "f32" and c == "f32":
        return "xf32" if op.attrs.get("input_precision", "ieee") == "tf32" else "f32"
    if a in ("i8", "u8") and c == "i32":
        return a
    return None


def _accepts(instr: Instruction, kind: str) -> bool:
    if instr.inputs == kind:
        return True
    if instr.inputs == "iu8":  # WMMA takes signed or unsigned 8-bit inputs (a flag per operand)
        return kind in ("i8", "u8")
    return False


def select(arch, op, nonk_dim: int = 0):
    """The instruction for ``op`` on ``arch`` (None: FMA). ``nonk_dim`` is Triton's ``matrix_instr_nonkdim``
    (16 or 32; 0: 32 where the tile fits, else 16). tf32 falls back to exact f32 instructions where the
    processor has no xf32."""
    kind = input_kind(op)
    if kind is None or len(op.acc.type.shape) != 2:
        return None
    M, K = op.a.type.shape
    N = op.b.type.shape[1]
    cands = [i for i in available(arch) if _accepts(i, kind)]
    if kind == "xf32" and not cands:
        cands = [i for i in available(arch) if i.inputs == "f32"]
    if nonk_dim:
        cands = [i for i in cands if i.m_dim == nonk_dim]
    fits = [i for i in cands if M % i.m_dim == 0 and N % i.m_dim == 0 and K % i.k == 0]
    fits.sort(key=lambda i: -i.m_dim)
    return fits[0] if fits else None


def lookup(arch, intrinsic_inputs: str, family: str, m_dim: int, k_width: int) -> Instruction:
    """The instruction the lowering of a dot in these layouts emits on ``arch``; BackendError when the
    architecture has none (a hand-written layout, say), before anything reaches LLVM."""
    kinds = (intrinsic_inputs, "f32") if intrinsic_inputs == "xf32" else (intrinsic_inputs,)
    for kind in kinds:
        for i in available(arch):
            if i.family == family and i.m_dim == m_dim and i.k_width == k_width and _accepts(i, kind):
                return i
    raise BackendError(f"{arch.name} (wave{arch.warp_size}) has no {family} instruction for {intrinsic_inputs} "
                       f"inputs with {m_dim}x{m_dim} tiles and {k_width} k per lane")


def warps(M: int, N: int, tile: int, num_warps: int):
    """Warps over (rows, columns) in ``tile``-sized steps: split the larger per-warp extent, extra warps (more
    than tiles) hold copies along rows."""
    wm = wn = 1
    while wm * wn < num_warps:
        if M // (tile * wm) >= 2 and (M // wm >= N // wn or N // (tile * wn) < 2):
            wm *= 2
        elif N // (tile * wn) >= 2:
            wn *= 2
        else:
            wm *= 2
    return wm, wn


def layouts(instr: Instruction, M: int, N: int, num_warps: int, rows_only: bool = False):
    """(A, B, accumulator) layouts for ``instr`` on an [M, N] result. ``rows_only``: warps only along rows (a
    chained dot whose result feeds the next dot's A)."""
    wpc = (num_warps, 1) if rows_only else warps(M, N, instr.m_dim, num_warps)
    if instr.family == "mfma":
        acc = MfmaLayout(wpc, instr.m_dim)
        return MfmaOperandLayout(0, acc, instr.k_width), MfmaOperandLayout(1, acc, instr.k_width), acc
    acc = WmmaLayout(wpc)
    return WmmaOperandLayout(0, acc), WmmaOperandLayout(1, acc), acc
