"""The reference evaluator: runs any tir module on the host with numpy.

It is the meaning of the IR that every pass and backend is tested against. Semantics are a table keyed by op class
(:data:`EVALUATION`, an :class:`~tilec.ir.dispatch.OpTable`; extend it with :func:`register_impl`): each entry
takes the interpreter, the op and its operand values and returns the result values. Elementwise ops carry their
own numpy meaning (``ElementwiseOp.evaluate``, from ``semantics.py``), number formats come from ``numerics.py``
and byte-addressed memory from ``memory.py``.

Values are numpy arrays (0-d for scalars) in the element type's storage dtype; callers get numpy scalars for
scalars (:func:`numerics.public`). A kernel's grid runs program by program, sequentially, x fastest.

Choices where the IR leaves results undefined: masked-off ``load`` lanes without ``other`` read 0; masked-off
atomic lanes return 0; integer division by zero gives 0; float -> int casts saturate (NaN -> 0). (``gather``
indices wrap modulo the axis size: that one is the op's own definition, which every backend follows.)
"""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import TilecError
from .core import Operation, Region
from .dispatch import OpTable
from .memory import Memory, OutOfBoundsError
from .numerics import as_value, finish, public, quantize_format, storage, to_bits
from .ops import FuncOp, ModuleOp
from .types import PointerType, f32
from . import ops as O

__all__ = ["Memory", "EvaluationError", "KernelAssertionError", "run_kernel", "evaluate_function", "fold",
           "register_impl", "EVALUATION", "OutOfBoundsError", "identity"]


class EvaluationError(TilecError):
    """An op could not be evaluated (bad memory access, no semantics, malformed IR); names the op's location."""


class KernelAssertionError(EvaluationError, AssertionError):
    """A ``tl.device_assert`` failed."""


def _where(op: Operation) -> str:
    loc = f"{op.loc.file}:{op.loc.line}:{op.loc.col}: " if op.loc is not None else ""
    return f"{loc}'{op.name}'"


EVALUATION = OpTable("reference semantics")
register_impl = EVALUATION.register
"""Decorator: ``fn(interp, op, args) -> list of values`` is the semantics of the given op classes."""


class Interpreter:
    def __init__(self, module: ModuleOp | None, memory: Memory | None, program_id=(0, 0, 0),
                 num_programs=(1, 1, 1)):
        self.module = module
        self.memory = memory
        self.program_id = tuple(program_id)
        self.num_programs = tuple(num_programs)
        self.env: dict = {}

    def call(self, func: FuncOp, args) -> list:
        saved, self.env = self.env, {}
        try:
            return self.run_block(func.regions[0].block, args)
        finally:
            self.env = saved

    def run_region(self, region: Region, args) -> list:
        """Run a single-block region; returns its terminator's operand values."""
        return self.run_block(region.blocks[0], args)

    def run_block(self, block, args) -> list:
        env = self.env
        for a, v in zip(block.args, args):
            env[a] = v
        for op in block.ops:
            if op.is_terminator:
                return [env[v] for v in op.operands]
            fn = EVALUATION.lookup(op)
            if fn is None:
                raise EvaluationError(f"{_where(op)} op has no reference semantics")
            try:
                res = fn(self, op, [env[v] for v in op.operands])
            except (EvaluationError, KeyboardInterrupt):
                raise
            except OutOfBoundsError as e:
                raise EvaluationError(f"{_where(op)} op at program {self.program_id}: {e}") from None
            except Exception as e:
                raise EvaluationError(f"{_where(op)} op failed: {type(e).__name__}: {e}") from e
            for r, v in zip(op.results, res):
                env[r] = v
        return []

    def need_memory(self, op) -> Memory:
        if self.memory is None:
            raise EvaluationError(f"{_where(op)} op needs memory (pass a Memory)")
        return self.memory


# -- elementwise, constants, shapes -----------------------------------------------------------------------------
@register_impl(O.ElementwiseOp)
def _elementwise(ip, op, args):
    return op.evaluate(args)


@register_impl(O.ConstantOp)
def _constant(ip, op, args):
    return [as_value(op.attrs["value"], op.results[0].type)]


