"""gir -> NVVM LLVM IR (llvmlite.ir).

A lowered tile is a Python list of LLVM values, one per register of its layout, in register order (the linear
layout's register index); a scalar is one LLVM value. Elementwise ops map over the lists; ops that move data
between registers or threads (broadcast, expand_dims, convert_layout, trans, reshape, reduce, dot) use the
linear-layout helpers of :mod:`.layout_lowering`; memory ops use the axis analysis for vector widths.
Structured control flow becomes basic blocks with one phi per carried register.
"""
from __future__ import annotations

import hashlib
import re
from contextlib import nullcontext

import llvmlite.ir as ir

from ...codegen.intrinsics import declare
from ...errors import BackendError
from ...ir import ops as O
from ...gpu.layouts import LinearLayout, MmaOperandLayout
from ...gpu.passes.axis_info import AxisAnalysis, vector_width
from . import nvvm, scalar_ops
from .layout_lowering import (owner_predicate, reg_coord_values, remap, row_major_offsets, smem_ptr, smem_shuffle,
                              StagingBuffer, thread_part)
from .llvm_types import (I1, I32, I8, constant, from_memory, llvm_type, memory_bytes, memory_type,
                         to_memory)

TRIPLE = "nvptx64-nvidia-cuda"
DATA_LAYOUT = "e-p3:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"
ORDERING = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel",
            "seq_cst": "seq_cst"}


def _ll(t):
    return t.layout.to_linear(t.shape)


def _num_regs(t):
    return _ll(t).num_regs


def lower_module_text(module, options) -> str:
    """LLVM IR text of a gir module, with each kernel's block size stated (``nvvm.maxntid`` lets
    ptxas budget registers for the real block size; llvmlite cannot attach string attributes itself)."""
    m = lower_module(module, options)
    text = str(m)
    threads = {}
    for f in module.funcs:
        threads[f.sym_name] = 32 * f.attrs.get("num_warps", options.get("num_warps", 4))
    groups = []
    for i, (name, n) in enumerate(threads.items()):
        pat = re.compile(r'^(define ptx_kernel void @"?' + re.escape(name) + r'"?\(.*\))\s*$', re.M)
        text, k = pat.subn(lambda mm, i=i: f"{mm.group(1)} #{i}", text, count=1)
        if k:
            groups.append(f'attributes #{i} = {{ "nvvm.maxntid"="{n}" }}')
    return text + "\n" + "\n".join(groups) + "\n"


def lower_module(module, options) -> ir.Module:
    """Lower every kernel of a gir module; returns the llvmlite module."""
    m = ir.Module(name="tilec")
    m.triple = TRIPLE
    m.data_layout = DATA_LAYOUT
    for f in module.funcs:
        if not f.attrs.get("kernel", False):
            raise BackendError(f"function @{f.sym_name} is not a kernel; non-kernel functions must be inlined "
                               "before the CUDA backend")
        FuncLowering(m, f, options).run()
    return m


