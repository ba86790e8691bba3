"""The per-kernel lowering state every op lowering works on: values (a tile is a list of LLVM values, one per
register of its layout, in register order; a scalar is one value), the entry block where thread coordinates
are computed once, the kernel's shared memory, and helpers several lowerings share (mapping over registers,
guarded execution, region combiners for reduce/scan, flattening carried values for control flow).

Vendor facts come from ``self.target`` (a :class:`tilec.gpu.target.GpuTarget`); op lowerings are found by op
class in :mod:`.registry`.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.blocks import guarded
from ...errors import BackendError
from ...ir import ops as O
from ..launch_tensormaps import scratch_layout
from ..passes.axis_info import AxisAnalysis
from .registry import lowering_for
from .types import I8, I32, llvm_type
from .values import ll_of, num_regs
from ...targets.options import num_warps_of


def _flat_types(types) -> list:
    """LLVM types of values of tir ``types`` as they cross a call: a tile as its registers."""
    out = []
    for t in types:
        out.extend([llvm_type(t.element)] * num_regs(t) if t.is_tile else [llvm_type(t)])
    return out


def declare_device_function(module: ir.Module, func) -> ir.Function:
    """The LLVM function of a device function (a ``noinline`` helper called for real): tiles travel as their
    registers (the layouts call-boundaries fixed), several results as one struct. Internal and never inlined,
    so that the helper stays one function in the assembly."""
    ft = func.function_type
    params = _flat_types(ft.inputs)
    results = _flat_types(ft.results)
    ret = ir.VoidType() if not results else (results[0] if len(results) == 1 else ir.LiteralStructType(results))
    fn = ir.Function(module, ir.FunctionType(ret, params), func.sym_name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    return fn


class FuncLowering:
    def __init__(self, module: ir.Module, func, options, target, debug=None):
        self.module, self.func, self.options, self.target = module, func, options, target
        self.debug, self.subprogram = debug, None  # a codegen.debuginfo.DebugInfo: op locations become .loc
        self.env: dict = {}
        self.cache: dict = {}
        self.axis = AxisAnalysis(func)
        self.num_warps = num_warps_of(func, options)

    def get(self, v):
        try:
            return self.env[v]
        except KeyError:
            raise BackendError(f"internal: value {v!r} used before it was lowered") from None

    def bind(self, v, lowered):
        self.env[v] = lowered

    @property
    def smem(self):
        """The kernel's dynamic shared memory, one byte array every shared-memory user offsets into."""
        name, space = self.target.shared_symbol, self.target.shared_address_space
        g = self.module.globals.get(name)
        if g is None:
            g = ir.GlobalVariable(self.module, ir.ArrayType(I8, 0), name, addrspace=space)
            g.linkage = "external"
            g.align = 16
            g.type = ir.PointerType(addrspace=space)  # an opaque pointer, so GEPs/stores of any type apply
        return g

    def run(self, fn=None):
        """Lower the kernel (``fn`` None: its entry point is created here) or the device function ``fn``
        (declared beforehand by ``declare_device_function``, so that calls can be lowered in any order)."""
        f = self.func
        kernel = fn is None
        scratch = scratch_layout(f).used if kernel else False
        if kernel:
            arg_types = [llvm_type(a.type) if not a.type.is_tile else None for a in f.args]
            if any(t is None for t in arg_types):
                raise BackendError("kernel parameters must be scalars or pointers")
            if scratch:  # a hidden last parameter: the launch's global scratch (``launch_tensormaps.scratch_layout``)
                arg_types.append(ir.PointerType(I8, addrspace=1))
            fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), arg_types), f.sym_name)
            fn.calling_convention = self.target.kernel_calling_convention
        self.fn = fn
        entry_bb = fn.append_basic_block("entry")
        body_bb = fn.append_basic_block("body")
        self.entry = ir.IRBuilder(entry_bb)
        tid = self.target.thread_id(self.entry)
        ws = self.target.warp_size
        self.lane = self.entry.and_(tid, ir.Constant(I32, ws - 1))
        self.warp = self.entry.lshr(tid, ir.Constant(I32, ws.bit_length() - 1))
        self.tid = tid
        self.b = ir.IRBuilder(body_bb)
        if self.debug is not None:
            self.subprogram = self.debug.subprogram(fn, f.sym_name, f.loc)
            self.debug.locate(self.b, self.subprogram, f.loc)
        if kernel:
            for a, la in zip(f.args, fn.args):
                la.name = a.name_hint or ""
                self.bind(a, la)
        else:
            regs = list(fn.args)
            for a in f.args:  # a tile parameter arrives as its registers, in register order
                n = num_regs(a.type) if a.type.is_tile else 1
                vals, regs = regs[:n], regs[n:]
                self.bind(a, list(vals) if a.type.is_tile else vals[0])
        self.global_scratch = None
        if scratch:
            self.global_scratch = fn.args[-1]
            self.global_scratch.name = "global_scratch"
        term = self.block(f.body)
        if not kernel and isinstance(term, O.ReturnOp):
            flat, _ = self._flatten([self.get(v) for v in term.operands])
            rt = fn.function_type.return_type
            if isinstance(rt, ir.VoidType):
                self.b.ret_void()
            elif not isinstance(rt, ir.LiteralStructType):
                self.b.ret(flat[0])
            else:
                agg = ir.Constant(rt, ir.Undefined)
                for i, v in enumerate(flat):
                    agg = self.b.insert_value(agg, v, i)
                self.b.ret(agg)
        elif isinstance(term, O.ReturnOp):
            self.b.ret_void()
        elif not self.b.block.is_terminated:
            self.b.ret_void()
        self.entry.branch(body_bb)

    def block(self, block):
        """Lower the ops of ``block`` except its terminator, which is returned."""
        for op in block.ops:
            if op.is_terminator:
                return op
            self.op(op)
        return None

    def op(self, op):
        handler = lowering_for(op)
        if handler is None:
            raise BackendError(f"the {self.target.name} backend cannot lower '{op.name}' yet")
        if self.debug is not None:
            self.debug.locate(self.b, self.subprogram, op.loc)
        try:
            handler(self, op)
        except BackendError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError, AssertionError) as e:
            where = f" at {op.loc}" if op.loc is not None else ""
            raise BackendError(f"internal error lowering '{op.name}'{where}: {type(e).__name__}: {e}") from e

    def _map(self, op, fn):
        """Apply ``fn`` per register. Where axis analysis proves the result constant over aligned runs (a
        mask ``offs < n`` with ``n`` divisible by 16 is one value per vector), only each run's first register
        is computed and the others reuse it."""
        vals = [self.get(o) for o in op.operands]
        r = op.results[0]
        if r.type.is_tile:
            n = num_regs(r.type)
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
        ll = ll_of(v.type)
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

    def _guarded(self, pred, fn, result_type):
        """``fn()`` only where ``pred`` holds; elsewhere the result is undefined (zero or null)."""
        return guarded(self.b, pred, fn, ir.Constant(result_type, None))

    def _combine(self, region_block, accs, xs):
        for a, v in zip(region_block.args, list(accs) + list(xs)):
            self.bind(a, v)
        y = self.block(region_block)
        return [self.get(v) for v in y.operands]

    def _pick(self, cond, xs, ys):
        return [self.b.select(cond, x, y) for x, y in zip(xs, ys)]

    def _smem_base(self, op, what):
        base = op.attrs.get("smem_offset")
        if base is None:
            raise BackendError(f"internal: {what} without shared memory (run allocate-shared)")
        return base

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

    def bind_flat(self, values, flat, shapes):
        """Bind each of ``values`` to its part of the registers ``flat``, grouped as :meth:`_flatten` gave
        ``shapes`` (what crosses a region's boundary, a call or a phi travels flattened)."""
        for v, lowered in zip(values, self._unflatten(flat, shapes)):
            self.bind(v, lowered)

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
