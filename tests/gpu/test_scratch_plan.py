"""Scratch shared memory has one plan (``tilec/gpu/scratch.py``): allocate-shared sizes each op's region from it
and the lowering addresses the plan's arrays through one helper (``gpu/lowering/scratch.py: ScratchRef.ptr``).

The main check lowers every kind of scratch user (``scratch_kernels.py``) for several targets with that helper
instrumented, then evaluates each address it built for every thread of the block (the thread index is the
only input; a gather's loaded index enters as the range its wrap leaves): every access lies inside the array it
names, a vector access is aligned to its width, and in kernels without shared buffers of their own every
shared-memory address came from the helper. No GPU needed."""
import functools
import os
import re
from unittest import mock

import llvmlite.ir as ir
import numpy as np
import pytest

import tilec
from scratch_kernels import CASES
from tilec.errors import BackendError
from tilec.gpu import ops as G
from tilec.gpu.lowering.function import FuncLowering
from tilec.gpu.lowering.scratch import Scratch, ScratchRef
from tilec.gpu.passes.allocate_shared import AllocateShared
from tilec.gpu.passes.insert_barriers import InsertBarriers
from tilec.gpu.scratch import ALIGN, SCRATCH, ScratchPlan, plan_of, scratch_plan
from tilec.ir import ops as O
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir

TARGETS = {"sm_75": ("cuda", 75, 32), "sm_80": ("cuda", 80, 32), "sm_90": ("cuda", 90, 32),
           "gfx942": ("hip", "gfx942", 64), "gfx1100": ("hip", "gfx1100", 32)}

_EXACT = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor, "shl": np.left_shift, "lshr": np.right_shift, "ashr": np.right_shift,
          "udiv": np.floor_divide, "sdiv": np.floor_divide, "urem": np.remainder, "srem": np.fmod}
_COMPARE = {"eq": np.equal, "ne": np.not_equal, "ult": np.less, "slt": np.less, "ule": np.less_equal,
            "sle": np.less_equal, "ugt": np.greater, "sgt": np.greater, "uge": np.greater_equal,
            "sge": np.greater_equal}


class Ranges:
    """Each integer value of a lowering as per-thread bounds (lo, hi), numpy arrays over the block's threads:
    exact (lo == hi) where the value follows from the thread index and constants; an interval where it depends
    on data (a loaded value: any i32, until a mask or remainder bounds it)."""

    def __init__(self, tid, threads):
        t = np.arange(threads, dtype=np.int64)
        self.n, self.memo, self.keep = threads, {id(tid): (t, t)}, [tid]

    def __call__(self, v):
        r = self.memo.get(id(v))
        if r is None:
            r = self.memo[id(v)] = self._eval(v)
            self.keep.append(v)  # ids stay unique while the value lives
        return r

    def _full(self, c):
        return np.full(self.n, c, dtype=np.int64)

    def _eval(self, v):
        if isinstance(v, ir.Constant) and isinstance(v.type, ir.IntType) and isinstance(v.constant, int):
            c = self._full(v.constant)
            return c, c
        op = getattr(v, "opname", None)
        if op in ("zext", "sext", "trunc"):
            return self(v.operands[0])
        if op == "select":
            (clo, chi), (alo, ahi), (blo, bhi) = map(self, v.operands)
            known = clo == chi
            return (np.where(known, np.where(clo != 0, alo, blo), np.minimum(alo, blo)),
                    np.where(known, np.where(clo != 0, ahi, bhi), np.maximum(ahi, bhi)))
        if op == "icmp":
            (alo, ahi), (blo, bhi) = map(self, v.operands)
            known = (alo == ahi) & (blo == bhi)
            r = _COMPARE[v.op](alo, blo).astype(np.int64)
            return np.where(known, r, 0), np.where(known, r, 1)
        if op in _EXACT:
            (alo, ahi), (blo, bhi) = map(self, v.operands)
            exact = _EXACT[op](alo, blo)
            known = (alo == ahi) & (blo == bhi)
            if known.all():
                return exact, exact
            lo, hi = _interval(op, alo, ahi, blo, bhi)
            return np.where(known, exact, lo), np.where(known, exact, hi)
        return self._full(-2 ** 31), self._full(2 ** 31 - 1)  # data: a load, a call