class FuncLowering:
    def __init__(self, module: ir.Module, func, options):
        self.module, self.func, self.options = module, func, options
        self.env: dict = {}
        self.cache: dict = {}
        self.axis = AxisAnalysis(func)
        self.num_warps = func.attrs.get("num_warps", options.get("num_warps", 4))

    # -- values ------------------------------------------------------------------------------------------
    def get(self, v):
        try:
            return self.env[v]
        except KeyError:
            raise BackendError(f"internal: value {v!r} used before it was lowered") from None

    def bind(self, v, lowered):
        self.env[v] = lowered

    @property
    def smem(self):
        g = self.module.globals.get("global_smem")
        if g is None:
            g = ir.GlobalVariable(self.module, ir.ArrayType(I8, 0), "global_smem", addrspace=3)
            g.linkage = "external"
            g.align = 16
            g.type = ir.PointerType(addrspace=3)  # an opaque pointer, so GEPs/stores of any type apply
        return g

    # -- entry -------------------------------------------------------------------------------------------
    def run(self):
        f = self.func
        arg_types = [llvm_type(a.type) if not a.type.is_tile else None for a in f.args]
        if any(t is None for t in arg_types):
            raise BackendError("kernel parameters must be scalars or pointers")
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), arg_types), f.sym_name)
        fn.calling_convention = "ptx_kernel"
        self.fn = fn
        entry_bb = fn.append_basic_block("entry")
        body_bb = fn.append_basic_block("body")
        self.entry = ir.IRBuilder(entry_bb)
        tid = nvvm.sreg(self.entry, "tid.x")
        self.lane = self.entry.and_(tid, ir.Constant(I32, 31))
        self.warp = self.entry.lshr(tid, ir.Constant(I32, 5))
        self.tid = tid
        self.b = ir.IRBuilder(body_bb)
        for a, la in zip(f.args, fn.args):
            la.name = a.name_hint or ""
            self.bind(a, la)
        term = self.block(f.body)
        if term is not None and term.name == "return":
            self.b.ret_void()
        elif not self.b.block.is_terminated:
            self.b.ret_void()
        self.entry.branch(body_bb)

    def block(self, block):
        """Lower the ops of ``block`` except its terminator, which is returned."""
        for op in block.ops:
            if "terminator" in op.traits:
                return op
            self.op(op)
        return None

    def op(self, op):
        handler = getattr(self, "op_" + op.name, None)
        if handler is None:
            if "elementwise" not in op.traits:
                raise BackendError(f"the CUDA backend cannot lower '{op.name}' yet")
            handler = self.op_elementwise
        try:
            handler(op)
        except BackendError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError, AssertionError) as e:
            where = f" at {op.loc}" if op.loc is not None else ""
            raise BackendError(f"internal error lowering '{op.name}'{where}: {type(e).__name__}: {e}") from e

    # -- elementwise -------------------------------------------------------------------------------------
    def _map(self, op, fn):
        """Apply ``fn`` per register. Where axis analysis proves the result constant over aligned runs (a
        mask ``offs < n`` with ``n`` divisible by 16 is one value per vector), only each run's first register
        is computed and the others reuse it."""
        vals = [self.get(o) for o in op.operands]
        r = op.results[0]
        if r.type.is_tile:
            n = _num_regs(r.type)
            lists = [v if isinstance(v, list) else [v] * n for v in vals]
            leaders = self._run_leaders(r)
            if leaders is None:
                self.bind(r, [fn(*xs) for xs in zip(*lists)])
                return
            out = []
            for i, xs in enumerate(zip(*lists)):
                j = leaders[i]
                out.append(fn(*xs) if j == i else out[j])
            self.bind(r, out)
        else:
            self.bind(r, fn(*vals))

    def _run_leaders(self, v):
        """Per register of tile ``v``, the first register of its run of equal elements (None: no runs).
        Runs are aligned power-of-two blocks of the logical index; a coordinate is the XOR of a register part
        and a thread part, so two registers whose register parts agree above the run's bits hold elements of
        one run in every thread."""
        shifts = tuple((k & -k).bit_length() - 1 if k > 0 else 0 for k in self.axis.info(v).constancy)
        if not any(shifts):
            return None
        ll = _ll(v.type)
        key = ("run_leaders", ll, shifts)
        hit = self.cache.get(key)
        if hit is None:
            first: dict = {}
            hit = [first.setdefault(tuple(c >> s for c, s in zip(rc, shifts)), r)
                   for r, rc in enumerate(ll.reg_coords())]
            if all(j == i for i, j in enumerate(hit)):
                hit = False
            self.cache[key] = hit
        return hit or None

    def op_elementwise(self, op):
        b = self.b
        name = op.name
        et = op.operands[0].type.element
        if name in O.BINARY_OPS:
            contract = self.options.get("enable_fp_fusion", True) is not False
            return self._map(op, lambda x, y: scalar_ops.binary(b, name, et, x, y, op.attrs, contract))
        if name in O.UNARY_OPS:
            return self._map(op, lambda x: scalar_ops.unary(b, name, et, x))
        raise BackendError(f"the CUDA backend cannot lower '{name}' yet")

    def op_cmp(self, op):
        et, pred = op.lhs.type.element, op.attrs["predicate"]
        self._map(op, lambda x, y: scalar_ops.cmp(self.b, pred, et, x, y))

    def op_select(self, op):
        self._map(op, lambda c, x, y: self.b.select(c, x, y))

    def op_cast(self, op):
        s, d = op.src.type, op.result.type
        self._map(op, lambda x: scalar_ops.cast(self.b, s, d, x, op.attrs.get("rounding", "rtne")))

    def op_bitcast(self, op):
        lt = llvm_type(op.result.type)
        self._map(op, lambda x: self.b.bitcast(x, lt))

    def op_fma(self, op):
        et = op.a.type.element
        self._map(op, lambda x, y, z: scalar_ops.fma(self.b, et, x, y, z))

    def op_addptr(self, op):
        et = memory_type(op.ptr.type.element.pointee)
        off_t = op.offset.type

        def one(p, o):
            if off_t.element.bits < 64:
                o = self.b.sext(o, ir.IntType(64)) if off_t.is_signed else self.b.zext(o, ir.IntType(64))
            return self.b.gep(p, [o], source_etype=et)
        self._map(op, one)

    def op_hint(self, op):
        self.bind(op.result, self.get(op.src))

    # -- sources -----------------------------------------------------------------------------------------
    def op_constant(self, op):
        t = op.result.type
        c = constant(t.element, op.attrs["value"])
        self.bind(op.result, [c] * _num_regs(t) if t.is_tile else c)

    def op_arange(self, op):
        t = op.result.type
        start = op.attrs["start"]
        lt = llvm_type(t.element)
        out = []
        for (c,) in reg_coord_values(self, _ll(t)):
            v = self.b.add(c, ir.Constant(I32, start)) if start else c
            if lt != I32:
                v = self.b.sext(v, lt) if lt.width > 32 else self.b.trunc(v, lt)
            out.append(v)
        self.bind(op.result, out)

    def op_splat(self, op):
        self.bind(op.result, [self.get(op.src)] * _num_regs(op.result.type))

    def op_program_id(self, op):
        self.bind(op.result, nvvm.sreg(self.entry, "ctaid." + "xyz"[op.attrs["axis"]]))

    def op_num_programs(self, op):
        self.bind(op.result, nvvm.sreg(self.entry, "nctaid." + "xyz"[op.attrs["axis"]]))

    # -- data movement -----------------------------------------------------------------------------------
    def _move(self, op, src_t, dst_t, fn, elem_t):
        """Registers of ``dst_t`` from ``src_t`` under coordinate map ``fn`` (dst coord -> src coord)."""
        vals = self.get(op.operands[0])
        s_ll, d_ll = _ll(src_t), _ll(dst_t)
        idx = remap(s_ll, d_ll, fn)
        if idx is not None:
            return [vals[i] for i in idx]
        base = self._smem_base(op, f"'{op.name}' across threads")
        # the map is linear over GF(2), so the destination registers' source coordinates form a linear layout
        mapped = LinearLayout(tuple(src_t.shape), tuple(tuple(fn(x)) for x in d_ll.reg),
                              tuple(tuple(fn(x)) for x in d_ll.lane), tuple(tuple(fn(x)) for x in d_ll.warp))
        eb = memory_bytes(elem_t)
        buf = StagingBuffer(s_ll, mapped, src_t.shape, eb, vector=not elem_t.is_ptr)
        src_off = buf.offsets(self, reg_coord_values(self, s_ll))
        dst_off = buf.offsets(self, reg_coord_values(self, mapped))
        return smem_shuffle(self, vals, src_off, dst_off, memory_type(elem_t), eb, base,
                            lambda v: to_memory(self.b, elem_t, v), lambda v: from_memory(self.b, elem_t, v),
                            buf.src_vec, buf.dst_vec)

    def op_convert_layout(self, op):
        s, d = op.src.type, op.result.type
        self.bind(op.result, self._move(op, s, d, lambda c: c, s.element))

    def op_broadcast(self, op):
        s, d = op.src.type, op.result.type
        keep = [a == bb for a, bb in zip(s.shape, d.shape)]
        fn = lambda c: tuple(x if k else 0 for x, k in zip(c, keep))  # noqa: E731
        self.bind(op.result, self._move(op, s, d, fn, s.element))

    def op_expand_dims(self, op):
        s, d = op.src.type, op.result.type
        ax = op.attrs["axis"]
        if not s.is_tile:
            self.bind(op.result, [self.get(op.src)] * _num_regs(d))
            return
        fn = lambda c: tuple(c[:ax]) + tuple(c[ax + 1:])  # noqa: E731
        self.bind(op.result, self._move(op, s, d, fn, s.element))

    def op_trans(self, op):
        s, d = op.src.type, op.result.type
        order = op.attrs["order"]

        def fn(c):
            out = [0] * len(c)
            for i, o in enumerate(order):
                out[o] = c[i]
            return tuple(out)
        self.bind(op.result, self._move(op, s, d, fn, s.element))

    def op_reshape(self, op):
        s, d = op.src.type, op.result.type
        if not s.is_tile or not d.is_tile:
            v = self.get(op.src)
            self.bind(op.result, v[0] if isinstance(v, list) else [v] * _num_regs(d))
            return

        def fn(c):
            lin = 0
            for x, n in zip(c, d.shape):
                lin = lin * n + x
            out = []
            for n in reversed(s.shape):
                out.append(lin % n)
                lin //= n
            return tuple(reversed(out))
        self.bind(op.result, self._move(op, s, d, fn, s.element))

    # -- memory ------------------------------------------------------------------------------------------
    def _width(self, op):
        t = op.ptr.type
        mask = getattr(op, "mask", None)
        eb = memory_bytes(t.element.pointee)
        return vector_width(_ll(t), self.axis.info(op.ptr), self.axis.info(mask) if mask is not None else None, eb)

    def op_load(self, op):
        b = self.b
        pt = op.ptr.type
        et = pt.element.pointee
        mt = memory_type(et)
        cache = op.attrs.get("cache", "")
        if not pt.is_tile:
            mask = self.get(op.mask) if op.mask is not None else None
            other = [to_memory(b, et, self.get(op.other))] if op.other is not None else None
            v = nvvm.vector_load(b, self.get(op.ptr), mt, 1, mask, other, cache)[0]
            self.bind(op.result, from_memory(b, et, v))
            return
        vec = self._width(op)
        ptrs = self.get(op.ptr)
        masks = self.get(op.mask) if op.mask is not None else None
        others = self.get(op.other) if op.other is not None else None
        out = []
        for g in range(0, len(ptrs), vec):
            pred = masks[g] if masks is not None else None
            oth = [to_memory(b, et, o) for o in others[g:g + vec]] if others is not None else None
            vals = nvvm.vector_load(b, ptrs[g], mt, vec, pred, oth, cache)
            out.extend(from_memory(b, et, v) for v in vals)
        self.bind(op.result, out)

    def _and(self, a, c):
        if a is None:
            return c
        if c is None:
            return a
        return self.b.and_(a, c)

    def _scalar_owner(self):
        key = ("tid0",)
        if key not in self.cache:
            self.cache[key] = self.entry.icmp_unsigned("==", self.tid, ir.Constant(I32, 0))
        return self.cache[key]

    def op_store(self, op):
        b = self.b
        pt = op.ptr.type
        et = pt.element.pointee
        if not pt.is_tile:
            mask = self.get(op.mask) if op.mask is not None else None
            pred = self._and(mask, self._scalar_owner())
            nvvm.vector_store(b, self.get(op.ptr), [to_memory(b, et, self.get(op.value))], pred)
            return
        vec = self._width(op)
        owner = owner_predicate(self, _ll(pt))
        ptrs, vals = self.get(op.ptr), self.get(op.value)
        masks = self.get(op.mask) if op.mask is not None else None
        for g in range(0, len(ptrs), vec):
            pred = self._and(masks[g] if masks is not None else None, owner)
            nvvm.vector_store(b, ptrs[g], [to_memory(b, et, v) for v in vals[g:g + vec]], pred,
                              op.attrs.get("cache", ""))

    def _guarded(self, pred, fn, result_type):
        """``fn()`` only where ``pred`` holds; elsewhere the result is undefined (zero)."""
        if pred is None:
            return fn()
        b = self.b
        start = b.block
        with b.if_then(pred):
            v = fn()
            inner = b.block
        phi = b.phi(result_type)
        phi.add_incoming(v, inner)
        phi.add_incoming(ir.Constant(result_type, None), start)  # zero or null
        return phi

    def _elements(self, op, names):
        """Per register: the lowered operands ``names`` (scalars broadcast) and the owner/mask predicate."""
        pt = op.ptr.type
        if pt.is_tile:
            n = _num_regs(pt)
            owner = owner_predicate(self, _ll(pt))
        else:
            n, owner = 1, self._scalar_owner()
        cols = []
        for nm in names:
            v = getattr(op, nm)
            lv = self.get(v) if v is not None else None
            cols.append([None] * n if lv is None else (lv if isinstance(lv, list) else [lv]))
        mask_v = getattr(op, "mask", None)
        masks = self.get(mask_v) if mask_v is not None else None
        masks = masks if isinstance(masks, list) else ([masks] if masks is not None else [None] * n)
        return n, cols, [self._and(m, owner) for m in masks]

    def op_atomic_rmw(self, op):
        b = self.b
        et = op.value.type.element
        kind = op.attrs["kind"]
        if et.is_float:
            llop = {"add": "fadd", "max": "fmax", "min": "fmin", "xchg": "xchg"}.get(kind)
        elif kind in ("max", "min"):
            llop = kind if et.is_signed else "u" + kind
        else:
            llop = kind
        if llop is None:
            raise BackendError(f"atomic '{kind}' on {et} is not supported")
        order = ORDERING.get(op.attrs["sem"], "monotonic")
        n, (ptrs, vals), preds = self._elements(op, ["ptr", "value"])
        lt = llvm_type(et)
        out = [self._guarded(p, lambda q=q, v=v: b.atomic_rmw(llop, q, v, order), lt)
               for q, v, p in zip(ptrs, vals, preds)]
        self.bind(op.result, out if op.result.type.is_tile else self._from_thread0(op, out[0]))

    def _from_thread0(self, op, v):
        """A scalar atomic runs in thread 0 only; every thread sees its result through shared memory."""
        base = op.attrs.get("smem_offset")
        if base is None or not op.result.uses:
            return v
        b = self.b
        et = op.result.type
        p = smem_ptr(self, base, ir.Constant(I32, 0), memory_bytes(et))
        with b.if_then(self._scalar_owner()):
            b.store(to_memory(b, et, v), p)
        nvvm.barrier(b)
        return from_memory(b, et, b.load(p, typ=memory_type(et)))

    def op_atomic_cas(self, op):
        b = self.b
        et = op.value.type.element
        lt = llvm_type(et)
        order = ORDERING.get(op.attrs["sem"], "monotonic")
        fail = "acquire" if order in ("acq_rel", "acquire") else ("seq_cst" if order == "seq_cst" else "monotonic")
        n, (ptrs, cmps, vals), preds = self._elements(op, ["ptr", "cmp", "value"])

        def one(q, c, v):
            if et.is_float:
                it = ir.IntType(et.bits)
                r = b.extract_value(b.cmpxchg(q, b.bitcast(c, it), b.bitcast(v, it), order, fail), 0)
                return b.bitcast(r, lt)
            return b.extract_value(b.cmpxchg(q, c, v, order, fail), 0)
        out = [self._guarded(p, lambda q=q, c=c, v=v: one(q, c, v), lt) for q, c, v, p in zip(ptrs, cmps, vals, preds)]
        self.bind(op.result, out if op.result.type.is_tile else self._from_thread0(op, out[0]))

    # -- reductions and dot ------------------------------------------------------------------------------
    def _combine(self, region_block, accs, xs):
        for a, v in zip(region_block.args, list(accs) + list(xs)):
            self.bind(a, v)
        y = self.block(region_block)
        return [self.get(v) for v in y.operands]

    def op_reduce(self, op):
        b = self.b
        body = op.regions[0].block
        src_t = op.operands[0].type
        ax = op.attrs["axis"]
        ll = _ll(src_t)
        srcs = [self.get(o) for o in op.operands]
        groups: dict = {}
        for r, rc in enumerate(ll.reg_coords()):
            groups.setdefault(rc[:ax] + rc[ax + 1:], []).append(r)
        accs = {}
        for key, regs in groups.items():
            acc = [s[regs[0]] for s in srcs]
            for r in regs[1:]:
                acc = self._combine(body, acc, [s[r] for s in srcs])
            accs[key] = acc
        for i, basis in enumerate(ll.lane):
            if basis[ax]:
                for key in accs:
                    other = [nvvm.shfl_xor(b, v, 1 << i) for v in accs[key]]
                    accs[key] = self._combine(body, accs[key], other)
        warp_bits = [i for i, basis in enumerate(ll.warp) if basis[ax]]
        out_shape = src_t.shape[:ax] + src_t.shape[ax + 1:]
        if warp_bits:
            accs = self._reduce_warps(op, body, accs, warp_bits, out_shape, ll, ax)
        if not op.results[0].type.is_tile:
            (only,) = accs.values()
            for r, v in zip(op.results, only):
                self.bind(r, v)
            return
        out_ll = _ll(op.results[0].type)
        for k, r in enumerate(op.results):
            self.bind(r, [accs[rc][k] for rc in out_ll.reg_coords()])

    def _pick(self, cond, xs, ys):
        return [self.b.select(cond, x, y) for x, y in zip(xs, ys)]

    def op_scan(self, op):
        """Inclusive scan along ``axis``. The axis coordinate's bits split into low register bits, lane bits,
        warp bits and high register bits (blocked layouts); registers sharing the high bits form a *chunk*,
        contiguous in scan order across the CTA. Per chunk: a running combine over the thread's registers, a
        butterfly over the axis lane bits (each lane learns the total of the lanes before it), the warps'
        totals through shared memory; chunks then chain, each prefixed by the totals of the chunks before it."""
        b = self.b
        body = op.regions[0].block
        t = op.operands[0].type
        ax, rev = op.attrs["axis"], op.attrs.get("reverse", False)
        ll = _ll(t)
        thread_axis = [bb[ax] for bb in ll.lane + ll.warp if bb[ax]]
        low_mask = (min(thread_axis) - 1) if thread_axis else (1 << 30) - 1
        for bb in ll.reg:
            if bb[ax] and any(bb[d] for d in range(ll.rank) if d != ax):
                raise BackendError("scan over a layout that mixes dimensions in one register bit")
            if bb[ax] and not (bb[ax] & low_mask) and thread_axis and bb[ax] < max(thread_axis):
                raise BackendError("scan over a layout whose registers interleave with its threads on the axis")
        srcs = [self.get(o) for o in op.operands]
        n = len(srcs)
        rc = ll.reg_coords()
        chunks: dict = {}
        for r, c in enumerate(rc):
            rest = c[:ax] + c[ax + 1:]
            chunks.setdefault((rest, c[ax] & ~low_mask), []).append(r)
        out = [[None] * ll.num_regs for _ in range(n)]
        totals, prefix, valid = {}, {}, {}
        for key, regs in chunks.items():
            run = None
            for r in sorted(regs, key=lambda r: rc[r][ax], reverse=rev):
                cur = [s_[r] for s_ in srcs]
                run = cur if run is None else self._combine(body, run, cur)
                for k in range(n):
                    out[k][r] = run[k]
            totals[key], prefix[key], valid[key] = run, None, ir.Constant(I1, 0)
        for i, basis in enumerate(ll.lane):
            if not basis[ax]:
                continue
            upper = b.icmp_unsigned("!=", b.and_(self.lane, ir.Constant(I32, 1 << i)), ir.Constant(I32, 0))
            later = b.not_(upper) if rev else upper  # this lane comes after its partner in scan order
            for key in chunks:
                other = [nvvm.shfl_xor(b, v, 1 << i) for v in totals[key]]
                pre = prefix[key]
                if pre is None:
                    prefix[key], valid[key] = other, later
                else:
                    with_other = self._pick(valid[key], self._combine(body, other, pre), other)
                    prefix[key] = self._pick(later, with_other, pre)
                    valid[key] = b.or_(valid[key], later)
                totals[key] = self._pick(later, self._combine(body, other, totals[key]),
                                         self._combine(body, totals[key], other))
        warp_bits = [i for i, basis in enumerate(ll.warp) if basis[ax]]
        if warp_bits:
            self._scan_warps(op, body, ll, ax, rev, chunks, totals, prefix, valid, warp_bits)
        for key, regs in chunks.items():
            if prefix[key] is None:
                continue
            for r in regs:
                cur = [out[k][r] for k in range(n)]
                comb = self._combine(body, prefix[key], cur)
                for k, v in enumerate(self._pick(valid[key], comb, cur)):
                    out[k][r] = v
        # chain the chunks of each row: totals[key] is now the chunk's total over the whole CTA
        rows: dict = {}
        for key in chunks:
            rows.setdefault(key[0], []).append(key)
        for keys in rows.values():
            carry = None
            for key in sorted(keys, key=lambda k: k[1], reverse=rev):
                if carry is not None:
                    for r in chunks[key]:
                        vals = self._combine(body, carry, [out[k][r] for k in range(n)])
                        for k in range(n):
                            out[k][r] = vals[k]
                    carry = self._combine(body, carry, totals[key])
                else:
                    carry = totals[key]
        for k, r in enumerate(op.results):
            self.bind(r, out[k])

    def _scan_warps(self, op, body, ll, ax, rev, chunks, totals, prefix, valid, warp_bits):
        """Each warp publishes its per-chunk totals; each thread combines the totals of the warps before it
        into its prefix and of all warps into the chunk's total."""
        b = self.b
        base = self._smem_base(op, "scan across warps")
        shape = op.operands[0].type.shape
        # a slot per element of the tile with the axis coordinate's thread bits cleared: unique per chunk and row
        thread_axis_mask = 0
        for bb in ll.lane + ll.warp:
            thread_axis_mask |= bb[ax]
        keys = list(chunks)
        tp = thread_part(self, ll)
        offs = []
        for rest, high in keys:
            full = list(rest[:ax]) + [high] + list(rest[ax:])
            coords = []
            for d in range(ll.rank):
                if d == ax:
                    coords.append(ir.Constant(I32, full[d]))
                else:
                    coords.append(b.add(tp[d], ir.Constant(I32, full[d])) if full[d] else tp[d])
            offs.append(row_major_offsets(self, [tuple(coords)], shape)[0])
        widx, nslots, load = self._publish_per_warp(op, base, warp_bits, shape, keys, offs, totals)
        order = range(nslots - 1, -1, -1) if rev else range(nslots)
        for key, off in zip(keys, offs):
            acc, acc_valid, whole = None, ir.Constant(I1, 0), None
            for j in order:
                before = b.icmp_unsigned(">" if rev else "<", ir.Constant(I32, j), widx)  # warp j precedes mine
                vals = load(j, off)
                whole = vals if whole is None else self._combine(body, whole, vals)
                if acc is None:
                    acc = vals
                else:
                    acc = self._pick(before, self._pick(acc_valid, self._combine(body, acc, vals), vals), acc)
                acc_valid = b.or_(acc_valid, before)
            totals[key] = whole
            pre = prefix[key]  # the warps' prefix comes before this warp's own lane prefix
            if pre is None:
                prefix[key], valid[key] = acc, acc_valid
            else:
                both = self._pick(acc_valid, self._combine(body, acc, pre), pre)
                prefix[key] = self._pick(valid[key], both, acc)
                valid[key] = b.or_(valid[key], acc_valid)

    def _smem_base(self, op, what):
        base = op.attrs.get("smem_offset")
        if base is None:
            raise BackendError(f"internal: {what} without shared memory (run allocate-shared)")
        return base

    def _publish_per_warp(self, op, base, warp_bits, shape, keys, offs, values):
        """Cross-warp exchange for reduce/scan: this warp stores ``values[key]`` (one value per operand) at
        ``offs[key]`` of its slot (warp index from ``warp_bits``; a slot holds one ``shape``-sized array per
        operand), then a barrier. Returns (this warp's index, slot count, ``load(j, off)`` -> warp j's values)."""
        b = self.b
        widx = ir.Constant(I32, 0)
        for j, i in enumerate(warp_bits):
            bit = b.and_(b.lshr(self.warp, ir.Constant(I32, i)), ir.Constant(I32, 1))
            widx = b.or_(widx, b.shl(bit, ir.Constant(I32, j)))
        nslots = 1 << len(warp_bits)
        m = 1
        for n in shape:
            m *= n
        types = [o.type.element for o in op.operands]
        bases, cur = [], base
        for t in types:
            bases.append(cur)
            cur += nslots * m * memory_bytes(t)
        for key, off in zip(keys, offs):
            slot = b.add(b.mul(widx, ir.Constant(I32, m)), off)
            for k, t in enumerate(types):
                b.store(to_memory(b, t, values[key][k]), smem_ptr(self, bases[k], slot, memory_bytes(t)))
        nvvm.barrier(b)

        def load(j, off):
            slot = b.add(ir.Constant(I32, j * m), off)
            return [from_memory(b, t, b.load(smem_ptr(self, bases[k], slot, memory_bytes(t)), typ=memory_type(t)))
                    for k, t in enumerate(types)]
        return widx, nslots, load

    def _reduce_warps(self, op, body, accs, warp_bits, out_shape, ll, ax):
        b = self.b
        base = self._smem_base(op, "reduce across warps")
        # result coordinates of each group (thread part + group constant), as offsets in the result shape
        sub_ll = ll.without_dim(ax)
        keys = list(accs)
        if out_shape:
            tp = thread_part(self, sub_ll)
            coords = [tuple(b.add(t, ir.Constant(I32, c)) if c else t for t, c in zip(tp, key)) for key in keys]
            offs = row_major_offsets(self, coords, out_shape)
        else:
            offs = [ir.Constant(I32, 0)]
        _, nslots, load = self._publish_per_warp(op, base, warp_bits, out_shape, keys, offs, accs)
        out = {}
        for key, off in zip(keys, offs):
            acc = None
            for j in range(nslots):
                vals = load(j, off)
                acc = vals if acc is None else self._combine(body, acc, vals)
            out[key] = acc
        return out

    def _mma_dot(self, op):
        """Tensor-core dot: one ``mma.sync.m16n8k16`` per (16-row, 8-column, 16-k) fragment of this thread's
        registers. Fragments are found by coordinate: the accumulator's register constants give each fragment's
        (row, column) base, the operands' give the A and B registers at (row, k) and (k, column)."""
        b = self.b
        at, bt, ct = op.a.type, op.b.type, op.acc.type
        a_ll, b_ll, c_ll = _ll(at), _ll(bt), _ll(ct)
        av, bv, acc = self.get(op.a), self.get(op.b), list(self.get(op.acc))
        a_idx = {c: i for i, c in enumerate(a_ll.reg_coords())}
        b_idx = {c: i for i, c in enumerate(b_ll.reg_coords())}
        c_idx = {c: i for i, c in enumerate(c_ll.reg_coords())}
        K = at.shape[1]
        if at.layout.k_width == 1:
            return self._mma_tf32(op, av, bv, acc, a_idx, b_idx, c_idx, c_ll, K)
        kind = "bf16" if at.element.name == "bf16" else "f16"
        packed: dict = {}

        def pack(vals, lo, hi, t):
            """Two 16-bit elements in one b32 register (lo in the low half), as mma expects."""
            key = (id(vals), lo, hi)
            if key not in packed:
                pair = [to_memory(b, t.element, vals[i]) if t.element.name == "bf16" else vals[i] for i in (lo, hi)]
                vec = ir.Constant(ir.VectorType(pair[0].type, 2), ir.Undefined)
                for j, x in enumerate(pair):
                    vec = b.insert_element(vec, x, ir.Constant(I32, j))
                packed[key] = b.bitcast(vec, I32)
            return packed[key]
        self._mma_tiles(op, f"m16n8k16.row.col.f32.{kind}.{kind}.f32", acc, c_idx, c_ll, K, 16,
                        lambda mb, kb: [pack(av, a_idx[(mb + r, kb + k)], a_idx[(mb + r, kb + k + 1)], at)
                                        for r, k in ((0, 0), (8, 0), (0, 8), (8, 8))],
                        lambda kb, n: [pack(bv, b_idx[(kb + k, n)], b_idx[(kb + k + 1, n)], bt) for k in (0, 8)])

    def _mma_tf32(self, op, av, bv, acc, a_idx, b_idx, c_idx, c_ll, K):
        """``mma.sync.m16n8k8`` on tf32: inputs rounded (``cvt.rna.tf32.f32``) once per register."""
        b = self.b
        cvt = ir.InlineAsm(ir.FunctionType(I32, [ir.FloatType()]), "cvt.rna.tf32.f32 $0, $1;", "=r,f")
        conv: dict = {}

        def tf32(vals, i):
            key = (id(vals), i)
            if key not in conv:
                conv[key] = b.call(cvt, [vals[i]])
            return conv[key]
        self._mma_tiles(op, "m16n8k8.row.col.f32.tf32.tf32.f32", acc, c_idx, c_ll, K, 8,
                        lambda mb, kb: [tf32(av, a_idx[(mb + r, kb + k)]) for r, k in ((0, 0), (8, 0), (0, 4), (8, 4))],
                        lambda kb, n: [tf32(bv, b_idx[(kb + k, n)]) for k in (0, 4)])

    def _mma_tiles(self, op, shape_types, acc, c_idx, c_ll, K, k_step, a_regs, b_regs):
        """One ``mma.sync.aligned.<shape_types>`` per (16-row, 8-column, ``k_step``-k) fragment of the
        accumulator's registers; ``a_regs(row base, k base)`` / ``b_regs(k base, column base)`` give the four A
        and two B b32 operands."""
        b = self.b
        text = f"mma.sync.aligned.{shape_types} {{$0,$1,$2,$3}}, {{$4,$5,$6,$7}}, {{$8,$9}}, {{$10,$11,$12,$13}};"
        fty = ir.FunctionType(ir.LiteralStructType([ir.FloatType()] * 4), [I32] * 6 + [ir.FloatType()] * 4)
        asm = ir.InlineAsm(fty, text, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f")
        for mb, nb in sorted({(m & ~8, n & ~1) for (m, n) in c_ll.reg_coords()}):
            ci = [c_idx[(mb, nb)], c_idx[(mb, nb + 1)], c_idx[(mb + 8, nb)], c_idx[(mb + 8, nb + 1)]]
            nrep = nb & ~7
            for kb in range(0, K, k_step):
                r = b.call(asm, a_regs(mb, kb) + b_regs(kb, nrep) + [acc[i] for i in ci])
                for j, i in enumerate(ci):
                    acc[i] = b.extract_value(r, j)
        self.bind(op.result, acc)

    def op_dot(self, op):
        """FMA dot (when accelerate-dot left it alone): both operands go to shared memory (row-major), then each
        thread accumulates its registers over K, reading each A row value and B column value it needs once per k."""
        if isinstance(op.a.type.layout, MmaOperandLayout):
            return self._mma_dot(op)
        b = self.b
        at, bt, ct = op.a.type, op.b.type, op.acc.type
        if len(ct.shape) != 2:
            raise BackendError("the CUDA backend supports 2-d dot only")
        base = self._smem_base(op, "dot")
        M, K = at.shape
        N = bt.shape[1]
        ea, eb_ = memory_bytes(at.element), memory_bytes(bt.element)
        base_b = base + (M * K * ea + 15) // 16 * 16
        for vals, t, bs, eb in ((self.get(op.a), at, base, ea), (self.get(op.b), bt, base_b, eb_)):
            offs = row_major_offsets(self, reg_coord_values(self, _ll(t)), t.shape)
            for v, off in zip(vals, offs):
                b.store(to_memory(b, t.element, v), smem_ptr(self, bs, off, eb))
        nvvm.barrier(b)
        c_ll = _ll(ct)
        coords = reg_coord_values(self, c_ll)
        rows, cols = {}, {}
        for (m, n), rc in zip(coords, c_ll.reg_coords()):
            rows.setdefault(rc[0], m)
            cols.setdefault(rc[1], n)
        ce = ct.element
        acc = list(self.get(op.acc))

        def read(t, bs, eb, off):
            v = from_memory(b, t.element, b.load(smem_ptr(self, bs, off, eb), typ=memory_type(t.element)))
            return v if t.element == ce else scalar_ops.cast(b, t.element, ce, v)
        row_off = {r: b.mul(m, ir.Constant(I32, K)) for r, m in rows.items()}
        regs = list(enumerate(c_ll.reg_coords()))
        for k in range(K):
            kk = ir.Constant(I32, k)
            av = {r: read(at, base, ea, b.add(o, kk)) for r, o in row_off.items()}
            bv = {c: read(bt, base_b, eb_, b.add(n, ir.Constant(I32, k * N))) for c, n in cols.items()}
            for i, (rr, cc) in regs:
                if ce.is_float:
                    acc[i] = scalar_ops.fma(b, ce, av[rr], bv[cc], acc[i])
                else:
                    acc[i] = b.add(acc[i], b.mul(av[rr], bv[cc]))
        self.bind(op.result, acc)

    # -- control flow ------------------------------------------------------------------------------------
    @staticmethod
    def _flatten(values):
        flat, shapes = [], []
        for v in values:
            if isinstance(v, list):
                flat.extend(v)
                shapes.append(len(v))
            else:
                flat.append(v)
                shapes.append(None)
        return flat, shapes

    @staticmethod
    def _unflatten(flat, shapes):
        out, i = [], 0
        for s in shapes:
            if s is None:
                out.append(flat[i])
                i += 1
            else:
                out.append(list(flat[i:i + s]))
                i += s
        return out

    def op_for(self, op):
        b = self.b
        lb, ub, step = self.get(op.lb), self.get(op.ub), self.get(op.step)
        flat, shapes = self._flatten([self.get(v) for v in op.inits])
        pre = b.block
        header = self.fn.append_basic_block("for.header")
        body = self.fn.append_basic_block("for.body")
        exit_ = self.fn.append_basic_block("for.exit")
        b.branch(header)
        b.position_at_end(header)
        iv = b.phi(lb.type)
        iv.add_incoming(lb, pre)
        phis = [b.phi(v.type) for v in flat]
        for p, v in zip(phis, flat):
            p.add_incoming(v, pre)
        signed = op.lb.type.is_signed
        cmp = b.icmp_signed if signed else b.icmp_unsigned
        sc = step.constant if isinstance(step, ir.Constant) else None
        if sc is not None and (not signed or sc < (1 << (step.type.width - 1))):
            cond = cmp("<", iv, ub)
        elif sc is not None:
            cond = cmp(">", iv, ub)
        else:
            pos = b.icmp_signed(">", step, ir.Constant(step.type, 0))
            cond = b.select(pos, cmp("<", iv, ub), cmp(">", iv, ub))
        b.cbranch(cond, body, exit_)
        b.position_at_end(body)
        self.bind(op.induction_var, iv)
        for a, v in zip(op.iter_args, self._unflatten(phis, shapes)):
            self.bind(a, v)
        y = self.block(op.body)
        nxt, _ = self._flatten([self.get(v) for v in y.operands]) if y is not None else ([], [])
        latch = b.block
        iv.add_incoming(b.add(iv, step), latch)
        for p, v in zip(phis, nxt):
            p.add_incoming(v, latch)
        b.branch(header)
        b.position_at_end(exit_)
        for r, v in zip(op.results, self._unflatten(phis, shapes)):
            self.bind(r, v)

    def op_if(self, op):
        b = self.b
        cond = self.get(op.cond)
        then_bb = self.fn.append_basic_block("if.then")
        else_bb = self.fn.append_basic_block("if.else")
        merge = self.fn.append_basic_block("if.end")
        b.cbranch(cond, then_bb, else_bb)
        incoming = []
        shapes = None
        for region, bb in zip(op.regions, (then_bb, else_bb)):
            b.position_at_end(bb)
            y = self.block(region.block) if region.blocks else None
            vals = [self.get(v) for v in y.operands] if y is not None else []
            flat, shapes_ = self._flatten(vals)
            shapes = shapes_ if vals else shapes
            incoming.append((flat, b.block))
            b.branch(merge)
        b.position_at_end(merge)
        if op.results:
            nflat = len(incoming[0][0])
            phis = []
            for i in range(nflat):
                p = b.phi(incoming[0][0][i].type)
                for flat, blk in incoming:
                    p.add_incoming(flat[i], blk)
                phis.append(p)
            for r, v in zip(op.results, self._unflatten(phis, shapes)):
                self.bind(r, v)

    def op_while(self, op):
        b = self.b
        before, after = op.regions[0].block, op.regions[1].block
        flat, shapes = self._flatten([self.get(v) for v in op.inits])
        pre = b.block
        head = self.fn.append_basic_block("while.before")
        body = self.fn.append_basic_block("while.after")
        exit_ = self.fn.append_basic_block("while.exit")
        b.branch(head)
        b.position_at_end(head)
        phis = [b.phi(v.type) for v in flat]
        for p, v in zip(phis, flat):
            p.add_incoming(v, pre)
        for a, v in zip(before.args, self._unflatten(phis, shapes)):
            self.bind(a, v)
        c = self.block(before)
        fwd = [self.get(v) for v in c.values]
        b.cbranch(self.get(c.cond), body, exit_)
        b.position_at_end(body)
        for a, v in zip(after.args, fwd):
            self.bind(a, v)
        y = self.block(after)
        nxt, _ = self._flatten([self.get(v) for v in y.operands])
        latch = b.block
        for p, v in zip(phis, nxt):
            p.add_incoming(v, latch)
        b.branch(head)
        b.position_at_end(exit_)
        for r, v in zip(op.results, fwd):
            self.bind(r, v)

    # -- misc --------------------------------------------------------------------------------------------
    def op_barrier(self, op):
        nvvm.barrier(self.b)

    def op_assert(self, op):
        if not self.options.get("debug"):
            return
        cond = self.get(op.cond)
        conds = cond if isinstance(cond, list) else [cond]
        ok = conds[0]
        for c in conds[1:]:
            ok = self.b.and_(ok, c)
        with self.b.if_then(self.b.not_(ok)):
            nvvm.intrinsic(self.b, "llvm.trap", ir.VoidType(), [])

    def op_print(self, op):
        """``vprintf`` per element (from the thread that owns it; scalars from thread 0):
        ``pid (x, y, z) idx (i, j) <prefix><value>``."""
        b = self.b
        pids = [nvvm.sreg(self.entry, f"ctaid.{a}") for a in "xyz"]
        for v in op.operands:
            t = v.type
            lowered = self.get(v)
            e = t.element
            if e.is_float:
                spec, conv = ("%a" if op.attrs["hex"] else "%f"), (lambda x: b.fpext(x, ir.DoubleType())
                                                                   if x.type != ir.DoubleType() else x)
            elif e.is_ptr:
                spec, conv = "%p", (lambda x: x)
            else:
                wide = e.bits > 32
                spec = ("0x%llx" if wide else "0x%x") if op.attrs["hex"] else \
                    (("%lld" if wide else "%d") if e.is_signed else ("%llu" if wide else "%u"))
                conv = (lambda x, wide=wide, signed=e.is_signed: x if x.type.width == (64 if wide else 32) else
                        (b.sext if signed else b.zext)(x, ir.IntType(64 if wide else 32)))
            if t.is_tile:
                ll = _ll(t)
                coords = reg_coord_values(self, ll)
                guard = owner_predicate(self, ll)
                items = [(list(c), x) for c, x in zip(coords, lowered)]
            else:
                guard, items = self._scalar_owner(), [([], lowered)]
            idx = ("idx (" + ", ".join(["%d"] * len(items[0][0])) + ") ") if items[0][0] else ""
            fmt = f"pid (%u, %u, %u) {idx}{op.attrs['prefix']}{spec}\n"
            for coord, x in items:
                self._vprintf(fmt, pids + coord + [conv(x)], guard)

    def _vprintf(self, fmt: str, args, guard):
        b, m = self.b, self.module
        data = bytearray(fmt.encode()) + b"\0"
        name = f"tilec_fmt_{hashlib.sha1(data).hexdigest()[:16]}"  # stable across processes, unlike hash()
        g = m.globals.get(name)
        if g is None:
            g = ir.GlobalVariable(m, ir.ArrayType(I8, len(data)), name, addrspace=1)
            g.global_constant = True
            g.linkage = "internal"
            g.initializer = ir.Constant(ir.ArrayType(I8, len(data)), data)
            g.type = ir.PointerType(addrspace=1)
        fn = declare(m, "vprintf", I32, [ir.PointerType(), ir.PointerType()])
        st = ir.LiteralStructType([a.type for a in args])
        buf = self.entry.alloca(st)
        buf.type = ir.PointerType()  # opaque, like every other pointer here
        with b.if_then(guard) if guard is not None else nullcontext():
            for i, a in enumerate(args):
                b.store(a, b.gep(buf, [ir.Constant(I32, 0), ir.Constant(I32, i)], source_etype=st))
            b.call(fn, [b.addrspacecast(g, ir.PointerType()), buf])

    def op_call(self, op):
        raise BackendError(f"call to @{op.attrs['callee']} reached the CUDA backend; run the inliner first")


__all__ = ["lower_module", "lower_module_text", "TRIPLE", "DATA_LAYOUT"]
