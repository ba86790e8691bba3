"""Interpreter mode (``TILEC_INTERPRET=1`` or ``@tilec.jit(interpret=True)``): the kernel runs as plain Python,
program by program, with every tl operation executed at once on numpy values.

It drives the very same Semantic layer as compilation, only with :class:`EvalBuilder` in place of the IR builder:
each op the Semantic emits is executed by the reference evaluator's implementation of that op, so promotion,
broadcasting and op semantics are identical to compiled code. Python control flow runs natively (a scalar
tensor has a truth value here), so ``print`` and breakpoints work inside kernels.
"""
from __future__ import annotations

import ast
import copy
import ctypes
import linecache
import os
import traceback

import numpy as np

from .. import errors
from ..errors import BoundsError, CompilationError, DeviceAssertionError, TilecError
from ..ir.core import OP_REGISTRY
from ..ir.evaluator import EVALUATION, EvaluationError, Interpreter, KernelAssertionError, OutOfBoundsError
from ..ir.memory import Memory
from ..ir.ops import ConstantOp, stand_in
from ..ir.types import TileType
from ..language import core as tlc
from ..language.core import tensor, type_from_signature, use_semantic
from ..language.semantic import Semantic
from ..frontend.tir_builder import TirBuilder
from ..frontend.values import Packed
from ..passes.inline import InlineAll
from ..passes.pointer_origins import written_params
from ..targets.extent import byte_extent
from . import aggregates, interp_bounds
from ..language.reinterpret import TensorWrapper
from ..ir.numerics import as_value
from ..language import standard


class Value:
    """An evaluated value: a numpy array (0-d for scalars) and its IR type."""
    __slots__ = ("v", "type", "origin")

    def __init__(self, v, type, origin=None):
        self.v, self.type, self.origin = v, type, origin  # origin: debug builds' bounds checks (interp_bounds)

    def __repr__(self):
        return repr(self.v)


class EvalBuilder:
    """The Semantic builder protocol, executing each op immediately."""

    #: debug runs check every pointer access against its argument, so descriptor accesses come as pointer ones
    checks_pointer_accesses = True

    def __init__(self, memory, program_id, num_programs, debug=False):
        self.ip = Interpreter(None, memory, program_id, num_programs)
        self.types = TirBuilder()
        self.debug = debug

    def constant(self, value, ty):
        t = self.types.to_ir(ty)
        op = stand_in(ConstantOp, {"value": value}, [], [t])
        return Value(EVALUATION.lookup(op)(self.ip, op, [])[0], t)

    def create(self, opname, operands, ty, **attrs):
        cls = OP_REGISTRY[opname]
        full = dict(cls.attr_defaults, **attrs)
        t = self.types.to_ir(ty) if ty is not None else None
        if t is not None and "elementwise" in cls.traits:
            # inside reduce/scan combines, "scalars" hold whole slices: keep the values' real shape
            shape = np.broadcast_shapes(*[np.shape(o.v) for o in operands]) if operands else ()
            if shape != t.shape:
                t = TileType(shape, t.element) if shape else t.element
        op = stand_in(cls, full, [o.type for o in operands], [t] if t is not None else [])
        if self.debug:
            interp_bounds.check(cls, operands, full)
        res = EVALUATION.lookup(op)(self.ip, op, [o.v for o in operands])
        if t is None:
            return None
        return Value(res[0], t, interp_bounds.propagate(cls, operands) if self.debug and t.is_ptr else None)

    def inline_asm(self, asm, constraints, operands, types, pure, pack):
        """Assembly is written for a GPU; the interpreter runs kernels on the host, with numpy."""
        raise NotImplementedError(
            "tl.inline_asm_elementwise is not supported in the interpreter: inline GPU assembly has no meaning "
            "on the host; run the kernel on a GPU target, or write the operation with tl functions (or "
            "tl.map_elementwise)")

    @staticmethod
    def _typed(arr, elt):
        return Value(arr, TileType(arr.shape, elt) if arr.shape else elt)

    def reduce(self, srcs, axis, result_types, combine):
        elts = [s.type.element for s in srcs]
        xs = [np.moveaxis(s.v, axis, 0) for s in srcs]
        while xs[0].shape[0] > 1:
            n = xs[0].shape[0]
            m = n // 2
            out = combine([self._typed(x[0:2 * m:2], e) for x, e in zip(xs, elts)],
                          [self._typed(x[1:2 * m:2], e) for x, e in zip(xs, elts)])
            out = [np.broadcast_to(o.v, x[0:2 * m:2].shape) for o, x in zip(out, xs)]
            if n % 2:
                out = [np.concatenate([o, x[n - 1:]]) for o, x in zip(out, xs)]
            xs = out
        return [Value(np.array(x[0]), self.types.to_ir(t)) for x, t in zip(xs, result_types)]

    def scan(self, srcs, axis, reverse, combine):
        elts = [s.type.element for s in srcs]
        ys = [np.moveaxis(s.v, axis, 0) for s in srcs]
        if reverse:
            ys = [y[::-1] for y in ys]
        ys = [np.array(y) for y in ys]
        k = 1
        while k < ys[0].shape[0]:
            out = combine([self._typed(y[:-k], e) for y, e in zip(ys, elts)],
                          [self._typed(y[k:], e) for y, e in zip(ys, elts)])
            new = [y.copy() for y in ys]
            for nw, o in zip(new, out):
                nw[k:] = np.broadcast_to(o.v, nw[k:].shape)
            ys = new
            k *= 2
        if reverse:
            ys = [y[::-1] for y in ys]
        return [Value(np.ascontiguousarray(np.moveaxis(y, 0, axis)), s.type) for y, s in zip(ys, srcs)]


