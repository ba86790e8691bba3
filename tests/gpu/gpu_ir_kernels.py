"""tir kernels built with the IR builder (independent of the frontend), shared by the GPU tests and scripts.

Each ``make_*`` returns a module holding one kernel, specialised like the frontend would (``arg_divisibility``).
"""
from __future__ import annotations

from tilec.ir import Builder, Block, Region
from tilec.ir import ops as O
from tilec.ir.ops import FuncOp, ModuleOp
from tilec.ir.types import PointerType, TileType, f32, i1, i32


def _kernel(name, arg_types, arg_names, divisibility):
    f = FuncOp.create(name, arg_types, [], arg_names, kernel=True, arg_divisibility=tuple(divisibility))
    m = ModuleOp.create([f])
    b = Builder()
    b.set_insertion_point_to_end(f.body)
    return m, f, b


def _combine(b, op_cls, elem):
    blk = Block([elem, elem])
    with b.at_end(blk):
        r = b.op(op_cls, blk.args[0], blk.args[1])
        b.yield_(r)
    return Region([blk])


def reduce(b, x, axis, op_cls):
    t = x.type
    return b.create(O.ReduceOp, [x], None, {"axis": axis}, regions=[_combine(b, op_cls, t.element)]).result


def make_vector_add(block=1024, elem=f32, div=(16, 16, 16, 1)):
    """out[i] = x[i] + y[i] for i < n; one program per ``block`` elements."""
    P = PointerType(elem)
    m, f, b = _kernel("add_kernel", [P, P, P, i32], ["x_ptr", "y_ptr", "out_ptr", "n"], div)
    x_ptr, y_ptr, out_ptr, n = f.args
    pid = b.op(O.ProgramIdOp, axis=0)
    start = b.op(O.MulOp, pid, b.constant(block, i32))
    offs = b.op(O.AddOp, b.op(O.SplatOp, start, result_type=TileType((block,), i32)),
                b.op(O.ArangeOp, start=0, end=block), name="offs")
    mask = b.op(O.CmpOp, offs, b.op(O.SplatOp, n, result_type=TileType((block,), i32)), predicate="lt")
    PT = TileType((block,), P)
    xs = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, x_ptr, result_type=PT), offs), mask)
    ys = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, y_ptr, result_type=PT), offs), mask)
    s = b.op(O.AddOp, xs, ys)
    b.create(O.StoreOp, [b.op(O.AddPtrOp, b.op(O.SplatOp, out_ptr, result_type=PT), offs), s, mask], [])
    b.create(O.ReturnOp, [], [])
    return m


def make_softmax(block=1024, div=(16, 16, 1, 1, 1)):
    """One program per row: out[row, :n] = softmax(x[row, :n])."""
    P = PointerType(f32)
    m, f, b = _kernel("softmax_kernel", [P, P, i32, i32, i32], ["out_ptr", "in_ptr", "in_stride", "out_stride",
                                                                   "n_cols"], div)
    out_ptr, in_ptr, in_stride, out_stride, n = f.args
    T = TileType((block,), i32)
    PT = TileType((block,), P)
    row = b.op(O.ProgramIdOp, axis=0)
    offs = b.op(O.ArangeOp, start=0, end=block)
    mask = b.op(O.CmpOp, offs, b.op(O.SplatOp, n, result_type=T), predicate="lt")
    base = b.op(O.AddPtrOp, in_ptr, b.op(O.MulOp, row, in_stride))
    ninf = b.constant(float("-inf"), TileType((block,), f32))
    x = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, base, result_type=PT), offs), mask, ninf)
    mx = reduce(b, x, 0, O.MaxOp)
    z = b.op(O.SubOp, x, b.op(O.SplatOp, mx, result_type=x.type))
    num = b.op(O.UNARY_OPS["exp"], z)
    den = reduce(b, num, 0, O.AddOp)
    y = b.op(O.DivOp, num, b.op(O.SplatOp, den, result_type=x.type))
    obase = b.op(O.AddPtrOp, out_ptr, b.op(O.MulOp, row, out_stride))
    b.create(O.StoreOp, [b.op(O.AddPtrOp, b.op(O.SplatOp, obase, result_type=PT), offs), y, mask], [])
    b.create(O.ReturnOp, [], [])
    return m