def _interval(op, alo, ahi, blo, bhi):
    """Bounds of ``a op b`` for ``a`` in [alo, ahi], ``b`` in [blo, bhi] (shift amounts exact)."""
    if op == "add":
        return alo + blo, ahi + bhi
    if op == "sub":
        return alo - bhi, ahi - blo
    if op == "mul":
        p = np.stack([alo * blo, alo * bhi, ahi * blo, ahi * bhi])
        return p.min(0), p.max(0)
    if op in ("shl", "lshr", "ashr"):
        return _EXACT[op](alo, blo), _EXACT[op](ahi, blo)
    if op == "urem":
        return np.zeros_like(bhi), bhi - 1
    if op == "srem":
        return 1 - bhi, bhi - 1
    any_a, any_b = alo < 0, blo < 0
    if op == "and":  # a non-negative side bounds the result
        both = any_a & any_b
        hi = np.minimum(np.where(any_a, bhi, ahi), np.where(any_b, ahi, bhi))
        return np.where(both, -2 ** 31, 0), np.where(both, 2 ** 31 - 1, hi)
    m = np.maximum(ahi, bhi)  # or, xor, division: below the next power of two of the larger side
    bits = np.where(m > 0, np.floor(np.log2(np.maximum(m, 1))).astype(np.int64) + 1, 0)
    either = any_a | any_b
    return np.where(either, -2 ** 31, 0), np.where(either, 2 ** 31 - 1, (np.int64(1) << bits) - 1)


@functools.lru_cache(maxsize=None)
def _lowered(case, target):
    """Compile ``case`` for ``target`` with the scratch helper and the function lowering instrumented:
    ([lowering], [(ScratchRef, elements accessed, pointer)])."""
    lowerings, accesses = [], []
    ptr, run = ScratchRef.ptr, FuncLowering.run

    def recording_ptr(self, elem_offset, count=1):
        p = ptr(self, elem_offset, count)
        accesses.append((self, count, p))
        return p

    def recording_run(self, fn=None):
        lowerings.append(self)
        return run(self, fn)
    src, warps = CASES[case]
    with mock.patch.object(ScratchRef, "ptr", recording_ptr), mock.patch.object(FuncLowering, "run", recording_run), \
            mock.patch.dict(os.environ, {"TILEC_ALWAYS_COMPILE": "1"}):
        tilec.compile(src, tilec.Target(*TARGETS[target]), {"num_warps": warps})
    return lowerings, accesses


def _out_of_bounds(L, accesses):
    """What the accesses of lowering ``L`` do outside their arrays or regions, for every thread."""
    ranges = Ranges(L.tid, L.num_warps * L.target.warp_size)
    end = L.func.attrs.get("smem_end", L.func.attrs.get("shared", 0))
    bad = []
    for ref, count, p in accesses:
        if ref.region.L is not L:
            continue
        a, span = ref.array, count * ref.elem_bytes
        if ref.region.base % ALIGN or ref.region.base + ref.region.plan.bytes > end:
            bad.append(f"{ref.region.what}: region at {ref.region.base} of {ref.region.plan.bytes} bytes, "
                       f"the function's shared memory ends at {end}")
        lo, hi = ranges(p.indices[0])
        first, last = ref.byte_offset, ref.byte_offset + a.numel * a.elem_bytes - span
        if lo.min() < first or hi.max() > last:
            bad.append(f"{ref.region.what}: bytes {lo.min()}..{hi.max() + span - 1} of array {a.name!r} at "
                       f"{first}..{last + span - 1}")
        exact = lo == hi
        if span > 1 and (lo[exact] % span).any():
            bad.append(f"{ref.region.what}: a {span}-byte access to {a.name!r} at {sorted(set(lo[exact] % span))} "
                       f"past a multiple of {span}")
    return bad


def _shared_geps(L):
    name = L.target.shared_symbol
    return [i for bb in L.fn.blocks for i in bb.instructions
            if isinstance(i, ir.GEPInstr) and getattr(i.pointer, "name", None) == name]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES)
def test_scratch_accesses_stay_in_their_arrays(case, target):
    lowerings, accesses = _lowered(case, target)
    for L in lowerings:
        assert _out_of_bounds(L, accesses) == [], L.func.sym_name
        if not any(isinstance(op, G.LocalAllocOp) for op in L.func.walk()):  # only scratch: all through the plan
            made = {id(p) for _, _, p in accesses}
            assert all(id(g) in made for g in _shared_geps(L)), "a shared-memory address built past the plan"


def test_every_scratch_user_kind_is_exercised():
    """Each op class with a plan rule has a case whose lowering addresses its plan (sm_75: every dot on the FMA
    path), and every op given a region addresses it; on sm_90 a conversion's matrix-fragment stores (stmatrix)
    take their addresses from the plan too."""
    seen = set()
    for target in ("sm_75", "sm_90"):
        for case in CASES:
            lowerings, accesses = _lowered(case, target)
            addressed = {id(ref.region.op) for ref, _, _ in accesses}
            seen |= {type(ref.region.op) for ref, _, _ in accesses}
            planned = [op for L in lowerings for op in L.func.walk() if scratch_plan(op) is not None]
            assert all(id(op) in addressed for op in planned), case
    assert set(SCRATCH.entries) <= seen
    (L,), accesses = _lowered("f16 dot 64x64x32", "sm_90")
    made = {id(p) for _, _, p in accesses}
    assert any(i.opname == "ptrtoint" and id(i.operands[0]) in made for bb in L.fn.blocks for i in bb.instructions)


