"""f32 math on CUDA over the whole f32 range: one kernel applies each function (exp, exp2, log, log2, log1p, expm1,
sin, cos, tan, tanh, erf, sigmoid, pow, atan2, sqrt, rsqrt) to its own full-range inputs (``f32_math_cases.py``:
subnormals, huge sin/cos arguments, exp near overflow and into subnormal results, NaN, infinities, signed zeros,
the arguments of the fuzzer's CUDA seeds) and the GPU-marked test compares every result with numpy in float64
within the stated ulp bounds (exp2's results below 2**-126 may be zeros: it is the one ``ex2.approx.ftz``
instruction). Without a GPU the kernel is compiled for sm_80 and sm_90 and assembled with ptxas."""
import re

import numpy as np
import pytest

import f32_math_cases as C
import tilec
import tilec.language as tl
from gpu_helpers import ARCHS, HAVE_PTXAS, compile_jit, to_device
from tilec.language.extra import libdevice
from tilec.targets.cuda import nvvm_math

FUNCS = ["exp", "exp2", "log", "log2", "log1p", "expm1", "sin", "cos", "tan", "tanh", "erf", "sigmoid", "pow",
         "atan2", "sqrt", "rsqrt"]
BLOCK = 256


@tilec.jit
def f32_range(X, Y, Out, n, BLOCK: tl.constexpr):
    """Row i of Out = function i of row i of X (and of Y for pow and atan2)."""
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(Out + 0 * n + o, tl.exp(tl.load(X + 0 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 1 * n + o, tl.exp2(tl.load(X + 1 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 2 * n + o, tl.log(tl.load(X + 2 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 3 * n + o, tl.log2(tl.load(X + 3 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 4 * n + o, libdevice.log1p(tl.load(X + 4 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 5 * n + o, libdevice.expm1(tl.load(X + 5 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 6 * n + o, tl.sin(tl.load(X + 6 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 7 * n + o, tl.cos(tl.load(X + 7 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 8 * n + o, libdevice.tan(tl.load(X + 8 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 9 * n + o, libdevice.tanh(tl.load(X + 9 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 10 * n + o, tl.erf(tl.load(X + 10 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 11 * n + o, tl.sigmoid(tl.load(X + 11 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 12 * n + o, libdevice.pow(tl.load(X + 12 * n + o, mask=m, other=1.0),
                                             tl.load(Y + 12 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 13 * n + o, libdevice.atan2(tl.load(X + 13 * n + o, mask=m, other=1.0),
                                               tl.load(Y + 13 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 14 * n + o, tl.sqrt(tl.load(X + 14 * n + o, mask=m, other=1.0)), mask=m)
    tl.store(Out + 15 * n + o, tl.rsqrt(tl.load(X + 15 * n + o, mask=m, other=1.0)), mask=m)


def _arrays():
    """(X, Y, lengths): each function's inputs in its row, padded with 1.0 to the longest."""
    args = {name: C.inputs(name) for name in FUNCS}
    n = max(len(a[0]) for a in args.values())
    X = np.ones((len(FUNCS), n), np.float32)
    Y = np.ones((len(FUNCS), n), np.float32)
    for i, name in enumerate(FUNCS):
        X[i, :len(args[name][0])] = args[name][0]
        if name in C.BINARY:
            Y[i, :len(args[name][1])] = args[name][1]
    return X, Y, args, n


@pytest.mark.parametrize("arch", ARCHS)
def test_compiles_and_assembles(arch):
    x = np.zeros(len(FUNCS) * 64, np.float32)
    k = compile_jit(f32_range, (x, x, x, 64), arch, BLOCK=BLOCK)
    ptx = k.asm["ptx"]
    if HAVE_PTXAS:
        assert k.asm["cubin"][:4] == b"\x7fELF"
    assert "call" not in re.sub(r"//.*", "", ptx)  # no library
    # flush-to-zero only in the 2**x instruction: the library's arithmetic keeps subnormals
    assert set(re.findall(r"\b[a-z0-9]+(?:\.[a-z0-9]+)*\.ftz\.[a-z0-9.]+", ptx)) == {"ex2.approx.ftz.f32"}
    assert re.search(r"\.const .*tilec_two_over_pi\[180\]", ptx)  # the huge-argument sin/cos reduction's table


@pytest.mark.parametrize("arch", ARCHS)
def test_exp2_stays_one_instruction(arch):
    """tl.exp2 is the single ``ex2.approx.ftz.f32`` (attention's softmax); tl.exp's fast path is a few more."""
    @tilec.jit
    def exp2_only(X, Out, n, BLOCK: tl.constexpr):
        o = tl.arange(0, BLOCK)
        tl.store(Out + o, tl.exp2(tl.load(X + o, mask=o < n, other=0.0)), mask=o < n)
    x = np.zeros(128, np.float32)
    ptx = compile_jit(exp2_only, (x, x, 128), arch, BLOCK=128).asm["ptx"]
    ops = [ln.split()[0] for ln in ptx.splitlines() if ln.startswith("\t") and ln.split()]
    assert [op for op in ops if op.endswith(".f32")] == ["ex2.approx.ftz.f32"], ops


@pytest.mark.gpu
def test_f32_math_over_the_whole_range_on_the_device():
    from gpu_helpers import device_arch
    from tilec.targets.cuda import array as cuda_array
    X, Y, args, n = _arrays()
    out = np.zeros_like(X)
    k = compile_jit(f32_range, (X.ravel(), Y.ravel(), out.ravel(), n), device_arch(), BLOCK=BLOCK)
    dev = to_device([X.ravel(), Y.ravel(), out.ravel()])
    k.run(((n + BLOCK - 1) // BLOCK, 1, 1), dev + [n])
    cuda_array.synchronize()
    got = dev[2].numpy().reshape(X.shape)
    failures, report = [], []
    for i, name in enumerate(FUNCS):
        a = args[name]
        g = got[i, :len(a[0])]
        report.append(f"{name} {C.worst_ulps(name, a, g):.2f}")
        msg = C.check(name, a, g, exp2_flushes=nvvm_math.PRIMITIVES.exp2_flushes_subnormals)
        if msg:
            failures.append(msg)
    print("worst ulps:", ", ".join(report))
    assert not failures, "\n".join(failures)