@register_impl(O.ArangeOp)
def _arange(ip, op, args):
    t = op.results[0].type
    return [finish(np.arange(op.attrs["start"], op.attrs["end"], dtype=np.int64), t)]


@register_impl(O.ProgramIdOp)
def _program_id(ip, op, args):
    return [np.asarray(ip.program_id[op.attrs["axis"]], dtype=np.int32)]


@register_impl(O.NumProgramsOp)
def _num_programs(ip, op, args):
    return [np.asarray(ip.num_programs[op.attrs["axis"]], dtype=np.int32)]


@register_impl(O.HintOp)
def identity(ip, op, args):
    """Ops whose results are their operands (a GPU layout conversion registers it too)."""
    return list(args)


@register_impl(O.SplatOp, O.BroadcastOp)
def _broadcast(ip, op, args):
    return [np.array(np.broadcast_to(args[0], op.results[0].type.shape))]


@register_impl(O.ExpandDimsOp)
def _expand_dims(ip, op, args):
    return [np.expand_dims(args[0], op.attrs["axis"])]


@register_impl(O.ReshapeOp)
def _reshape(ip, op, args):
    return [np.reshape(args[0], op.results[0].type.shape).copy()]


@register_impl(O.TransOp)
def _trans(ip, op, args):
    return [np.ascontiguousarray(np.transpose(args[0], op.attrs["order"]))]


def _gather_indices(index, n: int):
    """``index`` (any integer dtype) taken modulo ``n`` as int64: the gather op's wrap-around (see ``GatherOp``)."""
    index = np.asarray(index)
    if index.dtype.kind == "u":
        return np.mod(index.astype(np.uint64), np.uint64(n)).astype(np.int64)
    return np.mod(index.astype(np.int64), n)


@register_impl(O.GatherOp)
def _gather(ip, op, args):
    src, index = args
    ax = op.attrs["axis"]
    return [np.take_along_axis(np.asarray(src), _gather_indices(index, np.shape(src)[ax]), ax)]


# -- memory ------------------------------------------------------------------------------------------------
def _mask(args, i, shape):
    m = args[i] if len(args) > i else None
    return np.ones(shape, dtype=bool) if m is None else np.broadcast_to(m, shape)


@register_impl(O.LoadOp)
def _load(ip, op, args):
    mem = ip.need_memory(op)
    ptr = np.asarray(args[0])
    t = op.results[0].type
    mask = _mask(args, 1, ptr.shape).reshape(-1)
    out = np.zeros(ptr.size, dtype=storage(t))
    if len(args) > 2:
        out[:] = np.broadcast_to(args[2], ptr.shape).reshape(-1)
    if mask.any():
        out[mask] = mem.read(ptr.reshape(-1)[mask], t, _where(op))
    return [out.reshape(ptr.shape)]


def _descriptor_block(op, args, first, size):
    """Addresses and in-bounds mask of a descriptor op's block (its shape, strides, offsets from ``first``)."""
    block = op.attrs["block_shape"]
    n = len(block)
    base = np.uint64(np.asarray(args[0]))
    shape, strides, offsets = ([int(np.asarray(a)) for a in args[first + k * n:first + (k + 1) * n]]
                               for k in range(3))
    idx = np.meshgrid(*[np.arange(b, dtype=np.int64) + o for b, o in zip(block, offsets)], indexing="ij")
    ok = np.ones(tuple(block), dtype=bool)
    lin = np.zeros(tuple(block), dtype=np.int64)
    for i, d in enumerate(idx):
        ok &= (d >= 0) & (d < shape[i])
        lin += d * strides[i]
    return base + (lin * size).view(np.uint64), ok


@register_impl(O.DescriptorStoreOp)
def _descriptor_store(ip, op, args):
    """In-bounds elements of the block written; the others dropped."""
    mem = ip.need_memory(op)
    t = op.operands[1].type
    ptr, ok = _descriptor_block(op, args, 2, 8 if isinstance(t.element, PointerType) else t.element.bytes)
    mask = ok.reshape(-1)
    if mask.any():
        vals = np.broadcast_to(args[1], ptr.shape).reshape(-1)
        mem.write(ptr.reshape(-1)[mask], vals[mask], t, _where(op))
    return []


