"""The AMD math library: every f32/f16/f64 function lowers for AMDGPU (no libcalls, which a code object cannot
link), and the polynomial implementations are accurate: the same LLVM IR,
compiled for the host CPU, is compared in ulps with numpy in float64 (f32) or mpmath at 40 digits (f64)."""
import ctypes

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

from tilec.elf import constants as C, read_elf
from tilec.gpu.lowering import mathlib64
from tilec.gpu.lowering.types import F16, F32, F64
from tilec.targets.hip import codegen, math as amd_math
from tilec.targets.hip.arch import parse_arch
from tilec.targets.hip.target import DATA_LAYOUT, TRIPLE

UNARY = sorted(amd_math.F32_TABLE)


def _module(triple="", layout=""):
    m = ir.Module("m")
    m.triple, m.data_layout = triple, layout
    return m


def _fn(m, name, ty, nargs, body):
    f = ir.Function(m, ir.FunctionType(ty, [ty] * nargs), name)
    b = ir.IRBuilder(f.append_basic_block())
    b.ret(body(b, *f.args))
    return f


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_every_function_lowers_for_amdgpu(arch):
    m = _module(TRIPLE, DATA_LAYOUT)
    for ty in (F32, F16):
        for name in UNARY:
            _fn(m, f"{name}_{ty}", ty, 1, lambda b, x, name=name: amd_math.unary(b, name, x))
        _fn(m, f"pow_{ty}", ty, 2, amd_math.pow_)
        _fn(m, f"atan2_{ty}", ty, 2, amd_math.atan2)
    for name in amd_math.EXACT_ANY:
        _fn(m, f"{name}_f64", F64, 1, lambda b, x, name=name: amd_math.unary(b, name, x))
    _fn(m, "rsqrt_f64", F64, 1, lambda b, x: amd_math.unary(b, "rsqrt", x))
    for name in mathlib64.UNARY:
        _fn(m, f"{name}_f64", F64, 1, lambda b, x, name=name: amd_math.unary(b, name, x))
    _fn(m, "atan2_f64", F64, 2, amd_math.atan2)
    _fn(m, "pow_f64", F64, 2, amd_math.pow_)
    obj = read_elf(codegen.llir_to_object(str(m), parse_arch(arch)))
    undefined = [s.name for s in obj.symbols()[1:] if s.shndx == C.SHN_UNDEF]
    assert undefined == []  # no libm calls: a code object could not link them
    defined = {s.name for s in obj.symbols() if s.type == C.STT_FUNC}
    assert {f"{n}_float" for n in UNARY} | {"pow_half", "atan2_half", "rsqrt_f64", "atan2_f64"} <= defined
    assert {f"{n}_f64" for n in mathlib64.UNARY} <= defined


_host = {}


def host_function(name, nargs, ty=F32):
    """The f32 (or f64) function ``name`` compiled for the host CPU, as a ctypes callable."""
    key = (name, nargs, str(ty))
    if key not in _host:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        m = _module(llvm.get_process_triple())
        body = {"pow": amd_math.pow_, "atan2": amd_math.atan2}.get(name) or \
            (lambda b, x: amd_math.unary(b, name, x))
        _fn(m, "f", ty, nargs, body)
        mod = llvm.parse_assembly(str(m))
        tm = llvm.Target.from_default_triple().create_target_machine()
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        ct = ctypes.c_float if ty == F32 else ctypes.c_double
        proto = ctypes.CFUNCTYPE(ct, *[ct] * nargs)
        _host[key] = (engine, proto(engine.get_function_address("f")))
    return _host[key][1]


def _ulps(got, want):
    got = np.float32(got)
    spacing = np.spacing(np.float32(abs(want)) if abs(want) > 1e-30 else np.float32(1e-30))
    return abs(float(got) - want) / float(spacing)