class EvalSemantic(Semantic):
    """The Semantic with runtime values: scalar tensors have truth values and indices."""
    MIN_DOT_SIZE = 1

    def to_bool(self, x: tensor) -> bool:
        v = np.asarray(x.handle.v)
        if v.size != 1:
            raise TypeError(f"the truth value of a tensor of shape {list(x.shape)} is ambiguous")
        return bool(v.reshape(()))

    def to_index(self, x: tensor) -> int:
        if not x.dtype.is_int() or x.shape:
            raise TypeError(f"cannot use a {x.type} tensor as an integer")
        return int(np.asarray(x.handle.v).reshape(()))

    def call_combine(self, fn, scalars):
        out = interpreted_function(fn)(*scalars) if hasattr(fn, "fn") else fn(*scalars)
        return list(out) if isinstance(out, tuple) else [out]


def _byte_extent(addr: int, shape, strides, itemsize: int) -> tuple[int, int]:
    """[low, high) byte addresses an array view (``strides`` in bytes) can touch."""
    if any(int(s) == 0 for s in shape):
        return addr, addr
    lo = hi = 0
    for n, st in zip(shape, strides):
        span = (int(n) - 1) * int(st)
        lo, hi = lo + min(span, 0), hi + max(span, 0)
    return addr + lo, addr + hi + itemsize


def _register_pointer(v, memory: Memory) -> int:
    """The address a pointer argument passes, with the bytes its view can reach made addressable: numpy arrays
    and views of any stride, torch tensors of any dtype and stride (their storage is shared, so stores land in the
    caller's tensor), ``reinterpret`` wrappers and anything with ``__array_interface__``."""
    if isinstance(v, TensorWrapper):
        v = v.base
    if type(v).__module__.startswith("torch") and hasattr(v, "data_ptr"):
        if v.device.type != "cpu":
            raise TypeError("the interpreter runs on the host: pass CPU tensors (got one on "
                            f"{v.device.type})")
        addr, item = int(v.data_ptr()), v.element_size()
        lo, hi = _byte_extent(addr, v.shape, [s * item for s in v.stride()], item)
    else:
        if not isinstance(v, np.ndarray):
            v = np.asarray(v)
        if v.flags.c_contiguous or v.flags.f_contiguous:
            return memory.register(v)
        addr = v.__array_interface__["data"][0]
        lo, hi = _byte_extent(addr, v.shape, v.strides, v.itemsize)
    if hi > lo:
        raw = np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(lo))
        memory.register(raw)
        memory.keep_alive = getattr(memory, "keep_alive", []) + [v]
    return addr


def _arg_tensor(sig: str, v, memory: Memory, tb: TirBuilder, name: str = "?"):
    t = type_from_signature(sig)
    it = tb.to_ir(t)
    if t.is_ptr():
        addr = _register_pointer(v, memory)
        origin = (interp_bounds.Origin(name, addr, *byte_extent(v)),)
        return tensor(Value(np.asarray(addr, dtype=np.uint64), it, origin), t)
    return tensor(Value(as_value(v, it), it), t)


_SCALAR_ATTR = "__tilec_scalar_attr__"
_NUMBER_ATTRS = frozenset(n for t in (bool, int, float) for n in dir(t))
_TENSOR_ONLY_ATTRS = frozenset(n for n in dir(tensor) if not n.startswith("_") and n not in _NUMBER_ATTRS)


class _ScalarAttributes(ast.NodeTransformer):
    """``x.attr`` for tensor-only attribute names becomes a call that also serves Python numbers (the compiled
    path reads them through the scalar tensor the number becomes; natively an int has no ``.dtype``)."""

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and node.attr in _TENSOR_ONLY_ATTRS:
            return ast.copy_location(ast.Call(ast.Name(_SCALAR_ATTR, ast.Load()),
                                              [node.value, ast.Constant(node.attr)], []), node)
        return node


