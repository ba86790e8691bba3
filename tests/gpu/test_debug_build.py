"""CUDA debug builds: bounds checks and device_assert record into a host-visible buffer instead of trapping (a trap
leaves the CUDA context unusable). Compiled and assembled here with ptxas; the launches need a GPU (``-m gpu``)."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import BoundsError, DeviceAssertionError
from gpu_helpers import ARCHS, HAVE_PTXAS, compile_jit

R = np.random.default_rng(5)


@tilec.jit
def checked(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x < 100.0, "x must stay below 100")
    tl.atomic_add(out_ptr + offs, x, mask=offs < n)
    tl.atomic_cas(out_ptr.to(tl.pointer_type(tl.int32)) + offs, 0, 1)
    tl.store(out_ptr + offs, tl.sum(x) + x)


@pytest.mark.parametrize("arch", ARCHS)
def test_debug_ptx_records_instead_of_trapping(arch):
    x = np.zeros(37, np.float32)
    plain = compile_jit(checked, (x, x, 37), arch, B=128)
    debug = compile_jit(checked, (x, x, 37), arch, {"debug": True}, B=128)
    ptx = debug.asm["ptx"]
    assert "trap" not in ptx
    assert "atom.global.acq_rel.gpu.cas.b64" in ptx  # claiming the record (read after the kernel ends)
    assert debug.metadata["param_kinds"] == ["ptr", "ptr", "i32", "ptr", "i64", "i64", "i64", "i64"]
    assert plain.metadata["param_kinds"] == ["ptr", "ptr", "i32"] and "debug_checks" not in plain.metadata
    assert [s["kind"] for s in debug.metadata["debug_checks"]["sites"]] == ["load", "assert", "atomic", "atomic_cas",
                                                                           "store"]
    if HAVE_PTXAS:
        assert debug.asm["cubin"][:4] == b"\x7fELF"


@tilec.jit(debug=True)
def overrun(x_ptr, out_ptr, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x > -100.0, "x must stay above -100")
    tl.store(out_ptr + offs, x + 1)


@pytest.mark.gpu
def test_bounds_error_then_the_context_still_works():
    from tilec.targets.cuda import array as cuda
    n = int(R.integers(100, 300))
    x = cuda.from_numpy(R.standard_normal(n).astype(np.float32))
    out = cuda.from_numpy(np.zeros(n, np.float32))
    with pytest.raises(BoundsError, match=rf"offset {n} of 'x_ptr', an array of {n} elements"):
        overrun[((n + 127) // 128,)](x, out, B=128)
    m = n // 128 * 128 or 128
    x2 = R.standard_normal(m).astype(np.float32)
    out2 = cuda.from_numpy(np.zeros(m, np.float32))
    overrun[(m // 128,)](cuda.from_numpy(x2), out2, B=128)
    np.testing.assert_array_equal(out2.numpy(), x2 + 1)


@pytest.mark.gpu
def test_device_assert_then_the_context_still_works():
    from tilec.targets.cuda import array as cuda
    x = R.standard_normal(256).astype(np.float32)
    x[200] = -500.0
    out = cuda.from_numpy(np.zeros(256, np.float32))
    with pytest.raises(DeviceAssertionError, match=r"program \(1, 0, 0\).*x must stay above -100"):
        overrun[(2,)](cuda.from_numpy(x), out, B=128)
    x[200] = 0.0
    overrun[(2,)](cuda.from_numpy(x), out, B=128)
    np.testing.assert_array_equal(out.numpy(), x + 1)


FUZZ_SEEDS = range(300, 312)


def test_random_kernels_compile_as_cuda_debug_builds():
    """Debug checks in loops, branches, 2-d tiles, reductions, dots and atomics lower for the GPU and assemble
    (random valid kernels from the fuzzer, fp8 left out as in CUDA fuzz runs)."""
    from tilec.tools.fuzz.data import arguments
    from tilec.tools.fuzz.generate import FEATURES, generate
    from tilec.tools.fuzz.infer import infer
    from tilec.tools.fuzz.render import render
    from tilec.tools.fuzz.runner import load_kernel
    for seed in FUZZ_SEEDS:
        k = generate(seed, frozenset(FEATURES - {"fp8"}))
        info = infer(k)
        fn, _ = load_kernel(render(k, info))
        args, cx, _ = arguments(k, info)
        c = compile_jit(fn, args, 90, {"debug": True}, **cx)
        assert "trap" not in c.asm["ptx"], seed
        assert c.metadata["param_kinds"][len(c.metadata["param_kinds"]) - 2 * len(
            c.metadata["debug_checks"]["pointer_params"]) - 1] == "ptr", seed  # the record pointer
        if HAVE_PTXAS:
            assert c.asm["cubin"][:4] == b"\x7fELF", seed


@pytest.mark.gpu
def test_cuda_debug_builds_agree_with_the_interpreter():
    """On the GPU, debug builds of random valid kernels give the interpreter's results and raise nothing."""
    from tilec.tools.fuzz.generate import FEATURES, generate
    from tilec.tools.fuzz.runner import run_kernel
    failures = []
    for seed in range(400, 440):
        out = run_kernel(generate(seed, frozenset(FEATURES - {"fp8"})), ("interp", "cuda:debug", "cuda"))
        if out.status != "ok":
            failures.append(f"seed {seed}: {out.status}: {out.detail}")
    assert not failures, "\n".join(failures)