@register_impl(O.DescriptorLoadOp)
def _descriptor_load(ip, op, args):
    """The block's addresses and bounds from its coordinates; out-of-bounds elements are the padding value."""
    mem = ip.need_memory(op)
    block = op.attrs["block_shape"]
    t = op.results[0].type
    ptr, ok = _descriptor_block(op, args, 1, 8 if isinstance(t.element, PointerType) else t.element.bytes)
    nan = op.attrs["padding"] == "nan" and t.is_float
    out = np.full(ptr.size, np.nan if nan else 0, dtype=storage(t))
    mask = ok.reshape(-1)
    if mask.any():
        out[mask] = mem.read(ptr.reshape(-1)[mask], t, _where(op))
    return [out.reshape(tuple(block))]


@register_impl(O.StoreOp)
def _store(ip, op, args):
    mem = ip.need_memory(op)
    ptr = np.asarray(args[0])
    mask = _mask(args, 2, ptr.shape).reshape(-1)
    if mask.any():
        vals = np.broadcast_to(args[1], ptr.shape).reshape(-1)
        mem.write(ptr.reshape(-1)[mask], vals[mask], op.operands[1].type, _where(op))
    return []


@register_impl(O.AtomicRMWOp)
def _atomic_rmw(ip, op, args):
    """Lanes apply one after another in element order, so lanes hitting one address see each other."""
    mem = ip.need_memory(op)
    ptr, val = np.asarray(args[0]), np.asarray(args[1])
    t = op.operands[1].type
    e = t.element
    kind = op.attrs["kind"]
    mask = _mask(args, 2, ptr.shape).reshape(-1)
    flat_p, flat_v = ptr.reshape(-1), np.broadcast_to(val, ptr.shape).reshape(-1)
    old = np.zeros(ptr.size, dtype=val.dtype)
    where = _where(op)
    with np.errstate(all="ignore"):
        for i in np.nonzero(mask)[0]:
            cur = mem.read(flat_p[i:i + 1], t, where)
            old[i] = cur[0]
            new = flat_v[i:i + 1] if kind == "xchg" else finish(O.BINARY_OPS[kind].numpy(e, cur, flat_v[i:i + 1]), e)
            mem.write(flat_p[i:i + 1], new, t, where)
    return [old.reshape(ptr.shape)]


@register_impl(O.AtomicCASOp)
def _atomic_cas(ip, op, args):
    mem = ip.need_memory(op)
    ptr = np.asarray(args[0])
    t = op.operands[2].type
    cmp = np.broadcast_to(args[1], ptr.shape).reshape(-1)
    val = np.broadcast_to(args[2], ptr.shape).reshape(-1)
    flat_p = ptr.reshape(-1)
    old = np.zeros(ptr.size, dtype=np.asarray(args[2]).dtype)
    where = _where(op)
    for i in range(ptr.size):
        cur = mem.read(flat_p[i:i + 1], t, where)
        old[i] = cur[0]
        if to_bits(cur, t)[0] == to_bits(cmp[i:i + 1], t)[0]:
            mem.write(flat_p[i:i + 1], val[i:i + 1], t, where)
    return [old.reshape(ptr.shape)]


# -- reductions, scans, dot ------------------------------------------------------------------------------------
def _combine(ip, op, left, right):
    """Run the combine region on whole slices; results broadcast to the slices' shape."""
    out = ip.run_region(op.regions[0], list(left) + list(right))
    return [finish(np.broadcast_to(o, left[0].shape), s.type) for o, s in zip(out, op.operands)]


@register_impl(O.ReduceOp)
def _reduce(ip, op, args):
    """Pairwise tree over the axis, keeping left-to-right order of the combine's arguments."""
    axis = op.attrs["axis"]
    xs = [np.moveaxis(a, axis, 0) for a in args]
    while xs[0].shape[0] > 1:
        n = xs[0].shape[0]
        m = n // 2
        comb = _combine(ip, op, [x[0:2 * m:2] for x in xs], [x[1:2 * m:2] for x in xs])
        if n % 2:
            comb = [np.concatenate([c, x[n - 1:]]) for c, x in zip(comb, xs)]
        xs = comb
    return [np.array(x[0]) for x in xs]