def make_row_sum_2d(rows=64, cols=128, axis=1, div=(16, 16, 1, 1, 1)):
    """A [rows x cols] tile per program, reduced along ``axis``; out has the other dimension's length.
    x is row-major with ``stride`` elements per row; masks on both dimensions (``n_rows``, ``n_cols``)."""
    P = PointerType(f32)
    m, f, b = _kernel("sum2d_kernel", [P, P, i32, i32, i32], ["x_ptr", "out_ptr", "stride", "n_rows", "n_cols"], div)
    x_ptr, out_ptr, stride, n_rows, n_cols = f.args
    r = b.op(O.ArangeOp, start=0, end=rows)
    c = b.op(O.ArangeOp, start=0, end=cols)
    R = TileType((rows, 1), i32)
    C = TileType((1, cols), i32)
    F = TileType((rows, cols), i32)
    r2 = b.op(O.ExpandDimsOp, r, axis=1)
    c2 = b.op(O.ExpandDimsOp, c, axis=0)
    roff = b.op(O.MulOp, r2, b.op(O.SplatOp, stride, result_type=R))
    off = b.op(O.AddOp, b.op(O.BroadcastOp, roff, result_type=F), b.op(O.BroadcastOp, c2, result_type=F))
    rm = b.op(O.CmpOp, r2, b.op(O.SplatOp, n_rows, result_type=R), predicate="lt")
    cm = b.op(O.CmpOp, c2, b.op(O.SplatOp, n_cols, result_type=C), predicate="lt")
    B = TileType((rows, cols), i1)
    mask = b.op(O.AndOp, b.op(O.BroadcastOp, rm, result_type=B), b.op(O.BroadcastOp, cm, result_type=B))
    PT = TileType((rows, cols), P)
    zero = b.constant(0.0, TileType((rows, cols), f32))
    x = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, x_ptr, result_type=PT), off), mask, zero)
    s = reduce(b, x, axis, O.AddOp)
    n = rows if axis == 1 else cols
    idx = r if axis == 1 else c
    lim = n_rows if axis == 1 else n_cols
    omask = b.op(O.CmpOp, idx, b.op(O.SplatOp, lim, result_type=TileType((n,), i32)), predicate="lt")
    OP = TileType((n,), P)
    b.create(O.StoreOp, [b.op(O.AddPtrOp, b.op(O.SplatOp, out_ptr, result_type=OP), idx), s, omask], [])
    b.create(O.ReturnOp, [], [])
    return m


def make_histogram(block=512, div=(16, 16, 1)):
    """hist[x[i]] += 1 for i < n through atomic_rmw add (the frontend's tl.atomic_add equivalent)."""
    from tilec.ir.types import PointerType as _P
    P = _P(i32)
    m, f, b = _kernel("histogram_kernel", [P, P, i32], ["x_ptr", "hist_ptr", "n"], div)
    x_ptr, hist_ptr, n = f.args
    T = TileType((block,), i32)
    PT = TileType((block,), P)
    start = b.op(O.MulOp, b.op(O.ProgramIdOp, axis=0), b.constant(block, i32))
    offs = b.op(O.AddOp, b.op(O.SplatOp, start, result_type=T), b.op(O.ArangeOp, start=0, end=block))
    mask = b.op(O.CmpOp, offs, b.op(O.SplatOp, n, result_type=T), predicate="lt")
    v = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, x_ptr, result_type=PT), offs), mask, b.constant(0, T))
    ptrs = b.op(O.AddPtrOp, b.op(O.SplatOp, hist_ptr, result_type=PT), v)
    b.create(O.AtomicRMWOp, [ptrs, b.constant(1, T), mask], None, {"kind": "add"})
    b.create(O.ReturnOp, [], [])
    return m


