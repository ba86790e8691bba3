"""f64 math on CUDA, without a GPU: every f64 function of the IR and libdevice compiles for sm_80 and sm_90
(ptxas assembles it; no library call, no f32 detour, no multiply-add contraction of the double-double steps),
and the very LLVM IR the CUDA target builds (``CudaTarget.math``) runs on the host within a few ulps of
numpy's float64 over wide random ranges."""
import ctypes
import re

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

import tilec
import tilec.language as tl
from gpu_helpers import ARCHS, HAVE_PTXAS, compile_jit
from tilec.gpu.lowering import mathlib64
from tilec.gpu.lowering.types import F64
from tilec.language.extra import libdevice
from tilec.targets.cuda.target import CudaTarget

MATH = CudaTarget.math


@tilec.jit
def f64_everything(X, Y, Out, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(X + o, mask=m, other=0.5)
    y = tl.load(Y + o, mask=m, other=0.5)
    tl.store(Out + 0 * n + o, tl.exp(x), mask=m)
    tl.store(Out + 1 * n + o, tl.exp2(x), mask=m)
    tl.store(Out + 2 * n + o, tl.log(x), mask=m)
    tl.store(Out + 3 * n + o, tl.log2(x), mask=m)
    tl.store(Out + 4 * n + o, tl.sin(x), mask=m)
    tl.store(Out + 5 * n + o, tl.cos(x), mask=m)
    tl.store(Out + 6 * n + o, tl.sqrt(x), mask=m)
    tl.store(Out + 7 * n + o, tl.rsqrt(x), mask=m)
    tl.store(Out + 8 * n + o, tl.erf(x), mask=m)
    tl.store(Out + 9 * n + o, tl.floor(x), mask=m)
    tl.store(Out + 10 * n + o, tl.ceil(x), mask=m)
    tl.store(Out + 11 * n + o, tl.sigmoid(x), mask=m)
    tl.store(Out + 12 * n + o, libdevice.tan(x), mask=m)
    tl.store(Out + 13 * n + o, libdevice.tanh(x), mask=m)
    tl.store(Out + 14 * n + o, libdevice.expm1(x), mask=m)
    tl.store(Out + 15 * n + o, libdevice.log1p(x), mask=m)
    tl.store(Out + 16 * n + o, libdevice.pow(x, y), mask=m)
    tl.store(Out + 17 * n + o, libdevice.atan2(x, y), mask=m)
    tl.store(Out + 18 * n + o, libdevice.atan(x), mask=m)
    tl.store(Out + 19 * n + o, libdevice.asin(x), mask=m)
    tl.store(Out + 20 * n + o, libdevice.log10(x), mask=m)
    tl.store(Out + 21 * n + o, libdevice.exp10(x), mask=m)
    tl.store(Out + 22 * n + o, libdevice.sinh(x), mask=m)
    tl.store(Out + 23 * n + o, libdevice.cosh(x), mask=m)
    tl.store(Out + 24 * n + o, libdevice.trunc(x), mask=m)
    tl.store(Out + 25 * n + o, libdevice.round(x), mask=m)
    tl.store(Out + 26 * n + o, libdevice.sqrt_rn(x), mask=m)
    tl.store(Out + 27 * n + o, libdevice.fmod(x, y), mask=m)


@pytest.mark.skipif(not HAVE_PTXAS, reason="ptxas not on PATH")
@pytest.mark.parametrize("arch", ARCHS)
def test_every_f64_function_assembles_in_double_precision(arch):
    x = np.zeros(100)
    # without fp fusion the kernel's own arithmetic is .rn too, so every unfused add or multiply would be the
    # library's
    k = compile_jit(f64_everything, (x, x, np.zeros(2800), 100), arch=arch, options={"enable_fp_fusion": False},
                    BLOCK=128)
    assert "cubin" in k.asm
    ptx = k.asm["ptx"]
    assert "call" not in re.sub(r"//.*", "", ptx)  # everything inline: no libm, no libdevice
    assert ".f32" not in ptx  # no detour through single precision
    # the library's f64 adds and multiplies carry .rn, which ptxas never fuses: its double-double error terms stay
    # exact
    assert not re.search(r"\b(add|sub|mul)\.f64\b", ptx)
    assert re.search(r"\bfma\.rn\.f64\b", ptx)


_host = {}


def host_f64(name, nargs=1):
    """The CUDA target's f64 ``name`` compiled for the host CPU (a ctypes callable)."""
    if name not in _host:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        m = ir.Module("m")
        m.triple = llvm.get_process_triple()
        f = ir.Function(m, ir.FunctionType(F64, [F64] * nargs), "f")
        b = ir.IRBuilder(f.append_basic_block())
        body = {"pow": MATH.pow_, "atan2": MATH.atan2}.get(name) or (lambda b, x: MATH.unary(b, name, x))
        b.ret(body(b, *f.args))
        tm = llvm.Target.from_default_triple().create_target_machine()
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(m)), tm)
        engine.finalize_object()
        proto = ctypes.CFUNCTYPE(ctypes.c_double, *[ctypes.c_double] * nargs)
        fn = np.vectorize(proto(engine.get_function_address("f")), otypes=[np.float64])
        _host[name] = (engine, fn)
    fn = _host[name][1]

    def call(*args):
        with np.errstate(all="ignore"):  # the host raises the flags of overflowing and invalid results
            return fn(*args)
    return call