@register_impl(O.ScanOp)
def _scan(ip, op, args):
    """Inclusive scan by doubling (log2 n region evaluations); ``reverse`` scans from the end."""
    axis, rev = op.attrs["axis"], op.attrs.get("reverse", False)
    xs = [np.moveaxis(a, axis, 0) for a in args]
    if rev:
        xs = [x[::-1] for x in xs]
    n = xs[0].shape[0]
    d = 1
    while d < n:
        comb = _combine(ip, op, [x[:n - d] for x in xs], [x[d:] for x in xs])
        xs = [np.concatenate([x[:d], c]) for x, c in zip(xs, comb)]
        d *= 2
    if rev:
        xs = [x[::-1] for x in xs]
    return [np.ascontiguousarray(np.moveaxis(x, 0, axis)) for x in xs]


@register_impl(O.DotOp)
def _dot(ip, op, args):
    """Products summed in float64 (int64 for integers) and rounded once to the accumulator type: the most
    accurate answer any backend can give, so backends are checked against it with a tolerance. ``tf32``
    inputs are first rounded to tf32 as tensor cores do; ``tf32x3`` recovers f32 accuracy, so it is ``ieee``."""
    a, b, c = args
    acc_t = op.results[0].type
    if acc_t.is_float:
        prec = op.attrs.get("input_precision", "ieee")
        ops_ = []
        for x, v in ((a, op.operands[0]), (b, op.operands[1])):
            x = x.astype(np.float64)
            if prec == "tf32" and v.type.element == f32:
                x = _tf32(x)
            ops_.append(x)
        with np.errstate(all="ignore"):
            return [finish(np.matmul(ops_[0], ops_[1]) + c.astype(np.float64), acc_t)]
    with np.errstate(all="ignore"):
        r = np.matmul(a.astype(np.int64), b.astype(np.int64)) + c.astype(np.int64)
    return [finish(r, acc_t)]


def _tf32(x):
    """f32 values as tensor cores read them in tf32 mode: f32's exponent range, 10 mantissa bits."""
    return quantize_format(x, 10, -126, float(np.finfo(np.float32).max), True)


# -- control flow, calls, side effects -----------------------------------------------------------------------
def _int(v) -> int:
    return int(np.asarray(v).item())


@register_impl(O.ForOp)
def _for(ip, op, args):
    lb, ub, step = (_int(x) for x in args[:3])
    if step == 0:
        raise EvaluationError(f"{_where(op)} op with step 0")
    carried = list(args[3:])
    iv_t = op.operands[0].type
    for i in range(lb, ub, step):
        carried = ip.run_region(op.regions[0], [as_value(i, iv_t)] + carried)
    return carried


@register_impl(O.IfOp)
def _if(ip, op, args):
    region = op.regions[0] if bool(np.asarray(args[0])) else op.regions[1]
    if not region.blocks or not region.blocks[0].ops:
        return []
    return ip.run_region(region, [])


@register_impl(O.WhileOp)
def _while(ip, op, args):
    carried = list(args)
    while True:
        out = ip.run_region(op.regions[0], carried)
        if not bool(np.asarray(out[0])):
            return out[1:]
        carried = ip.run_region(op.regions[1], out[1:])


@register_impl(O.CallOp)
def _call(ip, op, args):
    callee = op.attrs["callee"]
    f = ip.module.lookup(callee) if ip.module is not None else None
    if f is None:
        raise EvaluationError(f"{_where(op)} op calls unknown function @{callee}")
    return ip.call(f, args)


@register_impl(O.AssertOp)
def _assert(ip, op, args):
    c = np.asarray(args[0])
    if not c.all():
        bad = tuple(int(i) for i in np.argwhere(~c)[0]) if c.ndim else ()
        e = KernelAssertionError(f"{_where(op)} assertion failed at program {ip.program_id}"
                                 f"{f', index {bad}' if bad else ''}: {op.attrs.get('message', '')}")
        e.text, e.index = op.attrs.get("message", ""), bad
        raise e
    return []


