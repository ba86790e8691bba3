"""tir kernel -> LLVM IR function ``<name>(params..., pid x3, num_programs x3, scratch)``.

Scalars become LLVM values directly. Tiles become nodes (``nodes.py``): elementwise ops build lazy nodes and the
consumers that need every element (store, reduce, dot, materialisation) emit one loop nest each, so chains of
elementwise ops fuse into a single loop with intermediates in registers. Buffers live in one per-worker scratch
area whose size is fixed at compile time (``scratch_size``), so big tiles never touch the thread stack.
Structured control flow becomes basic blocks: scalar loop-carried values are phis, tile ones are buffers.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen import debuginfo
from ...codegen import llvm_types as LT
from ...codegen.elementwise import emit_op
from ...codegen.intrinsics import call as intrinsic
from ...errors import BackendError
from ...ir.types import TileType
from . import atomics, control, dot, gather, inline_asm, reduce, runtime  # noqa: F401  (they register their lowerings)
from .loops import nest, pick_width
from .memory import Mem
from .nodes import Buf, Lazy, Point, ev, row_major, stride_of
from .unswitch import chunks
from .policy import has_writes, should_materialise
from ...ir import ops as O
from .registry import LOWERINGS
from ...ir.core import OpResult
from ...passes.pointer_origins import origins

VMAX = 16


class Lowering:
    def __init__(self, func, module: ir.Module):
        self.func, self.m = func, module
        self.vals: dict = {}
        self.consts: dict = {}
        self.scratch_size = 0
        self.pending: list = []
        self.mem = Mem(self)
        self.strings: dict = {}
        self.lowered: set = set()
        self.notes: dict = {}
        self.debug = None

    # -- entry ---------------------------------------------------------------------------------------------
    def build(self) -> ir.Function:
        f = self.func
        params = [LT.scalar_type(a.type) for a in f.args]
        fnty = ir.FunctionType(LT.VOID, params + [LT.I32] * 6 + [LT.PTR])
        fn = ir.Function(self.m, fnty, f.sym_name)
        fn.linkage = "internal"
        self.fn = fn
        for a, v in zip(f.args, fn.args):
            self.vals[a] = v
        self.pids, self.nprogs, self.scratch = fn.args[len(params):len(params) + 3], \
            fn.args[len(params) + 3:len(params) + 6], fn.args[-1]
        entry = fn.append_basic_block("entry")
        self.entry = ir.IRBuilder(entry)
        body = fn.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        self.debug = debuginfo.DebugInfo(self.m, f.loc) if debuginfo.enabled() else None
        if self.debug is not None:  # op locations become DWARF line tables
            self.subprogram = self.debug.subprogram(fn, f.sym_name, f.loc)
            self.debug.locate(self.b, self.subprogram, f.loc)
            self.debug.locate(self.entry, self.subprogram, f.loc)
        self.block(f.body)
        if not self.b.block.is_terminated:
            self.b.ret_void()
        self.entry.branch(body)
        return fn

    def block(self, blk):
        for op in blk.ops:
            self.op(op)

    def op(self, op):
        if self.debug is not None:
            self.debug.locate(self.b, self.subprogram, op.loc)
        if not isinstance(op, (O.YieldOp, O.ConditionOp, O.ReturnOp)) and has_writes(op):
            self.flush(op)
        self._dispatch(op)
        self.lowered.add(op)

    def _dispatch(self, op):
        h = LOWERINGS.lookup(op)
        if h is None:
            raise BackendError(f"the CPU backend cannot lower '{op.name}'")
        return h(self, op)

    # -- plan notes (the "plan" stage) ------------------------------------------------------------------------
    def note(self, op, text: str):
        if op is not None:
            self.notes.setdefault(op, []).append(text)

    @staticmethod
    def access(ptr_node, w) -> str:
        if w == 1:
            return "scalar"
        s = getattr(ptr_node, "stride", None)
        return f"vector x{w}" if s == 1 else ("uniform" if s == 0 else f"gather/scatter x{w}")

    # -- buffers -------------------------------------------------------------------------------------------
    def alloc(self, t: TileType) -> Buf:
        nbytes = t.numel * LT.byte_size(LT.memory_type(t.element))
        off = (self.scratch_size + 63) // 64 * 64
        self.scratch_size = off + nbytes
        ptr = self.entry.gep(self.scratch, [LT.const(LT.I64, off)], source_etype=LT.I8) if off else self.scratch
        buf = Buf(ptr, t)
        buf.where = f"scratch[{off}:{off + nbytes}]"
        return buf

    def fill(self, buf: Buf, node):
        """Evaluate ``node`` into ``buf`` with one loop nest."""
        shape = buf.shape
        w = pick_width(shape[-1], VMAX)
        chunks(self, shape, w, [node], lambda pt: buf.store(self, pt.idx, ev(self, node, pt, w), w))

    def materialise(self, node) -> Buf:
        if isinstance(node, Buf) and node.owner:
            return node
        buf = self.alloc(node.type)
        self.fill(buf, node)
        return buf

    def contiguous(self, node) -> Buf:
        """A row-major buffer holding ``node`` (views are copied)."""
        if isinstance(node, Buf) and node.strides == row_major(node.shape):
            return node
        buf = self.alloc(node.type)
        self.fill(buf, node)
        return buf

    def flush(self, op):
        """Before ``op`` writes memory: materialise lazy values that read memory and are used later on, and the
        write's own lazy operands that read the memory it writes elsewhere than where it writes (a tile's loads
        all happen before its stores: ``z += tl.load(Z + offs)[None, :]; tl.store(Z + ..., z)`` must not read
        rows the store already overwrote)."""
        written = origins(op.ptr, self.func) if isinstance(op, (O.StoreOp, O.AtomicRMWOp, O.AtomicCASOp)) else ()
        for v, node in self.pending:
            if self.vals.get(v) is not node:
                continue
            later = any(u not in self.lowered and not op.is_ancestor_of(u) for u, _ in v.uses)
            own = bool(written) and any(o is v for o in op.operands) and _reads_elsewhere(v, op.ptr, written, self.func)
            if later or own:
                self.vals[v] = self.materialise(node)
                why = "read before a later write" if later else "reads memory its store overwrites"
                self.note(getattr(v, "op", None), f"buffer {self.vals[v].where} ({why})")
        self.pending = []

    # -- values --------------------------------------------------------------------------------------------
    def get(self, v):
        try:
            return self.vals[v]
        except KeyError:
            raise BackendError(f"value {v!r} used before it was lowered") from None

    def set_tile(self, op, node):
        v = op.results[0]
        if isinstance(node, Lazy) and should_materialise(op, node, v):
            node = self.materialise(node)
            self.note(op, f"buffer {node.where} ({len(v.uses)} uses)")
        elif isinstance(node, Lazy) and _reads_memory(node):
            self.pending.append((v, node))
        self.vals[v] = node

    def lazy(self, op, args, const=None):
        t = op.results[0].type
        return Lazy(op, args, t, stride_of(op, args, t), const)

    # -- ops -----------------------------------------------------------------------------------------------
    def op_constant(self, op):
        t, v = op.results[0].type, op.attrs["value"]
        if t.is_tile:
            self.set_tile(op, self.lazy(op, [], const=v))
        else:
            self.consts[op.results[0]] = v
            self.vals[op.results[0]] = LT.const_of(t, v)

    def op_splat(self, op):
        src = op.operands[0]
        self.set_tile(op, self.lazy(op, [self.get(src)], const=self.consts.get(src)))

    def op_program_id(self, op):
        self.vals[op.results[0]] = self.pids[op.attrs["axis"]]

    def op_num_programs(self, op):
        self.vals[op.results[0]] = self.nprogs[op.attrs["axis"]]

    def op_elementwise(self, op):
        t = op.results[0].type
        if t.is_tile:
            args = [self.get(o) for o in op.operands]
            if isinstance(op, O.HintOp) and isinstance(args[0], Buf):
                self.vals[op.results[0]] = args[0]
                return
            return self.set_tile(op, self.lazy(op, args))
        args = [self.get(o) for o in op.operands]
        if isinstance(op, O.HintOp):
            r = args[0]
        elif isinstance(op, O.LoadOp):
            mask = args[1] if len(args) > 1 else None
            other = args[2] if len(args) > 2 else None
            r = self.mem.load_scalar(args[0], t, mask, other)
        else:
            r = emit_op(self.b, type(op), op.attrs, args, [v.type for v in op.operands], t)
        self.vals[op.results[0]] = r

    def op_load(self, op):
        if op.results[0].type.is_tile:
            ptr = self.get(op.ptr)
            mask = self.get(op.mask) if op.mask is not None else None
            other = self.get(op.other) if op.other is not None else None
            return self.set_tile(op, self.lazy(op, [ptr, mask, other]))
        return self.op_elementwise(op)

    def op_store(self, op):
        ptr, val = self.get(op.ptr), self.get(op.value)
        mask = self.get(op.mask) if op.mask is not None else None
        if not op.ptr.type.is_tile:
            return self.mem.store_scalar(ptr, val, op.value.type, mask)
        shape = op.ptr.type.shape
        w = pick_width(shape[-1], VMAX)
        vt = op.value.type
        self.note(op, f"loop nest {'x'.join(map(str, shape))} by {w}: {self.access(ptr, w)} store, fused producers")
        chunks(self, shape, w, [val, ptr], lambda pt: self.mem.store_at(ptr, val, mask, vt, pt, w), mask, op)

    def op_reshape(self, op):
        t = op.results[0].type
        src = self.get(op.src)
        if not t.is_tile:  # tile of one element -> scalar
            self.vals[op.results[0]] = ev(self, src, Point(src.shape, [LT.const(LT.I32, 0)] * len(src.shape)), 1)
            return
        if not op.src.type.is_tile:
            return self.set_tile(op, Lazy(op, [src], t, 0))
        buf = self.contiguous(src)
        self.vals[op.results[0]] = Buf(buf.ptr, t, base=buf.base)

    def op_trans(self, op):
        buf = self.materialise(self.get(op.src)) if not isinstance(self.get(op.src), Buf) else self.get(op.src)
        order = op.attrs["order"]
        self.vals[op.results[0]] = Buf(buf.ptr, op.results[0].type, [buf.strides[i] for i in order], base=buf.base)

    def op_return(self, op):
        self.b.ret_void()

    def op_call(self, op):
        """Calls the inliner left (``noinline`` functions) are expanded here: tiles are nodes, so binding the
        callee's parameters to the argument nodes and lowering its body is all an inlined call needs."""
        module = self.func.parent_op
        callee = module.lookup(op.attrs["callee"]) if module is not None else None
        if callee is None:
            raise BackendError(f"call to unknown function '{op.attrs['callee']}'")
        self.depth = getattr(self, "depth", 0) + 1
        if self.depth > 64:
            raise BackendError(f"recursive call to '{callee.sym_name}' is not supported on CPU")
        self.lowered -= set(callee.walk())
        for a, v in zip(callee.args, op.operands):
            self.vals[a] = self.get(v)
        rets, ret_vals = [], []
        for o in callee.body.ops:
            if isinstance(o, O.ReturnOp):
                ret_vals = list(o.operands)
                rets = [self.get(v) for v in ret_vals]
                break
            self.op(o)
        for r, v in zip(op.results, rets):
            self.vals[r] = v
        # lazy values of this expansion that read memory are tracked through the call's results from now on;
        # the callee's own values must never be materialised at a later (possibly non-dominated) point
        inside = {r for o in callee.walk() for r in o.results} | set(callee.args)
        pending = [(v, n) for v, n in self.pending if v not in inside]
        for r, v in zip(op.results, ret_vals):
            node = self.vals.get(r)
            if isinstance(node, Lazy) and _reads_memory(node):
                pending.append((r, node))
        self.pending = pending
        self.depth -= 1

    def op_barrier(self, op):
        pass

    def op_assume(self, op):
        intrinsic(self.b, "llvm.assume", ir.VoidType(), [self.get(op.cond)])


