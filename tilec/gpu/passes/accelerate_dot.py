"""accelerate-dot: put ``dot`` on tensor cores (the m16n8k16 / m16n8k8 matrix-unit instructions of arch 80+) where the types and shapes allow: f16/bf16
inputs (m16n8k16; fp8 inputs widened to f16 first, exactly), and f32 inputs whose ``input_precision`` is tf32
(m16n8k8, inputs rounded to tf32; ``tf32x3`` as three tf32 dots of split operands, ``split_tf32x3``); f16 inputs
with f16 accumulators (``out_dtype=float16``). On arch
90, 16-bit dots whose rows fill whole warpgroups get the version-3 layout (warpgroup instructions reading
shared memory, see warpgroup-dot); the registers are the same.

The accumulator takes an :class:`MmaLayout` and the operands :class:`MmaOperandLayout`s; ``convert_layout`` ops
bridge from and back to the surrounding layouts, and remove-layout-conversions then carries the accumulator of a
``for`` loop in the mma layout (see its loop rule), so only the operands move per iteration. Dots that do not
qualify keep the FMA path. First, for every dot, ``acc + dot(a, b, 0)`` becomes ``dot(a, b, acc)``.

A target without those matrix units (``GpuTarget.mma_arch`` 0) passes ``dot_layouts`` (its
``GpuTarget.dot_layouts``): that then decides, for every dot, the (A, B, accumulator) layouts or None (FMA), and
the arch-based choice above is not used (``AccelerateDot.for_target`` picks).
"""
from __future__ import annotations

from ...ir import ops as O
from .. import ops as G
from ...ir.builder import Builder
from ...ir.types import f16, i32
from ..layouts import MmaLayout, MmaOperandLayout
from ...ir.core import OpResult
from ...targets.options import Options
from .common import Pass, convert_before, is_zero, retype_behind_convert

MMA_INPUTS = ("f16", "bf16")
FP8 = ("f8e4m3", "f8e5m2")  # every value exact in f16: such dots run as f16 dots


def widen_fp8(op) -> bool:
    """fp8 operands of a dot with an f32 accumulator become f16 (``cast`` before the dot: exact, e5m2 is f16's
    upper byte and e4m3's range and precision fit f16), so the f16 tensor-core paths take it; without this the
    dot stayed on the FMA path, whose unrolled code compiled for minutes at 128x128x64 tiles."""
    if op.a.type.element.name not in FP8 or op.b.type.element.name not in FP8 or \
            op.acc.type.element.name != "f32":
        return False
    b = Builder()
    b.set_insertion_point_before(op)
    b.loc = op.loc
    for i in (0, 1):
        v = op.operands[i]
        op.set_operand(i, b.op(O.CastOp, v, result_type=v.type.with_element(f16)))
    return True


def split_tf32x3(op):
    """``tf32x3`` as Triton computes it on tensor cores: each f32 operand is split into a tf32 part (its low 13
    mantissa bits cleared) and the remainder, and three tf32 dots sum the small products first, then the big one:
    ``a_big @ b_small + a_small @ b_big + a_big @ b_big`` (the remainder's own product, below f32's precision, is
    dropped). Returns the three new dots, which replace ``op``."""
    b = Builder()
    b.set_insertion_point_before(op)
    b.loc = op.loc

    def split(v):
        bits = b.op(O.BitcastOp, v, result_type=v.type.with_element(i32))
        mask = b.constant(-8192, bits.type)  # 0xffffe000: sign, exponent and tf32's 10 mantissa bits
        big = b.op(O.BitcastOp, b.op(O.AndOp, bits, mask, result_type=bits.type), result_type=v.type)
        return big, b.op(O.SubOp, v, big, result_type=v.type)
    (a_big, a_small), (b_big, b_small) = split(op.a), split(op.b)
    acc, dots = op.acc, []
    for x, y in ((a_big, b_small), (a_small, b_big), (a_big, b_big)):
        acc = b.op(O.DotOp, x, y, acc, result_type=op.result.type, input_precision="tf32", max_num_imprecise_acc=0)
        dots.append(acc.op)
    op.result.replace_all_uses_with(acc)
    op.erase()
    return dots


def mma_warps(M: int, N: int, num_warps: int):
    """Warps over (rows, columns): split whichever per-warp extent is larger (in 16-row / 8-column tiles'
    worth), keeping per-warp tiles near square so that operand traffic stays balanced."""
    wm = wn = 1
    while wm * wn < num_warps:
        if M // (16 * wm) >= 2 and (M // wm >= N // wn or N // (8 * wn) < 2):
            wm *= 2
        elif N // (8 * wn) >= 2:
            wn *= 2
        else:
            wm *= 2  # more warps than tiles: the extra ones hold copies
    return wm, wn