@register_impl(O.PrintOp)
def _print(ip, op, args):
    parts = []
    for v, val in zip(op.operands, args):
        a = np.asarray(val)
        if op.attrs.get("hex") and v.type.is_int:
            a = np.vectorize(hex)(a.astype(np.int64)) if a.ndim else hex(int(a))
        parts.append(str(a))
    print(f"pid {ip.program_id} {op.attrs.get('prefix', '')}{' '.join(parts)}")
    return []


@register_impl(O.AssumeOp)
def _assume(ip, op, args):
    return []  # a promise for the optimiser, not a check (debug builds check with tl.device_assert)


@register_impl(O.BarrierOp)
def _barrier(ip, op, args):
    return []


# -- entry points --------------------------------------------------------------------------------------------
def _bind(x, t, memory: Memory):
    """A host argument as a value of parameter type ``t``; arrays for pointer parameters are registered."""
    if isinstance(t, PointerType):
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            return np.asarray(x, dtype=np.uint64)  # a raw address
        if not (isinstance(x, np.ndarray) or hasattr(x, "__array_interface__")):
            raise TypeError(f"a pointer parameter needs an array (or an address), got {type(x).__name__}")
        return np.asarray(memory.register(np.asarray(x)), dtype=np.uint64)
    return as_value(x, t)


def _bind_all(func: FuncOp, args, memory: Memory) -> list:
    types = func.attrs["function_type"].inputs
    name = func.attrs["sym_name"]
    if len(args) != len(types):
        raise EvaluationError(f"@{name} takes {len(types)} arguments, got {len(args)}")
    out = []
    for i, (x, t) in enumerate(zip(args, types)):
        try:
            out.append(_bind(x, t, memory))
        except (TypeError, ValueError, OverflowError) as e:
            raise EvaluationError(f"@{name} argument #{i} ({t}): {e}") from None
    return out


def _module_of(func: FuncOp):
    p = func.parent_op
    return p if isinstance(p, ModuleOp) else None


def evaluate_function(func: FuncOp, args, memory: Memory | None = None, program_id=(0, 0, 0),
                      num_programs=(1, 1, 1)) -> list:
    """Run one function once; returns its results (numpy scalars for scalars, arrays for tiles)."""
    memory = Memory() if memory is None else memory
    vals = _bind_all(func, args, memory)
    ip = Interpreter(_module_of(func), memory, program_id, num_programs)
    with np.errstate(all="ignore"):
        return [public(v) for v in ip.call(func, vals)]


def run_kernel(module, kernel_name, args, grid, memory: Memory | None = None) -> Memory:
    """Run ``kernel_name`` for every program of ``grid`` (an int or up to 3 ints); arrays passed for pointer
    parameters are updated in place. Returns the memory used."""
    func = module if isinstance(module, FuncOp) else module.lookup(kernel_name)
    if func is None:
        raise EvaluationError(f"no function @{kernel_name} in the module")
    grid = (grid,) if isinstance(grid, (int, np.integer)) else tuple(grid)
    grid = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    memory = Memory() if memory is None else memory
    vals = _bind_all(func, args, memory)
    module_op = module if isinstance(module, ModuleOp) else _module_of(func)
    with np.errstate(all="ignore"):
        for z, y, x in itertools.product(range(grid[2]), range(grid[1]), range(grid[0])):
            Interpreter(module_op, memory, (x, y, z), grid).call(func, vals)
    return memory


def _undefined(op, vals) -> bool:
    """Inputs on which the op's result is undefined; the evaluator picks a value, a folder must not."""
    return isinstance(op, O.ElementwiseOp) and op.undefined_on(vals)


def fold(op: Operation, operand_values) -> list | None:
    """Results of a pure, region-free op on known operand values (numbers or arrays), or None if it cannot be
    folded. Used by canonicalisation; values come back like :func:`evaluate_function`'s."""
    impl = EVALUATION.lookup(op)
    if op.regions or "pure" not in op.traits or isinstance(op, O.ProgramIdOp) or impl is None:
        return None
    try:
        vals = [as_value(v, o.type) for v, o in zip(operand_values, op.operands)]
        if _undefined(op, vals):
            return None
        with np.errstate(all="ignore"):
            res = impl(Interpreter(None, None), op, vals)
        return [public(finish(np.broadcast_to(r, t.type.shape), t.type)) for r, t in zip(res, op.results)]
    except Exception:
        return None