INT_BINARY = ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "max", "min", "umulhi")
FLOAT_BINARY = ("add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2", "fdiv")
INT_UNARY = ("neg", "not", "abs", "popc", "clz")
FLOAT_UNARY_EXACT = ("neg", "abs", "floor", "ceil", "trunc", "round", "sqrt", "sqrt_rn")
FLOAT_UNARY_APPROX = ("exp", "exp2", "log", "log2", "rsqrt", "sin", "cos", "tan", "tanh", "erf", "log1p", "expm1",
                      "sigmoid")
PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


def sweep_rows(elem):
    """Names of the rows ``make_op_sweep(elem)`` writes, in order."""
    if elem.is_float:
        unary = FLOAT_UNARY_EXACT + (FLOAT_UNARY_APPROX if elem.bits <= 32 else ("rsqrt",))
        return list(FLOAT_BINARY if elem.bits <= 32 else FLOAT_BINARY[:7] + ("fdiv",)) + \
            [f"cmp_{p}" for p in PREDICATES] + list(unary) + ["select", "fma", "max_nan"]
    return list(INT_BINARY) + [f"cmp_{p}" for p in PREDICATES] + list(INT_UNARY) + ["select"]


def make_op_sweep(elem, block=128):
    """out[k*block + i] = row_k(x[i], y[i]) for every elementwise op applicable to ``elem`` (see sweep_rows)."""
    from tilec.ir.types import PointerType as _P
    P = _P(elem)
    m, f, b = _kernel(f"sweep_{elem}", [P, P, P], ["x_ptr", "y_ptr", "out_ptr"], (16, 16, 16))
    x_ptr, y_ptr, out_ptr = f.args
    T = TileType((block,), elem)
    PT = TileType((block,), P)
    offs = b.op(O.ArangeOp, start=0, end=block)
    x = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, x_ptr, result_type=PT), offs))
    y = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, y_ptr, result_type=PT), offs))
    outs = []
    for name in sweep_rows(elem):
        if name.startswith("cmp_"):
            c = b.op(O.CmpOp, x, y, predicate=name[4:])
            r = b.op(O.CastOp, c, result_type=T)
        elif name == "select":
            r = b.op(O.SelectOp, b.op(O.CmpOp, x, y, predicate="lt"), x, y)
        elif name == "fma":
            r = b.op(O.FmaOp, x, y, x)
        elif name == "max_nan":
            r = b.op(O.MaxOp, x, y, propagate_nan=True)
        elif name in O.BINARY_OPS:
            r = b.op(O.BINARY_OPS[name], x, y)
        else:
            r = b.op(O.UNARY_OPS[name], x)
        outs.append(r)
    for k, r in enumerate(outs):
        off = b.op(O.AddOp, offs, b.constant(k * block, TileType((block,), i32)))
        b.create(O.StoreOp, [b.op(O.AddPtrOp, b.op(O.SplatOp, out_ptr, result_type=PT), off), r], [])
    b.create(O.ReturnOp, [], [])
    return m


def make_cast_sweep(src, dsts, block=128):
    """out_k[i] = cast(x[i]) to dsts[k]."""
    from tilec.ir.types import PointerType as _P
    ptrs = [_P(src)] + [_P(d) for d in dsts]
    m, f, b = _kernel(f"casts_{src}", ptrs, ["x_ptr"] + [f"o{k}" for k in range(len(dsts))], (16,) * len(ptrs))
    offs = b.op(O.ArangeOp, start=0, end=block)
    x = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, f.args[0], result_type=TileType((block,), ptrs[0])), offs))
    for k, d in enumerate(dsts):
        r = b.op(O.CastOp, x, result_type=TileType((block,), d))
        PT = TileType((block,), ptrs[k + 1])
        b.create(O.StoreOp, [b.op(O.AddPtrOp, b.op(O.SplatOp, f.args[k + 1], result_type=PT), offs), r], [])
    b.create(O.ReturnOp, [], [])
    return m