def k_width(op) -> int:
    """Consecutive k elements per 32-bit operand register: 2 for 16-bit inputs, 4 for 8-bit inputs (integers
    and fp8), 1 for f32 inputs computed as tf32."""
    return {"f32": 1, "i8": 4, "u8": 4, "f8e4m3": 4, "f8e5m2": 4}.get(op.a.type.element.name, 2)


#: k per warpgroup instruction by input type, and the accumulator type it needs
WARPGROUP_K = {"f16": (16, "f32"), "bf16": (16, "f32"), "f8e4m3": (32, "f32"), "f8e5m2": (32, "f32"),
               "i8": (32, "i32"), "u8": (32, "i32"), "f32": (8, "f32")}


def warpgroup_inputs(op) -> int:
    """k per warpgroup instruction for ``op``'s input types (0: no warpgroup instruction takes them): 16-bit
    pairs, fp8 (e4m3/e5m2, mixed too) and 8-bit integers with 32-bit accumulators, f32 computed as tf32."""
    a, b, c = op.a.type.element.name, op.b.type.element.name, op.acc.type.element.name
    if a not in WARPGROUP_K or b not in WARPGROUP_K:
        return 0
    k, acc = WARPGROUP_K[a]
    if c != acc or WARPGROUP_K[b] != (k, acc):
        return 0
    if k == 16 and a != b:
        return 0  # f16 x bf16 has no instruction
    if a == "f32" and (b != "f32" or op.attrs.get("input_precision", "ieee") != "tf32"):
        return 0
    return k


def qualifies(op, arch: int) -> bool:
    a, b, c = op.a.type, op.b.type, op.acc.type
    if arch < 80 or len(c.shape) not in (2, 3) or b.element != a.element:
        return False
    if a.element.name in ("i8", "u8"):  # m16n8k32 with 32-bit integer accumulators
        *_, M, K = a.shape
        return c.element.name == "i32" and M % 16 == 0 and b.shape[-1] % 8 == 0 and K % 32 == 0
    if c.element.name == "f16":  # m16n8k16 with f16 accumulators (out_dtype=float16), f16 inputs only
        if a.element.name != "f16":
            return False
    elif c.element.name != "f32":
        return False
    elif a.element.name == "f32":
        if op.attrs.get("input_precision", "ieee") != "tf32":
            return False  # ieee stays exact on the FMA path (tf32x3 is split into tf32 dots first)
    elif a.element.name not in MMA_INPUTS:
        return False
    *_, M, K = a.shape
    N = b.shape[-1]
    return M % 16 == 0 and N % 8 == 0 and K % (8 * k_width(op)) == 0


def _feeds_dot_a(v, limit=64) -> bool:
    """``v`` reaches operand A of a dot through pure single-result ops (attention's ``p = exp(qk - m)``)."""
    stack, seen = [v], set()
    while stack and len(seen) < limit:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        for user, idx in x.uses:
            if isinstance(user, O.DotOp):
                if idx == 0:
                    return True
            elif user.is_pure and not user.regions and len(user.results) == 1:
                stack.append(user.result)
    return False


def _from_dot(v, limit=64) -> bool:
    """``v`` is computed from a dot's result through pure single-result ops."""
    stack, seen = [v], set()
    while stack and len(seen) < limit:
        x = stack.pop()
        if x in seen or not isinstance(x, OpResult):
            continue
        seen.add(x)
        if isinstance(x.op, O.DotOp):
            return True
        if x.op.is_pure and not x.op.regions:
            stack.extend(o for o in x.op.operands if o.type.is_tile)
    return False


def in_chain(op) -> bool:
    """A dot whose result feeds another dot's A operand, or whose A operand comes from a dot: both then want
    the same warps-along-rows arrangement so that the hand-over stays in registers."""
    return _feeds_dot_a(op.result) or _from_dot(op.a)



def fold_add_into_acc(op):
    """``x + dot(a, b, 0)`` -> ``dot(a, b, x)`` (through layout conversions), so that a loop's accumulator is
    the dot's own and can stay in the dot's layout."""
    if not is_zero(op.acc) or len(op.result.uses) != 1:
        return
    v, user = op.result, op.result.uses[0][0]
    chain = []
    while isinstance(user, G.ConvertLayoutOp) and len(user.result.uses) == 1:
        chain.append(user)
        v, user = user.result, user.result.uses[0][0]
    if not isinstance(user, O.AddOp) or user.parent is not op.parent:
        return
    other = user.operands[1] if user.operands[0] is v else user.operands[0]
    if isinstance(other, OpResult) and other.op.parent is op.parent and \
            op.parent.ops.index(other.op) > op.parent.ops.index(op):
        return  # defined after the dot
    acc_layout = op.acc.type.layout
    op.set_operand(2, other)
    convert_before(op, 2, acc_layout)
    user.replace_with([v])


