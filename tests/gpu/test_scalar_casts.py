"""The GPU lowering's float narrowing with ``rounding="rtz"`` (``fp_downcast_rounding``), checked without a GPU:
the scalar cast is built into a small LLVM function, run on the host by LLVM's JIT, and compared bit for bit with
the reference evaluator's rounding on random values, boundaries, overflow, subnormals, NaN and infinities."""
import ctypes

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

from tilec.codegen import driver
from tilec.gpu.lowering import scalar
from tilec.gpu.lowering.types import llvm_type
from tilec.ir import types as T
from tilec.ir.numerics import round_to

def _jit_cast(src, dst, rounding):
    """A host function ``(in_ptr, out_ptr, n)`` applying ``cast(src -> dst)`` in the GPU register model to n values
    (bf16 results stay in f32 registers; f16 results are stored as f16)."""
    ls, ld = llvm_type(src), llvm_type(dst)
    mod = ir.Module("casts")
    ptr = ir.PointerType(ir.IntType(8))
    i64 = ir.IntType(64)
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ptr, ptr, i64]), "cast_all")
    entry, loop, done = fn.append_basic_block(), fn.append_basic_block(), fn.append_basic_block()
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    x = b.load(b.gep(b.bitcast(fn.args[0], ls.as_pointer()), [i]))
    b.store(scalar.cast(b, src, dst, x, rounding), b.gep(b.bitcast(fn.args[1], ld.as_pointer()), [i]))
    nxt = b.add(i, ir.Constant(i64, 1))
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, fn.args[2]), loop, done)
    b.position_at_end(done)
    b.ret_void()
    driver.init()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)), driver.new_host_target_machine())
    engine.finalize_object()
    f = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(engine.get_function_address("cast_all"))

    def run(xs):
        out = np.zeros(len(xs), {ir.FloatType: np.float32, ir.DoubleType: np.float64, ir.HalfType: np.float16}[type(ld)])
        f(xs.ctypes.data, out.ctypes.data, len(xs))
        return out
    run.engine = engine  # keep the code alive
    return run


def _values(dtype):
    r = np.random.default_rng(7)
    x = r.standard_normal(2000) * np.exp2(r.integers(-30, 30, 2000))
    specials = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.0, 65520.0, 70000.0, -70000.0, 3.4e38, 1e-6, 6e-8, 5.96e-8,
                1e-40, np.inf, -np.inf, np.nan, 1 + 2.0 ** -9, 1 + 2.0 ** -12, -(1 + 2.0 ** -12)]
    return np.concatenate([x, specials]).astype(dtype)


# f64 -> f16 is one instruction on the GPU but a runtime-library call on the host, which this JIT does not link
@pytest.mark.parametrize("src,dst", [("f32", "f16"), ("f64", "f32"), ("f32", "bf16"), ("f64", "bf16")])
@pytest.mark.parametrize("rounding", ["rtz", "rtne"])
def test_narrowing_rounds_as_the_evaluator(src, dst, rounding):
    s, d = getattr(T, src), getattr(T, dst)
    f = _jit_cast(s, d, rounding)
    xs = _values(s.numpy)
    got = f(np.ascontiguousarray(xs)).astype(np.float64)
    want = np.asarray(round_to(xs, d, rounding), np.float64)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    np.testing.assert_array_equal(got[~nan], want[~nan])