def _wide(r, n, lo, hi):
    """Random values spread evenly over the exponents between 2**lo and 2**hi, both signs."""
    return r.choice([-1.0, 1.0], n) * np.exp2(r.uniform(lo, hi, n))


def _ulps(got, want):
    return np.abs(got - want) / np.spacing(np.abs(want))


ERF = np.vectorize(__import__("math").erf, otypes=[np.float64])
CASES = {
    # name: (numpy reference, inputs from a generator, tolerance in ulps)
    "exp": (np.exp, lambda r: r.uniform(-740, 709, 4000), 2),
    "exp2": (np.exp2, lambda r: r.uniform(-1070, 1023, 4000), 2),
    "expm1": (np.expm1, lambda r: np.concatenate([r.uniform(-40, 709, 2000), _wide(r, 2000, -60, 0)]), 2),
    "log": (np.log, lambda r: np.abs(_wide(r, 4000, -1070, 1023)), 2),
    "log2": (np.log2, lambda r: np.abs(_wide(r, 4000, -1070, 1023)), 2),
    "log1p": (np.log1p, lambda r: np.concatenate([r.uniform(-0.999, 1e6, 2000), _wide(r, 2000, -60, 0)]), 3),
    "sin": (np.sin, lambda r: _wide(r, 4000, -30, 26), 3),
    "cos": (np.cos, lambda r: _wide(r, 4000, -30, 26), 3),
    "tan": (np.tan, lambda r: _wide(r, 4000, -30, 10), 4),
    "tanh": (np.tanh, lambda r: _wide(r, 4000, -40, 6), 3),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), lambda r: r.uniform(-700, 700, 4000), 3),
    "erf": (ERF, lambda r: np.concatenate([r.uniform(-7, 7, 3000), _wide(r, 1000, -40, 0)]), 4),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_f64_function_is_accurate_in_ulps(name):
    """numpy's float64 functions are themselves within about 1 ulp, so the tolerance is the library's plus 1."""
    ref, make, ulps = CASES[name]
    x = make(np.random.default_rng(abs(hash(name)) % 1000))
    with np.errstate(all="ignore"):
        want = ref(x)
    got = host_f64(name)(x)
    normal = np.abs(want) >= np.finfo(np.float64).tiny
    err = _ulps(got[normal], want[normal])
    assert err.max() <= ulps + 1, f"{name}: {err.max():.2f} ulp at x={x[normal][err.argmax()]!r}"
    assert (np.abs(got[~normal] - want[~normal]) <= 4e-324).all()


def test_f64_pow_and_atan2_are_accurate_in_ulps():
    r = np.random.default_rng(3)
    x, y = np.abs(_wide(r, 4000, -40, 40)), r.uniform(-20, 20, 4000)
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    ok = np.isfinite(want) & (want >= np.finfo(np.float64).tiny)
    assert _ulps(host_f64("pow", 2)(x, y)[ok], want[ok]).max() <= 3
    a, b = _wide(r, 4000, -30, 30), _wide(r, 4000, -30, 30)
    want = np.arctan2(a, b)
    assert _ulps(host_f64("atan2", 2)(a, b), want).max() <= 3


def test_f64_special_values():
    nan, inf = np.nan, np.inf
    for name, x, want in (("exp", inf, inf), ("exp", -inf, 0.0), ("exp", 710.0, inf), ("log", 0.0, -inf),
                          ("log", -1.0, nan), ("log", inf, inf), ("sin", inf, nan), ("cos", -inf, nan),
                          ("tanh", -inf, -1.0), ("erf", inf, 1.0), ("erf", -0.0, -0.0), ("log1p", -1.0, -inf),
                          ("sqrt", -0.0, -0.0), ("rsqrt", 0.0, inf), ("floor", -0.5, -1.0)):
        got = host_f64(name)(x)
        assert (np.isnan(got) and np.isnan(want)) or (got == want and np.signbit(got) == np.signbit(want)), \
            (name, x, got)
        assert np.isnan(host_f64(name)(nan)), name
    assert host_f64("pow", 2)(-2.0, 3.0) == -8.0 and np.isnan(host_f64("pow", 2)(-2.0, 0.5))


def test_the_generic_library_covers_every_f64_math_op():
    """The CUDA target writes only f32: f64 comes from the generic GPU layer for every float math op."""
    from tilec.ir.ops import UNARY_DOMAINS
    floats = {n for n, d in UNARY_DOMAINS.items() if d == "float"}
    from tilec.gpu.lowering.mathlib import EXACT_ANY
    assert floats <= set(mathlib64.UNARY) | set(EXACT_ANY) | {"rsqrt"}