def make_reduce_sweep(elem, shape, axis, combine="add"):
    """out = reduce(x, axis) for a row-major x of ``shape`` (a power of two per dimension); out is row-major
    over the remaining dimensions (one element when x is 1-d)."""
    from tilec.ir.types import PointerType as _P
    P = _P(elem)
    m, f, b = _kernel(f"reduce_{elem}_{axis}", [P, P], ["x_ptr", "out_ptr"], (16, 16))
    x_ptr, out_ptr = f.args
    rank = len(shape)
    offs = None
    for d in range(rank):
        r = b.op(O.ArangeOp, start=0, end=shape[d])
        stride = 1
        for s in shape[d + 1:]:
            stride *= s
        if stride != 1:
            r = b.op(O.MulOp, r, b.constant(stride, TileType((shape[d],), i32)))
        for e in range(rank):
            if e != d:
                r = b.op(O.ExpandDimsOp, r, axis=e)
        if rank > 1:
            r = b.op(O.BroadcastOp, r, result_type=TileType(shape, i32))
        offs = r if offs is None else b.op(O.AddOp, offs, r)
    x = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, x_ptr, result_type=TileType(shape, P)), offs))
    op_cls = {"add": O.AddOp, "max": O.MaxOp, "min": O.MinOp, "xor": O.XorOp}[combine]
    s = reduce(b, x, axis, op_cls)
    out_shape = tuple(n for d, n in enumerate(shape) if d != axis)
    if not out_shape:
        b.create(O.StoreOp, [out_ptr, s], [])
    else:
        ooffs = None
        for d in range(len(out_shape)):
            r = b.op(O.ArangeOp, start=0, end=out_shape[d])
            stride = 1
            for n in out_shape[d + 1:]:
                stride *= n
            if stride != 1:
                r = b.op(O.MulOp, r, b.constant(stride, TileType((out_shape[d],), i32)))
            for e in range(len(out_shape)):
                if e != d:
                    r = b.op(O.ExpandDimsOp, r, axis=e)
            if len(out_shape) > 1:
                r = b.op(O.BroadcastOp, r, result_type=TileType(out_shape, i32))
            ooffs = r if ooffs is None else b.op(O.AddOp, ooffs, r)
        OP = TileType(out_shape, P)
        b.create(O.StoreOp, [b.op(O.AddPtrOp, b.op(O.SplatOp, out_ptr, result_type=OP), ooffs), s], [])
    b.create(O.ReturnOp, [], [])
    return m


def make_atomic_sweep(elem, kind, block=256, slots=13):
    """old = atomic_<kind>(out + (i % slots), x[i]) for every i (many lanes per slot), also keeping the old
    values: ``olds[i]``. Returns the module."""
    from tilec.ir.types import PointerType as _P
    P = _P(elem)
    m, f, b = _kernel(f"atomic_{kind}_{elem}", [P, P, P], ["x_ptr", "out_ptr", "old_ptr"], (16, 16, 16))
    x_ptr, out_ptr, old_ptr = f.args
    T = TileType((block,), i32)
    PT = TileType((block,), P)
    offs = b.op(O.ArangeOp, start=0, end=block)
    x = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, x_ptr, result_type=PT), offs))
    slot = b.op(O.RemOp, offs, b.constant(slots, T))
    mask = b.op(O.CmpOp, offs, b.constant(block - 3, T), predicate="lt")
    old = b.create(O.AtomicRMWOp, [b.op(O.AddPtrOp, b.op(O.SplatOp, out_ptr, result_type=PT), slot), x, mask], None,
                   {"kind": kind}).result
    b.create(O.StoreOp, [b.op(O.AddPtrOp, b.op(O.SplatOp, old_ptr, result_type=PT), offs), old, mask], [])
    b.create(O.ReturnOp, [], [])
    return m