_LOOP = "__tilec_loop__"


class _RuntimeLoops(ast.NodeTransformer):
    """``for i in range(...)`` / ``tl.range(...)`` iterate through :func:`loop_values`, so ``i`` is the int32 (or
    int64) scalar tensor a compiled loop's induction variable is, not a Python int (which would adopt its partner's
    type in arithmetic, and divide by zero natively). Other iterables (``tl.static_range``, tuples) are unchanged."""

    def visit_For(self, node):
        self.generic_visit(node)
        it = node.iter
        if isinstance(it, ast.Call):
            node.iter = ast.copy_location(ast.Call(ast.Name(_LOOP, ast.Load()), [it.func] + it.args, it.keywords), it)
        return node


def loop_values(fn, *args, **kwargs):
    """What ``for`` iterates over for ``fn(*args, **kwargs)``: a runtime range yields scalar tensors typed as
    the compiled loop's induction variable (int64 when a bound is a 64-bit integer, else int32)."""
    if fn is range:
        fn = standard.range
    it = fn(*args, **kwargs)
    if not isinstance(it, standard.range):
        return it
    sem = tlc.current()
    bounds = [sem.to_tensor(v) for v in (it.start, it.end, it.step)]
    for b in bounds:
        if b.shape or not b.dtype.is_int():
            raise TypeError(f"range bounds must be integer scalars, got {b.type}")
    ity = tlc.int64 if any(b.dtype.int_bitwidth == 64 for b in bounds) else tlc.int32
    start, end, step = (sem.to_index(sem.cast(b, ity)) for b in bounds)
    if step == 0:
        raise ValueError("range step must not be zero")
    return (sem.to_tensor(i, ity) for i in range(start, end, step))


def interpreted_function(jitfn):
    """The Python function the interpreter runs for ``jitfn``: its source with Python numbers given tensor
    attributes, in its globals and its closure's current values (rebuilt when they change). Falls back to the function itself when its source
    cannot be rebuilt."""
    fn = jitfn.fn
    try:
        src = jitfn.source
    except CompilationError:  # no source to rebuild from (a function made by exec): run it as it is
        return fn
    cells = []
    for c in fn.__closure__ or ():
        try:
            cells.append(c.cell_contents)
        except ValueError:
            cells.append(None)
    cached = getattr(jitfn, "_tilec_interpreted", None)
    if cached is not None and cached[0] is src and len(cached[2]) == len(cells) and \
            all(a is b for a, b in zip(cached[2], cells)):  # closure values as built: still current
        return cached[1]
    try:
        fdef = copy.deepcopy(src.tree)
        fdef.decorator_list = []
        fdef = _RuntimeLoops().visit(_ScalarAttributes().visit(fdef))
        free = fn.__code__.co_freevars
        params = [ast.arg(n) for n in (_SCALAR_ATTR, _LOOP) + free]
        maker = ast.FunctionDef("__tilec_make__", ast.arguments([], params, None, [], [], None, []),
                                [fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], [], None)
        tree = ast.fix_missing_locations(ast.Module([maker], []))
        ast.increment_lineno(tree, src.start_line - 1)
        ns: dict = {}
        exec(compile(tree, src.file, "exec"), fn.__globals__, ns)
        new = ns["__tilec_make__"](tlc.scalar_tensor_attribute, loop_values, *cells)
        new.__defaults__ = fn.__defaults__
    except Exception:
        new = fn
    jitfn._tilec_interpreted = (src, new, cells)
    return new


#: launch options that change what kernels compute (the rest tune compiled code only)
SEMANTIC_OPTIONS = ("default_dot_input_precision",)


def _semantic_options(options, debug) -> dict:
    out = {k: options[k] for k in SEMANTIC_OPTIONS if options.get(k) is not None}
    out.setdefault("default_dot_input_precision", "ieee")  # as the compiled CPU path (and Triton's interpreter)
    out["debug"] = bool(debug)
    return out


