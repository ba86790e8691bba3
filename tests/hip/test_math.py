"""The AMD math library: every f32/f16 function lowers for AMDGPU (no libcalls, which a code object cannot
link), f64 transcendentals are clear errors (LLVM aborts on some of them), and the polynomial implementations
are accurate: the same LLVM IR, compiled for the host CPU, is compared with numpy in float64."""
import ctypes

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

from tilec.elf import constants as C, read_elf
from tilec.errors import BackendError
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
    obj = read_elf(codegen.llir_to_object(str(m), parse_arch(arch)))
    undefined = [s.name for s in obj.symbols()[1:] if s.shndx == C.SHN_UNDEF]
    assert undefined == []  # no libm calls: a code object could not link them
    defined = {s.name for s in obj.symbols() if s.type == C.STT_FUNC}
    assert {f"{n}_float" for n in UNARY} | {"pow_half", "atan2_half", "rsqrt_f64"} <= defined


@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tanh", "erf", "pow", "atan2", "expm1", "log1p"])
def test_f64_transcendentals_raise(name):
    m = _module(TRIPLE, DATA_LAYOUT)
    with pytest.raises(BackendError, match=f"f64 {name} is not supported by the HIP backend"):
        if name == "pow":
            _fn(m, "f", F64, 2, amd_math.pow_)
        elif name == "atan2":
            _fn(m, "f", F64, 2, amd_math.atan2)
        else:
            _fn(m, "f", F64, 1, lambda b, x: amd_math.unary(b, name, x))


_host = {}


def host_function(name, nargs):
    """The f32 function ``name`` compiled for the host CPU, as a ctypes callable."""
    key = (name, nargs)
    if key not in _host:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        m = _module(llvm.get_process_triple())
        body = {"pow": amd_math.pow_, "atan2": amd_math.atan2}.get(name) or \
            (lambda b, x: amd_math.unary(b, name, x))
        _fn(m, "f", F32, nargs, body)
        mod = llvm.parse_assembly(str(m))
        tm = llvm.Target.from_default_triple().create_target_machine()
        engine = llvm.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        proto = ctypes.CFUNCTYPE(ctypes.c_float, *[ctypes.c_float] * nargs)
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
