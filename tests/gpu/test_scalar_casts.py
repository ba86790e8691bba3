"""The GPU lowering's float narrowing with ``rounding="rtz"`` (``fp_downcast_rounding``) and its fp8 conversions,
checked without a GPU: the scalar cast (and the fp8 memory form) is built into a small LLVM function, run on the
host by LLVM's JIT, and compared bit for bit with the reference evaluator's rounding and encoding on random values,
boundaries, overflow, subnormals, NaN and infinities, and every fp8 code."""
import ctypes

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

from tilec.codegen import driver
from tilec.gpu.lowering import scalar
from tilec.gpu.lowering.types import from_memory, llvm_type, memory_type, to_memory
from tilec.ir import types as T
from tilec.ir.numerics import decode, encode, round_to

_NUMPY = {ir.FloatType: np.float32, ir.DoubleType: np.float64, ir.HalfType: np.float16}

def _jit_cast(src, dst, rounding):
    """A host function ``(in_ptr, out_ptr, n)`` applying ``cast(src -> dst)`` in the GPU register model to n values
    (bf16 results stay in f32 registers; f16 results are stored as f16)."""
    return _jit_map(llvm_type(src), llvm_type(dst), lambda b, x: scalar.cast(b, src, dst, x, rounding))


def _jit_map(ls, ld, body):
    """A host function applying ``body(b, x)`` (LLVM type ``ls`` -> ``ld``) to an array."""
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
    b.store(body(b, x), b.gep(b.bitcast(fn.args[1], ld.as_pointer()), [i]))
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
        out = np.zeros(len(xs), _NUMPY.get(type(ld)) or np.dtype(f"uint{ld.width}"))
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


FP8 = [T.f8e4m3, T.f8e5m2]


def _fp8_inputs(e, dtype):
    """Every code's value, the midpoints between neighbours (ties go to even), values just off them, past the
    largest finite value, subnormal and random values of every magnitude, NaN and infinities."""
    table = decode(np.arange(256, dtype=np.uint8), e).astype(np.float64)
    pos = np.unique(np.abs(table[np.isfinite(table)]))
    mids = (pos[:-1] + pos[1:]) / 2
    r = np.random.default_rng(11)
    x = np.concatenate([pos, mids, mids * (1 + 2.0 ** -20), mids * (1 - 2.0 ** -20), [464.0, 480.0, 500.0, 57344.0,
                        61439.0, 61440.0, 65536.0, 1e30, 2.0 ** -10, 2.0 ** -17, 3 * 2.0 ** -18, 1e-40, np.inf, np.nan],
                        r.standard_normal(3001) * np.exp2(r.integers(-24, 20, 3001))])
    x = np.concatenate([x, -x])
    with np.errstate(over="ignore"):
        return x.astype(dtype)


@pytest.mark.parametrize("e", FP8, ids=str)
@pytest.mark.parametrize("src", ["f32", "f64", "f16", "bf16", "i32"])
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_fp8_casts_store_the_evaluators_codes(e, src, rounding):
    """cast to fp8 (a value in an f32 register) and then its memory form: the code the evaluator stores."""
    s = getattr(T, src)
    if rounding == "rtz" and src == "i32":
        pytest.skip("toward zero is a float down-cast's rounding only")
    if src == "i32":
        xs = np.random.default_rng(12).integers(-70000, 70000, 4001).astype(np.int32)
        xs[:4] = [2 ** 31 - 1, -2 ** 31, 0, 57344 + 4096]
    elif src == "bf16":
        xs = (_fp8_inputs(e, np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)  # bf16 values
    else:
        xs = _fp8_inputs(e, s.numpy)
    f = _jit_map(llvm_type(s), memory_type(e),
                 lambda b, x: to_memory(b, e, scalar.cast(b, s, e, x, rounding)))
    got = f(np.ascontiguousarray(xs))
    want = encode(round_to(xs.astype(np.float64) if src == "i32" else xs, e, rounding), e)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("e", FP8, ids=str)
@pytest.mark.parametrize("dst", ["f32", "f16", "f64", "bf16"])
def test_every_fp8_code_loads_as_its_value(e, dst):
    """Each of the 256 codes read from memory and cast to ``dst`` is exact; stored back unchanged, every code is
    kept (-0.0, e5m2's infinities and the NaNs included), as on the CPU; cast to f32 and back, numbers keep their
    codes, infinities saturate and NaNs become 0x7F, as in the evaluator."""
    codes = np.arange(256, dtype=np.uint8)
    d = getattr(T, dst)
    f = _jit_map(memory_type(e), llvm_type(d), lambda b, x: scalar.cast(b, e, d, from_memory(b, e, x)))
    got = f(codes).astype(np.float64)
    want = decode(codes, e).astype(np.float64)
    np.testing.assert_array_equal(got, want)  # NaNs compare equal here; signs of zeros checked below
    num = ~np.isnan(want)  # the sign of a NaN is not part of the contract
    np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]))
    back = _jit_map(memory_type(e), memory_type(e), lambda b, x: to_memory(b, e, from_memory(b, e, x)))(codes)
    np.testing.assert_array_equal(back, codes)
    f32 = T.f32
    rounded = _jit_map(memory_type(e), memory_type(e), lambda b, x: to_memory(
        b, e, scalar.cast(b, f32, e, scalar.cast(b, e, f32, from_memory(b, e, x)), "rtne")))(codes)
    np.testing.assert_array_equal(rounded, encode(round_to(decode(codes, e), e), e))
    big = 0x7B if e is T.f8e5m2 else 0x7E
    np.testing.assert_array_equal(rounded, np.where(np.isnan(want), 0x7F, np.where(
        np.isinf(want), np.where(want > 0, big, big | 0x80), codes)))