def check(jitfn, values, options=None, debug=False, launching=True):
    """The compile-time part of a launch: specialise, check the kernel as the compiler would (once per
    specialisation: whatever compiled code refuses — syntax, types, shapes, names — is refused here too, with the
    same located message, before any program runs) and refuse read-only memory for the parameters it writes.
    A function without readable source (made by ``exec`` from a string) is run unchecked, as Python runs it.
    Only the IR is built (no optimisation, no code generation); dots of any size stay allowed, as the
    interpreter runs them; a warmup (``launching=False``) leaves memory alone, as a compiled one does. Returns the
    specialised source."""
    try:
        key, _, src = jitfn.specialize(values)
    except (TypeError, ValueError, OverflowError) as e:
        raise type(e)(f"{jitfn.__name__}: {e}") from None
    opts = _semantic_options(options or {}, debug)
    try:
        source = jitfn.source
    except CompilationError:  # a function made by exec from a string: nothing to check, it runs as it is
        return src
    done = source.__dict__.setdefault("checked_variants", {})  # new source text: checked afresh
    k = (key, tuple(sorted(opts.items())), jitfn.globals_key())  # a changed global is checked afresh
    written = done.get(k)
    if written is None:
        module = src.make_ir(dict(opts, min_dot_size=1))
        InlineAll().run(module)  # stores inside helpers write through the kernel's pointers too
        written = done[k] = written_params(next(f for f in module.funcs if f.attrs.get("kernel")))
    if launching:
        jitfn.check_writable(written, values)
    return src


def run(jitfn, grid, values, debug=False, options=None):
    """Run ``jitfn`` over ``grid`` (3 ints) on bound parameter ``values``; arrays are updated in place."""
    src = check(jitfn, values, options, debug)
    sem_options = _semantic_options(options or {}, debug)
    memory = Memory()
    tb = TirBuilder()
    def arg(name, v):
        if (src.attrs.get(name) or {}).get("equal_to_1"):
            return 1  # compiled as the constant 1, a Python int that adopts its partner's type: so here too
        return _arg_tensor(src.signature[name], v, memory, tb, name)

    args = []
    for p, v in zip(jitfn.params, values):
        sig = src.signature.get(p.name, "constexpr")
        if sig != "constexpr":
            args.append(arg(p.name, v))
            continue
        c = src.constexprs.get(p.name, v)
        if isinstance(c, Packed):  # a tuple or descriptor argument, rebuilt from its leaves as compiled code does
            c = c.rebuild({n: arg(n, x) for n, x in zip(aggregates.leaf_names(p.name, v), aggregates.leaves(v))})
        args.append(c)
    fn = interpreted_function(jitfn)
    # nested ranges, not itertools.product (which would first build a tuple of every index along each axis)
    for z, y, x in ((z, y, x) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])):
        sem = EvalSemantic(EvalBuilder(memory, (x, y, z), grid, bool(debug)), sem_options)
        with use_semantic(sem), np.errstate(all="ignore"):
            try:
                fn(*args)
            except BoundsError as e:  # debug builds: outside the pointer's own array
                located = _at_kernel_line(e)
                where = (located.file, located.line, located.col) if located is not None else (None, None, None)
                raise BoundsError(errors.located(*where, f"out-of-bounds {e.kind} in program {(x, y, z)}: "
                                                         f"{e.detail}")) from None
            except KernelAssertionError as e:  # reported as compiled debug builds report it
                located = _at_kernel_line(e)
                where = (located.file, located.line, located.col) if located is not None else (None, None, None)
                text = e.text
                if located is not None and text.startswith(f"{located.file}:{located.line}: "):
                    text = text[len(f"{located.file}:{located.line}: "):]
                at = f" at index {e.index}" if e.index else ""
                raise DeviceAssertionError(errors.located(
                    *where, f"device_assert failed in program {(x, y, z)}{at}: {text or 'assertion failed'}")) from None
            except OutOfBoundsError as e:  # a runtime fault, not a language error: say where and in which program
                located = _at_kernel_line(e)
                where = f"{located.file}:{located.line}:{located.col}: " if located is not None else ""
                raise EvaluationError(f"{where}{e} (program {(x, y, z)})") from None
            except _USER_ERRORS as e:
                located = None if isinstance(e, TilecError) else _at_kernel_line(e)
                if located is None:
                    raise
                raise located from e


_USER_ERRORS = (TypeError, ValueError, IndexError, AttributeError, AssertionError, NotImplementedError)
_TILEC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _at_kernel_line(e: Exception):
    """The language's errors point at the kernel line that caused them, as compiled kernels' errors do."""
    frames = [f for f in traceback.extract_tb(e.__traceback__)[1:]
              if not f.filename.startswith(_TILEC_DIR) and os.sep + "numpy" + os.sep not in f.filename]
    if not frames:
        return None
    f = frames[-1]
    col = (getattr(f, "colno", None) or 0) + 1
    return CompilationError(str(e) or type(e).__name__, f.filename, f.lineno, col,
                            linecache.getline(f.filename, f.lineno) or None)


def is_interpreting() -> bool:
    return isinstance(getattr(tlc._state, "semantic", None), EvalSemantic)


__all__ = ["run", "EvalBuilder", "EvalSemantic", "is_interpreting"]
