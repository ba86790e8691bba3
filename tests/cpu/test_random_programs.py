"""Property: random well-typed tir programs (tests/strategies.py) compute the same on the CPU backend as in the
reference evaluator. ``@main`` is wrapped in a kernel that loads tile parameters from buffers, calls it and
stores every result; integers and buffer contents must match exactly, floats up to reassociation of sums."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tilec.ir import Builder, FuncOp, ops
from tilec.ir.types import PointerType, TileType, i1, i8

from .helpers import compile_cpu

try:
    from tests.strategies import arguments, programs, run_main
except ImportError:  # run from inside tests/
    from strategies import arguments, programs, run_main


MAX_FUNCS, MAX_OPS = 2, 8


def _mem(t):
    """Storage type of elements of ``t`` in a kernel buffer (i1 as i8)."""
    return i8 if t.element == i1 else t.element


def _flat_ptrs(b, p, n):
    r = b.op(ops.ArangeOp, start=0, end=n)
    s = b.op(ops.SplatOp, p, result_type=TileType((n,), p.type))
    return b.op(ops.AddPtrOp, s, r)


def _to_mem(b, v, t):
    return b.op(ops.CastOp, v, result_type=t.with_element(i8)) if t.element == i1 else v


def wrap(module):
    """Add ``@kernel`` calling ``@main``: tile params come from buffers, results go to buffers."""
    main = module.lookup("main")
    ins, outs = main.function_type.inputs, main.function_type.results
    params = []
    for t in ins:
        params.append(PointerType(_mem(t)) if t.is_tile else (PointerType(_mem(t)) if t == i1 else t))
    params += [PointerType(_mem(t)) for t in outs]
    k = FuncOp.create("kernel", params, kernel=True, arg_divisibility=tuple(1 for _ in params))
    module.body.append(k)
    b = Builder()
    b.set_insertion_point_to_end(k.body)
    args = []
    for t, a in zip(ins, k.args):
        if t.is_tile:
            n = t.numel
            v = b.create(ops.LoadOp, [_flat_ptrs(b, a, n)]).result
            if t.element == i1:
                v = b.op(ops.CastOp, v, result_type=TileType((n,), i1))
            if len(t.shape) > 1:
                v = b.op(ops.ReshapeOp, v, result_type=t)
            args.append(v)
        elif t == i1:
            v = b.create(ops.LoadOp, [a]).result
            args.append(b.op(ops.CastOp, v, result_type=i1))
        else:
            args.append(a)
    call = b.create(ops.CallOp, args, list(outs), {"callee": "main"})
    for t, r, p in zip(outs, call.results, k.args[len(ins):]):
        if t.is_tile:
            n = t.numel
            v = b.op(ops.ReshapeOp, r, result_type=TileType((n,), t.element)) if len(t.shape) > 1 else r
            b.create(ops.StoreOp, [_flat_ptrs(b, p, n), _to_mem(b, v, TileType((n,), t.element))], [])
        else:
            b.create(ops.StoreOp, [p, _to_mem(b, r, t)], [])
    b.create(ops.ReturnOp, [], [])
    return module


def _storage(v, t):
    a = np.asarray(v)
    return a.astype(np.int8) if t.element == i1 else a.astype(t.element.numpy)


def _close(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "f":
        return np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=1e-5, atol=1e-6, equal_nan=True)
    return np.array_equal(x, y)


@settings(max_examples=40)
@given(st.data())
def test_random_programs_match_evaluator(data):
    module = data.draw(programs(max_funcs=MAX_FUNCS, max_ops=MAX_OPS))
    main = module.lookup("main")
    args = data.draw(arguments(main))
    want = run_main(module, args)
    ins, outs = main.function_type.inputs, main.function_type.results
    run, _, _ = compile_cpu(wrap(module))
    kargs, bufs = [], []
    for t, a in zip(ins, args):
        if t.is_tile or isinstance(t, PointerType) or t == i1:
            arr = np.ascontiguousarray(_storage(a, t) if not isinstance(t, PointerType) else np.array(a)).reshape(-1)
            kargs.append(arr)
            if isinstance(t, PointerType):
                bufs.append(arr)
        else:
            kargs.append(a)
    res = [np.zeros(max(1, t.numel if t.is_tile else 1), _storage(0, t).dtype) for t in outs]
    run((1, 1, 1), kargs + res)
    got = [r.reshape(t.shape) if t.is_tile else r[0] for r, t in zip(res, outs)] + bufs
    want = [_storage(w, t) for w, t in zip(want, outs)] + want[len(outs):]
    for g, w in zip(got, want):
        assert _close(g, w), (g, w)