def _reads_memory(node) -> bool:
    return isinstance(node, Lazy) and node.loads


# The Lowering's own op methods, and the ops that become lazy nodes (fused into their consumers' loops).
for _cls, _fn in ((O.ConstantOp, Lowering.op_constant), (O.SplatOp, Lowering.op_splat),
                  (O.ProgramIdOp, Lowering.op_program_id), (O.NumProgramsOp, Lowering.op_num_programs),
                  (O.LoadOp, Lowering.op_load), (O.StoreOp, Lowering.op_store), (O.ReshapeOp, Lowering.op_reshape),
                  (O.TransOp, Lowering.op_trans), (O.ReturnOp, Lowering.op_return), (O.CallOp, Lowering.op_call),
                  (O.BarrierOp, Lowering.op_barrier), (O.AssumeOp, Lowering.op_assume),
                  ((O.ElementwiseOp, O.ArangeOp, O.BroadcastOp, O.ExpandDimsOp, O.HintOp), Lowering.op_elementwise)):
    LOWERINGS.register(*(_cls if isinstance(_cls, tuple) else (_cls,)))(_fn)


def _reads_elsewhere(v, ptr, written, func) -> bool:
    """Whether computing ``v`` loads from an argument in ``written`` through other addresses than ``ptr``
    (loads through ``ptr`` itself read each element where the store then writes it: safe to fuse)."""
    seen, todo = set(), [v]
    while todo:
        x = todo.pop()
        if id(x) in seen or not isinstance(x, OpResult):
            continue
        seen.add(id(x))
        d = x.op
        if isinstance(d, O.LoadOp):
            if d.ptr is not ptr and origins(d.ptr, func) & set(written):
                return True
            todo += [o for o in d.operands[1:]]
        elif not d.regions:
            todo += list(d.operands)
    return False