CASES = {
    # name: (numpy reference in float64, inputs, tolerance in ulps, absolute floor)
    "sin": (np.sin, np.linspace(-100, 100, 2001), 4, 1e-7),
    "cos": (np.cos, np.linspace(-100, 100, 2001), 4, 1e-7),
    "tan": (np.tan, np.linspace(-1.5, 1.5, 601), 8, 1e-7),
    "tanh": (np.tanh, np.linspace(-12, 12, 1201), 4, 1e-7),
    "erf": (np.vectorize(__import__("math").erf), np.linspace(-5, 5, 1001), 8, 2e-7),
    "expm1": (np.expm1, np.linspace(-5, 5, 1001), 4, 1e-7),
    "log1p": (np.log1p, np.linspace(-0.9, 10, 1001), 4, 1e-7),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), np.linspace(-20, 20, 801), 4, 1e-7),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_polynomial_accuracy(name):
    ref, xs, ulps, floor = CASES[name]
    f = host_function(name, 1)
    for x in xs.astype(np.float32):
        want = float(ref(np.float64(x)))
        got = f(float(x))
        assert _ulps(got, want) <= ulps or abs(got - want) <= floor, (name, x, got, want)


def test_atan2_and_pow():
    atan2, pw = host_function("atan2", 2), host_function("pow", 2)
    for y in np.linspace(-3, 3, 41, dtype=np.float32):
        for x in np.linspace(-3, 3, 41, dtype=np.float32):
            want = np.arctan2(np.float64(y), np.float64(x))
            assert abs(atan2(float(y), float(x)) - want) <= 4e-7 * max(1, abs(want)), (y, x)
    for x in np.linspace(0.1, 10, 37, dtype=np.float32):
        for y in np.linspace(-4, 4, 17, dtype=np.float32):
            want = np.float64(x) ** np.float64(y)
            assert abs(pw(float(x), float(y)) - want) <= 2e-6 * want, (x, y)
    assert pw(-2.0, 3.0) == -8.0 and pw(-2.0, 0.0) == 1.0 and np.isnan(pw(-2.0, 0.5))
    assert atan2(0.0, -1.0) == pytest.approx(np.pi) and atan2(-0.0, -1.0) == pytest.approx(-np.pi)


try:
    import mpmath
except ImportError:  # the f64 accuracy checks need it
    mpmath = None

F64_CASES = {
    # name: (mpmath reference, inputs, tolerance in ulps)
    "exp": ("exp", np.concatenate([np.linspace(-745, 709, 3001), np.linspace(-1, 1, 501)]), 2),
    "exp2": (lambda x: mpmath.power(2, x), np.linspace(-1074, 1023, 3001), 2),
    "expm1": ("expm1", np.concatenate([np.linspace(-40, 700, 1001), np.linspace(-0.6, 0.6, 601)]), 2),
    "log": ("log", np.concatenate([np.geomspace(1e-310, 1e308, 2001), np.linspace(0.5, 2, 601)]), 2),
    "log2": (lambda x: mpmath.log(x, 2), np.concatenate([np.geomspace(1e-310, 1e308, 2001), np.linspace(0.5, 2, 601)]), 2),
    "log1p": ("log1p", np.concatenate([np.linspace(-0.999, 10, 1001), np.geomspace(1e-20, 1e300, 501),
                                       -np.geomspace(1e-20, 0.5, 201)]), 3),
    "sin": ("sin", np.concatenate([np.linspace(-1e4, 1e4, 4001), np.linspace(-4, 4, 801),
                                   np.linspace(-1e8, 1e8, 1001)]), 3),
    "cos": ("cos", np.concatenate([np.linspace(-1e4, 1e4, 4001), np.linspace(-4, 4, 801),
                                   np.linspace(-1e8, 1e8, 1001)]), 3),
    "tan": ("tan", np.linspace(-1.5, 1.5, 1201), 4),
    "tanh": ("tanh", np.concatenate([np.linspace(-30, 30, 2401), np.geomspace(1e-300, 1, 301)]), 3),
    "sigmoid": (lambda x: 1 / (1 + mpmath.exp(-x)), np.linspace(-700, 700, 2801), 3),
    "erf": ("erf", np.concatenate([np.linspace(-7, 7, 2801), np.geomspace(1e-300, 1, 301)]), 4),
}


def _ulps64(got, want):
    """|got - want| in units of the last place of the double nearest ``want`` (an mpmath number)."""
    w = float(want)
    if w == 0.0:
        return 0.0 if got == 0.0 else float("inf")
    return float(abs(mpmath.mpf(got) - want) / mpmath.mpf(float(np.spacing(abs(w)))))