def test_the_checker_finds_an_access_past_its_array():
    """The evaluation itself: a lowering that read one element past a reduction's array would be caught."""
    (L,), accesses = _lowered.__wrapped__("column sums f32 256x4", "sm_80")  # a fresh lowering to add to
    ref, count, p = next(a for a in accesses if a[0].array.name == "operand0")
    L.b = ir.IRBuilder(L.fn.append_basic_block("probe"))
    i32 = ir.IntType(32)
    past = ref.ptr(L.b.add(ir.Constant(i32, ref.numel - 1), L.b.and_(L.tid, ir.Constant(i32, 1))))
    assert _out_of_bounds(L, [(ref, 1, past)]) and not _out_of_bounds(L, [(ref, count, p)])


class _Lowering:
    """What the scratch helper needs of a lowering: a builder and the shared-memory symbol."""

    def __init__(self):
        m = ir.Module()
        f = ir.Function(m, ir.FunctionType(ir.VoidType(), [ir.IntType(32)]), "k")
        self.b, self.arg = ir.IRBuilder(f.append_basic_block()), f.args[0]
        self.smem = ir.GlobalVariable(m, ir.ArrayType(ir.IntType(8), 0), "smem", addrspace=3)


def _scratch():
    plan = plan_of("a reduction of", [("operand0", 1, (4, 3)), ("operand1", 4, (4, 3))])
    return Scratch(_Lowering(), None, plan, 32, "a test")


def test_the_helper_addresses_the_plan():
    s = _scratch()
    values, indices = s.array("operand0", 1), s.array("operand1", 4)
    assert (values.byte_offset, indices.byte_offset) == (32, 32 + 12)  # indices from the next 4-byte boundary
    assert indices.ptr(s.L.arg).indices[0].operands[0].constant == 44


@pytest.mark.parametrize("misuse, message", [
    (lambda s: s.array("operand2", 4), "no scratch array 'operand2'"),
    (lambda s: s.array("operand1", 8), "8-byte elements from scratch array 'operand1' of 4-byte"),
    (lambda s: s.array("operand1", 4).ptr(ir.Constant(ir.IntType(32), 12)), "elements 12..12 of scratch array"),
    (lambda s: s.array("operand0", 1).ptr(ir.Constant(ir.IntType(32), 10), 4), "elements 10..13 of scratch array"),
    (lambda s: s.array("operand1", 4).ptr(s.L.arg, 4), "a 16-byte access to scratch array 'operand1', aligned to 4"),
])
def test_the_helper_refuses_what_the_plan_does_not_hold(misuse, message):
    with pytest.raises(BackendError, match=re.escape(message)):
        misuse(_scratch())


def test_a_plan_keeps_its_arrays_inside_its_bytes():
    with pytest.raises(ValueError, match="does not lie in its 8-byte region"):
        plan_of("a test of", [("a", 4, (4,))], bytes=8)
    assert isinstance(plan_of("a test of", [("a", 4, (4,))]), ScratchPlan)


def test_a_dot_with_fma_operand_layouts_gets_the_region_its_lowering_reads(tmp_path):
    """A dot whose operands have FMA operand layouts (``#dot_op``, gir written by hand) goes the FMA path, which
    reads both operands from shared memory: its plan gives it the region (allocate-shared gave none before, and
    the lowering stopped with an internal error)."""
    src, warps = CASES["fma dot f32 32x32x16"]
    target = tilec.Target("cuda", 75, 32)
    gir = tilec.compile(src, target, {"num_warps": warps}).asm["gir"]
    gir = re.sub(r" \{smem_offset = \d+\}", "", gir)
    a = re.search(r"= dot (%\d+), %b,", gir).group(1)
    b_layout = re.search(r"%b = load %\d+ : tile<16x32xf32, (#blocked<[^>]*>)>", gir).group(1)
    gir = re.sub(rf"({a} = convert_layout %a : tile<32x16xf32, )(#blocked<[^>]*>)>",
                 r"\1#dot_op<idx = 0, parent = \2>>", gir)
    gir = re.sub(r"(    )%b = load ([^\n]*)\n", rf"\1%b0 = load \2\n\1%b = convert_layout %b0 : tile<16x32xf32, "
                 rf"#dot_op<idx = 1, parent = {b_layout}>>\n", gir)
    module = parse_module(gir)
    AllocateShared().run(module)
    InsertBarriers().run(module)
    (dot,) = [op for op in module.walk() if isinstance(op, O.DotOp)]
    assert "smem_offset" in dot.attrs and scratch_plan(dot)["b"].offset % ALIGN == 0
    path = tmp_path / "k.gir"
    path.write_text(print_ir(module))
    with mock.patch.dict(os.environ, {"TILEC_ALWAYS_COMPILE": "1"}):
        ptx = tilec.compile(src, target, {"num_warps": warps, "ir_override": str(path)}).asm["ptx"]
    assert "fma.rn.f32" in ptx
