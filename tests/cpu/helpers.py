"""Build tir kernels with the Builder and run them through the CPU backend's stages directly."""
from __future__ import annotations

from tilec.ir import Builder, FuncOp, ModuleOp, ops
from tilec.ir import types as T
from tilec.targets.cpu.backend import CPUBackend


def P(t):
    return T.PointerType(t)


def kernel(name, params, body):
    """``body(b, *args)`` fills the kernel; returns the module."""
    f = FuncOp.create(name, [t for _, t in params], arg_names=[n for n, _ in params], kernel=True,
                      arg_divisibility=tuple(1 for _ in params))
    m = ModuleOp.create([f])
    b = Builder()
    b.set_insertion_point_to_end(f.body)
    body(b, *f.args)
    b.create(ops.ReturnOp, [], [])
    return m


def compile_cpu(module):
    be = CPUBackend(None)
    opts = be.parse_options({})
    md = {}
    asm, art = {}, module
    for name, fn in be.stages(opts):
        art = fn(art, md)
        asm[name] = art.stage_text() if hasattr(art, "stage_text") else art
    return be.load(asm, md), asm, md


# small op helpers
def arange(b, n, start=0):
    return b.op(ops.ArangeOp, start=start, end=start + n)


def splat(b, v, shape):
    return b.op(ops.SplatOp, v, result_type=T.TileType(shape, v.type))


def binop(b, name, x, y, **attrs):
    return b.op(ops.BINARY_OPS[name], x, y, **attrs)


def unop(b, name, x):
    return b.op(ops.UNARY_OPS[name], x)


def addptr(b, p, off):
    return b.op(ops.AddPtrOp, p, off)


def cmp(b, pred, x, y):
    return b.op(ops.CmpOp, x, y, predicate=pred)


def load(b, p, mask=None, other=None):
    operands = [p] + ([mask] if mask is not None else []) + ([other] if other is not None else [])
    return b.create(ops.LoadOp, operands).result


def store(b, p, v, mask=None):
    b.create(ops.StoreOp, [p, v] + ([mask] if mask is not None else []), [])


def const(b, v, t):
    return b.constant(v, t)


def pid(b, axis=0):
    return b.op(ops.ProgramIdOp, axis=axis)


def cast(b, v, t, rounding="rtne"):
    rt = v.type.with_element(t) if v.type.is_tile else t
    return b.op(ops.CastOp, v, result_type=rt, rounding=rounding)


def expand(b, v, axis):
    return b.op(ops.ExpandDimsOp, v, axis=axis)


def broadcast(b, v, shape):
    return b.op(ops.BroadcastOp, v, result_type=T.TileType(shape, v.type.element))


def reduce(b, x, axis, combine):
    """Reduce with a combine region built by ``combine(b, acc, x) -> value``."""
    from tilec.ir.core import Block, Region
    e = x.type.element
    blk = Block([e, e])
    op = b.create(ops.ReduceOp, [x], None, {"axis": axis}, regions=[Region([blk])])
    with b.at_end(blk):
        b.yield_(combine(b, blk.args[0], blk.args[1]))
    return op.results[0]


def scan(b, x, axis, combine, reverse=False):
    from tilec.ir.core import Block, Region
    e = x.type.element
    blk = Block([e, e])
    op = b.create(ops.ScanOp, [x], None, {"axis": axis, "reverse": reverse}, regions=[Region([blk])])
    with b.at_end(blk):
        b.yield_(combine(b, blk.args[0], blk.args[1]))
    return op.results[0]


def ptr_tile_2d(b, base, rows, cols, row_stride, row0=None, col0=None):
    """Pointers base + (row0 + i) * row_stride + (col0 + j) for an R x C tile, plus the row/col index tiles."""
    r = arange(b, rows)
    c = arange(b, cols)
    if row0 is not None:
        r = binop(b, "add", r, splat(b, row0, (rows,)))
    if col0 is not None:
        c = binop(b, "add", c, splat(b, col0, (cols,)))
    r2 = broadcast(b, expand(b, r, 1), (rows, cols))
    c2 = broadcast(b, expand(b, c, 0), (rows, cols))
    off = binop(b, "add", binop(b, "mul", r2, splat(b, row_stride, (rows, cols))), c2)
    return addptr(b, splat(b, base, (rows, cols)), off), r2, c2