class AccelerateDot(Pass):
    name = "accelerate-dot"

    def __init__(self, arch: int = 80, num_warps: int = Options.num_warps, dot_layouts=None):
        self.arch, self.num_warps = arch, num_warps
        self.dot_layouts = dot_layouts

    @classmethod
    def for_target(cls, target, num_warps: int) -> "AccelerateDot":
        """The pass for a :class:`~tilec.gpu.target.GpuTarget`: its generation of mma units when it has one
        (``mma_arch``), else its own ``dot_layouts``."""
        if target.mma_arch:
            return cls(target.mma_arch, num_warps)
        return cls(0, num_warps, target.dot_layouts)

    def run(self, module):
        for f in module.funcs:
            nw = f.attrs.get("num_warps", self.num_warps)
            for op in list(f.walk()):
                if isinstance(op, O.DotOp) and op.attrs.get("input_precision") == "tf32x3" and \
                        op.a.type.element.name == "f32" and self.dot_layouts is None:
                    op.attrs["input_precision"] = "tf32"  # would the matrix units take it as tf32?
                    takes = qualifies(op, self.arch) or self.warpgroups(op, nw)
                    op.attrs["input_precision"] = "tf32x3"
                    if takes:
                        fold_add_into_acc(op)
                        for d in split_tf32x3(op):
                            self.rewrite(d, nw)
                        continue
                if isinstance(op, O.DotOp):
                    fold_add_into_acc(op)
                    if self.arch >= 80 and self.dot_layouts is None and not self.warpgroups(op, nw):
                        widen_fp8(op)  # no fp8 instruction for this dot: exact f16 instead
                    if self.dot_layouts is not None:
                        chosen = self.dot_layouts(op, nw)
                        if chosen is not None:
                            self.assign(op, *chosen)
                    else:
                        self.rewrite(op, nw)

    def warpgroups(self, op, num_warps) -> bool:
        return self.warpgroup_warps(op, num_warps) is not None

    def warpgroup_warps(self, op, num_warps):
        """Warps over (rows, columns) for warpgroup matrix units (arch 90), or None where they do not apply:
        inputs ``warpgroup_inputs`` takes; whole warpgroups stacked along rows (64 rows each) as far as M
        allows, the others splitting N into contiguous blocks (a 64-row tile with 8 warps: two warpgroups of
        N/2 columns each, as Triton splits it); N up to 256 per instruction (8-bit integers: multiples of 16
        past 32)."""
        if len(op.acc.type.shape) != 2 or self.arch < 90 or num_warps % 4:
            return None
        M, N = op.acc.type.shape
        K = op.a.type.shape[1]
        kstep = warpgroup_inputs(op)
        if not kstep or K % kstep:
            return None
        wm = num_warps
        while wm > 4 and M % (16 * wm):
            wm //= 2
        wn = num_warps // wm
        n = N // wn
        if M % (16 * wm) or N % wn or n % 8 or not (n <= 256 or n % 256 == 0):
            return None
        if op.a.type.element.name in ("i8", "u8") and not (min(n, 256) % 16 == 0 or min(n, 256) in (8, 24)):
            return None
        return wm, wn

    def rewrite(self, op, num_warps):
        if not qualifies(op, self.arch) and not self.warpgroups(op, num_warps):
            return
        if len(op.acc.type.shape) == 3:  # batched: warps along the batch first, each matrix as a 2-d dot
            B, M, N = op.acc.type.shape
            wb = min(num_warps, B)
            mma = MmaLayout((wb,) + mma_warps(M, N, num_warps // wb))
            kw = k_width(op)
            self.assign(op, MmaOperandLayout(0, mma, kw), MmaOperandLayout(1, mma, kw), mma)
            return
        M, N = op.acc.type.shape
        wpc = mma_warps(M, N, num_warps)
        if in_chain(op) and M // 16 >= num_warps:
            wpc = (num_warps, 1)  # rows only: the result's registers are the next dot's A operand as they are
        split = self.warpgroup_warps(op, num_warps)
        version = 3 if split is not None else 2
        if version == 3:
            wpc = split
        mma = MmaLayout(wpc, version)
        kw = k_width(op)
        self.assign(op, MmaOperandLayout(0, mma, kw), MmaOperandLayout(1, mma, kw), mma)

    @staticmethod
    def assign(op, a_layout, b_layout, acc_layout):
        """Give ``op`` its operand and accumulator layouts, converting around it."""
        convert_before(op, 0, a_layout)
        convert_before(op, 1, b_layout)
        convert_before(op, 2, acc_layout)
        retype_behind_convert(op.result, acc_layout, op)