@pytest.mark.skipif(mpmath is None, reason="needs mpmath for the f64 reference")
@pytest.mark.parametrize("name", sorted(F64_CASES))
def test_f64_accuracy_in_ulps(name):
    mpmath.mp.dps = 40
    ref, xs, ulps = F64_CASES[name]
    ref = getattr(mpmath, ref) if isinstance(ref, str) else ref
    f = host_function(name, 1, F64)
    worst = 0.0
    for x in xs:
        want = ref(mpmath.mpf(float(x)))
        got = f(float(x))
        if abs(float(want)) < 2.2250738585072014e-308:  # subnormal results: absolute
            assert abs(got - float(want)) <= 2 * 5e-324, (name, x, got, float(want))
            continue
        u = _ulps64(got, want)
        worst = max(worst, u)
        assert u <= ulps, (name, float(x), got, float(want), u)
    assert worst > 0 or name in ("exp2",)  # the measure is not vacuous


def test_f64_special_values():
    for name, x, want in (("exp", 800.0, np.inf), ("exp", -800.0, 0.0), ("exp", np.inf, np.inf),
                          ("exp", -np.inf, 0.0), ("log", 0.0, -np.inf), ("log", -1.0, np.nan),
                          ("log", np.inf, np.inf), ("log2", 8.0, 3.0), ("exp2", 10.0, 1024.0),
                          ("sin", np.inf, np.nan), ("tanh", -np.inf, -1.0), ("log1p", -1.0, -np.inf),
                          ("expm1", -np.inf, -1.0), ("sigmoid", -1000.0, 0.0)):
        got = host_function(name, 1, F64)(x)
        assert (np.isnan(got) and np.isnan(want)) or got == want, (name, x, got)
        assert np.isnan(host_function(name, 1, F64)(np.nan)), name
    atan2 = host_function("atan2", 2, F64)
    for y, x in ((1.0, 2.0), (-3.0, -0.5), (0.0, -1.0), (-0.0, -1.0), (5.0, 0.0), (np.inf, np.inf),
                 (1e-300, 1e300), (2.0, -np.inf), (0.0, -0.0)):
        want = np.arctan2(y, x)
        got = atan2(y, x)
        assert got == want or abs(got - want) <= 2 * np.spacing(abs(want)), (y, x, got, want)
        assert np.signbit(got) == np.signbit(want)


@pytest.mark.skipif(mpmath is None, reason="needs mpmath for the f64 reference")
def test_f64_pow_in_ulps():
    """Large and tiny results too: the double-double logarithm keeps y log x exact enough near overflow."""
    mpmath.mp.dps = 40
    pw = host_function("pow", 2, F64)
    worst = 0.0
    xs = np.concatenate([np.geomspace(1e-300, 1e300, 61), np.linspace(0.5, 2.0, 31), [1 + 2 ** -40, 0.999999]])
    for x in xs:
        for y in np.concatenate([np.linspace(-40, 40, 41), [0.5, -0.5, 1 / 3, 1e10, -1e10, 700.25, 1e-5]]):
            want = mpmath.power(mpmath.mpf(float(x)), mpmath.mpf(float(y)))
            w = float(want)
            got = pw(float(x), float(y))
            if w == np.inf or w < 2.2250738585072014e-308:
                assert got == w or abs(got - w) <= 2 * 5e-324, (x, y, got, w)
                continue
            u = _ulps64(got, want)
            worst = max(worst, u)
            assert u <= 2, (x, y, got, w, u)
    assert worst > 0.1
    for x, y, want in ((-2.0, 3.0, -8.0), (-2.0, 0.0, 1.0), (-2.0, 0.5, np.nan), (0.0, -1.0, np.inf),
                       (-0.0, -3.0, -np.inf), (-0.0, 3.0, -0.0), (1.0, np.nan, 1.0), (np.nan, 0.0, 1.0),
                       (-1.0, np.inf, 1.0), (0.5, np.inf, 0.0), (2.0, -np.inf, 0.0), (-np.inf, 3.0, -np.inf),
                       (-np.inf, -2.0, 0.0), (np.inf, 0.5, np.inf), (np.nan, 2.0, np.nan), (-8.0, 1 / 3, np.nan)):
        got = pw(x, y)
        assert (np.isnan(got) and np.isnan(want)) or (got == want and np.signbit(got) == np.signbit(want)), \
            (x, y, got, want)