def make_cas(block=64, elem=i32):
    """old[i] = atomic_cas(out + i, cmp[i], new[i]) for every i."""
    from tilec.ir.types import PointerType as _P
    P = _P(elem)
    m, f, b = _kernel("cas_kernel", [P, P, P, P], ["out_ptr", "cmp_ptr", "new_ptr", "old_ptr"], (16,) * 4)
    PT = TileType((block,), P)
    offs = b.op(O.ArangeOp, start=0, end=block)
    ptr = lambda a: b.op(O.AddPtrOp, b.op(O.SplatOp, a, result_type=PT), offs)  # noqa: E731
    cmp = b.op(O.LoadOp, ptr(f.args[1]))
    new = b.op(O.LoadOp, ptr(f.args[2]))
    old = b.create(O.AtomicCASOp, [ptr(f.args[0]), cmp, new], None, {}).result
    b.create(O.StoreOp, [ptr(f.args[3]), old], [])
    b.create(O.ReturnOp, [], [])
    return m


def make_scan(elem, shape, axis, combine="add", reverse=False):
    """out = inclusive scan of a row-major x of ``shape`` along ``axis`` (same shape)."""
    from tilec.ir.types import PointerType as _P
    P = _P(elem)
    m, f, b = _kernel(f"scan_{elem}_{axis}", [P, P], ["x_ptr", "out_ptr"], (16, 16))
    x_ptr, out_ptr = f.args
    rank = len(shape)
    offs = None
    for d in range(rank):
        r = b.op(O.ArangeOp, start=0, end=shape[d])
        stride = 1
        for s in shape[d + 1:]:
            stride *= s
        if stride != 1:
            r = b.op(O.MulOp, r, b.constant(stride, TileType((shape[d],), i32)))
        for e in range(rank):
            if e != d:
                r = b.op(O.ExpandDimsOp, r, axis=e)
        if rank > 1:
            r = b.op(O.BroadcastOp, r, result_type=TileType(shape, i32))
        offs = r if offs is None else b.op(O.AddOp, offs, r)
    PT = TileType(shape, P)
    x = b.op(O.LoadOp, b.op(O.AddPtrOp, b.op(O.SplatOp, x_ptr, result_type=PT), offs))
    if combine == "first":  # associative, not commutative: the result shows the combination order
        blk = Block([elem, elem])
        with b.at_end(blk):
            b.yield_(blk.args[0])
        region = Region([blk])
    else:
        region = _combine(b, {"add": O.AddOp, "max": O.MaxOp}[combine], elem)
    s = b.create(O.ScanOp, [x], None, {"axis": axis, "reverse": reverse}, regions=[region]).result
    b.create(O.StoreOp, [b.op(O.AddPtrOp, b.op(O.SplatOp, out_ptr, result_type=PT), offs), s], [])
    b.create(O.ReturnOp, [], [])
    return m


def make_ticket(block=128):
    """Each program takes a ticket t = atomic_add(counter, 1) (a scalar atomic whose result every thread uses)
    and writes t to out[pid * block : (pid + 1) * block]."""
    from tilec.ir.types import PointerType as _P
    P = _P(i32)
    m, f, b = _kernel("ticket_kernel", [P, P], ["counter_ptr", "out_ptr"], (16, 16))
    counter, out = f.args
    t = b.create(O.AtomicRMWOp, [counter, b.constant(1, i32)], None, {"kind": "add"}).result
    pid = b.op(O.ProgramIdOp, axis=0)
    T = TileType((block,), i32)
    offs = b.op(O.AddOp, b.op(O.SplatOp, b.op(O.MulOp, pid, b.constant(block, i32)), result_type=T),
                b.op(O.ArangeOp, start=0, end=block))
    b.create(O.StoreOp, [b.op(O.AddPtrOp, b.op(O.SplatOp, out, result_type=TileType((block,), P)), offs),
                         b.op(O.SplatOp, t, result_type=T)], [])
    b.create(O.ReturnOp, [], [])
    return m
