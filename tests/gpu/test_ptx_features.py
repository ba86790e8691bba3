"""Triton's PTX-visible features as tilec's CUDA backend gives them: vectorisation hints applied to the value they
name, ``tl.assume`` reaching LLVM and the axis analysis, ``tl.extra.cuda`` special registers, ``maxnreg``,
``enable_fp_fusion`` (and its environment default), and a launch's ``arch=``. Each is checked on the PTX (and
assembled by ptxas when present); the ``gpu`` tests run them."""
import re

import numpy as np
import pytest

import tilec
import tilec.language as tl
from gpu_helpers import ARCHS, HAVE_PTXAS, compile_jit, device_arch, to_device


def _ptx(kernel, args, arch=90, options=None, **constexprs):
    return compile_jit(kernel, args, arch, options, **constexprs).asm["ptx"]


# -- hints ---------------------------------------------------------------------------------------------------------
@tilec.jit
def offset_copy(dst, src, off, n, BLOCK: tl.constexpr, HINT: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    o = o + tl.load(off)
    if HINT == 1:  # the result is discarded: the facts are about ``o`` itself, as in Triton
        tl.max_contiguous(tl.multiple_of(o, BLOCK), BLOCK)
    if HINT == 2:
        o = tl.max_contiguous(tl.multiple_of(o, BLOCK), BLOCK)
    tl.store(dst + o, tl.load(src + o, mask=o < n), mask=o < n)


@tilec.jit
def hinted_before_use(dst, src, off, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK) + tl.load(off)
    p = src + o  # used before the hint: the hint still holds for it (facts belong to the value)
    tl.multiple_of(o, 4)
    tl.max_contiguous(o, 4)
    tl.store(dst + o, tl.load(p))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("hint", [0, 1, 2])
def test_vectorisation_hints(hint, arch):
    x = np.zeros(1024, np.float32)
    ptx = _ptx(offset_copy, [x, x, np.zeros(1, np.int32), 1024], arch, BLOCK=1024, HINT=hint)
    assert ("ld.global.v4.b32" in ptx) == bool(hint) and ("st.global.v4.b32" in ptx) == bool(hint)


def test_hint_applies_to_earlier_uses():
    x = np.zeros(256, np.float32)
    k = compile_jit(hinted_before_use, [x, x, np.zeros(1, np.int32)], 90, BLOCK=256)
    assert "ld.global.v2.b32" in k.asm["ptx"] or "ld.global.v4.b32" in k.asm["ptx"]
    tir = k.asm["tir"]
    assert tir.index("hint") < tir.index("addptr")  # placed right after the hinted value


@pytest.mark.parametrize("hint", [0, 1, 2])
def test_vectorisation_hints_keep_cpu_results(hint):
    x = np.arange(3000, dtype=np.float32)
    y = np.zeros_like(x)
    offset_copy[(2,)](y, x, np.array([1024], np.int32), 3000, BLOCK=1024, HINT=hint)
    np.testing.assert_array_equal(y[1024:], x[1024:])
    assert not y[:1024].any()


# -- assume --------------------------------------------------------------------------------------------------------
@tilec.jit
def strided_rows(X, Y, stride, n, ASSUME: tl.constexpr, BLOCK: tl.constexpr):
    if ASSUME:
        tl.assume(stride % 8 == 0)
        tl.assume(n > 0)
    r = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    tl.store(Y + r * stride + o, tl.load(X + r * stride + o, mask=o < n) * 2, mask=o < n)


@tilec.jit
def assume_in_branch(X, Y, stride, FLAG: tl.constexpr):
    o = tl.arange(0, 256)
    if tl.program_id(0) == 0:
        tl.assume(stride % 16 == 0)
    tl.store(Y + stride + o, tl.load(X + stride + o))


@pytest.mark.parametrize("arch", ARCHS)
def test_assume_reaches_llvm_and_vector_widths(arch):
    x = np.zeros(4096, np.float32)
    for assume in (False, True):
        k = compile_jit(strided_rows, [x, x, 1000, 1024], arch, ASSUME=assume, BLOCK=1024)
        assert ("llvm.assume" in k.asm["llir"]) == assume
        assert ("ld.global.v4.b32" in k.asm["ptx"]) == assume  # n:16 gives the mask runs, the promise the alignment


def test_assume_in_a_branch_holds_only_there():
    x = np.zeros(4096, np.float32)
    k = compile_jit(assume_in_branch, [x, x, 1024], 90, FLAG=1)
    assert "llvm.assume" in k.asm["llir"] and "ld.global.v4" not in k.asm["ptx"]


def test_assume_on_the_cpu_and_its_errors():
    x = np.arange(4096, dtype=np.float32)
    y = np.zeros_like(x)
    strided_rows[(2,)](x, y, 2048, 1000, ASSUME=True, BLOCK=1024)
    np.testing.assert_array_equal(y[2048:3048], 2 * x[2048:3048])

    @tilec.jit
    def false_assume(X):
        tl.assume(1 == 2)

    @tilec.jit
    def tile_assume(X):
        tl.assume(tl.arange(0, 4) > 0)
    for fn, words in ((false_assume, "false at compile time"), (tile_assume, "scalar condition")):
        with pytest.raises(tilec.CompilationError, match=words):
            fn[(1,)](x)


# -- tl.extra.cuda -------------------------------------------------------------------------------------------------
@tilec.jit
def timed(Out1, Out2):
    start = tl.extra.cuda.globaltimer()
    off = tl.arange(0, 128)
    for i in range(100):
        tl.store(Out1 + off, tl.load(Out1 + off) + 1)
    tl.store(Out2, tl.extra.cuda.globaltimer() - start)


@tilec.jit
def sm_ids(Out):
    tl.store(Out + tl.program_id(0), tl.extra.cuda.smid())


@tilec.jit
def dependent(Out):
    tl.extra.cuda.gdc_wait()
    tl.store(Out + tl.program_id(0), 1)
    tl.extra.cuda.gdc_launch_dependents()


@pytest.mark.parametrize("arch", ARCHS)
def test_special_registers(arch):
    x, y = np.zeros(128, np.int64), np.zeros(1, np.int64)
    assert _ptx(timed, [x, y], arch).count("%globaltimer") == 2  # never merged or hoisted: not pure
    assert _ptx(sm_ids, [np.zeros(4, np.int32)], arch).count("%smid") == 1
    gdc = _ptx(dependent, [np.zeros(4, np.int32)], arch)
    assert gdc.count("griddepcontrol") == (2 if arch >= 90 else 0)


def test_special_registers_are_cuda_only():
    with pytest.raises(tilec.CompilationError, match="CPU backend"):
        sm_ids[(1,)](np.zeros(4, np.int32))


# -- maxnreg, fp fusion, arch ---------------------------------------------------------------------------------------
@tilec.jit
def store_zero(X):
    tl.store(X, 0)


@tilec.jit
def mul_add(data):
    p = data + tl.arange(0, 128)
    tl.store(p, tl.load(p) * 1.5 + 1.0)


FMA = re.compile(r"(mad|fma)\.r[nzmp]\.(ftz\.)?f32")


@pytest.mark.parametrize("arch", ARCHS)
def test_maxnreg_on_the_entry(arch):
    k = compile_jit(store_zero, [np.zeros(1, np.int32)], arch, {"maxnreg": 42})
    assert re.search(r"\.visible \.entry [^{;]*\.maxnreg 42", k.asm["ptx"])
    if HAVE_PTXAS:
        assert k.metadata["num_regs"] <= 42
    assert ".maxnreg" not in compile_jit(store_zero, [np.zeros(1, np.int32)], arch).asm["ptx"]
    with pytest.raises(tilec.BackendError, match="maxnreg"):
        compile_jit(store_zero, [np.zeros(1, np.int32)], arch, {"maxnreg": 0})


def test_fp_fusion_option_and_default(monkeypatch, tmp_path):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    x = np.zeros(128, np.float32)
    assert FMA.search(_ptx(mul_add, [x]))
    assert not FMA.search(_ptx(mul_add, [x], options={"enable_fp_fusion": False}))
    for var in ("TILEC_DEFAULT_FP_FUSION", "TRITON_DEFAULT_FP_FUSION"):
        monkeypatch.setenv(var, "0")
        assert not FMA.search(_ptx(mul_add, [x]))
        assert FMA.search(_ptx(mul_add, [x], options={"enable_fp_fusion": True}))
        monkeypatch.delenv(var)


@pytest.mark.parametrize("arch", ["sm80", "sm_90a", 80, "90"])
def test_arch_option_overrides_the_target(arch, tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    cc = int(str(arch).removeprefix("sm_").removeprefix("sm").rstrip("a"))
    src = tilec.ASTSource(mul_add, signature="*fp32:16")
    k = tilec.compile(src, target=tilec.Target("cuda", 90 if cc == 80 else 80, 32), options={"arch": arch})
    assert k.metadata["arch"] == cc and f"cuda:{cc}" in k.asm["ttgir"] and k.asm["ttgir"] is k.asm["gir"]
    assert re.search(rf"\.target sm_{cc}a?\b", k.asm["ptx"])


def test_arch_environment_override(monkeypatch, tmp_path):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITON_OVERRIDE_ARCH", "sm80")
    k = tilec.compile(tilec.ASTSource(mul_add, signature="*fp32:16"), target=tilec.Target("cuda", 90, 32))
    assert k.metadata["arch"] == 80


def test_arch_ptxas_cannot_assemble_still_compiles_to_ptx(monkeypatch, tmp_path):
    """sm_70 PTX (the driver JIT-compiles it on any newer GPU) even with a ptxas that dropped Volta."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    k = tilec.compile(tilec.ASTSource(mul_add, signature="*fp32:16"), target=tilec.Target("cuda"),
                      options={"arch": "sm70"})
    assert ".target sm_70" in k.asm["ptx"] and k.metadata["arch"] == 70


def test_bad_arch_is_an_error():
    with pytest.raises(tilec.errors.ConfigurationError, match="unknown CUDA architecture 'volta'.*compute capabilities"):
        tilec.compile(tilec.ASTSource(mul_add, signature="*fp32:16"), target=tilec.Target("cuda"),
                      options={"arch": "volta"})


def test_dtype_repr_evaluates_back():
    import tilec.compat as compat
    was = compat.installed()
    if not was:
        assert repr(tl.int8) == "tl.int8" and eval(repr(tl.bfloat16)) == tl.bfloat16
    compat.install()
    try:
        import triton  # noqa: F401  (tilec, through compat)
        for name in ("int8", "uint64", "float16", "bfloat16", "float32"):
            assert repr(getattr(tl, name)) == f"triton.language.{name}"
            assert eval(repr(getattr(tl, name))) == getattr(tl, name)
    finally:
        if not was:
            compat.uninstall()
            assert repr(tl.float16) == "tl.float16"


# -- on the device -------------------------------------------------------------------------------------------------
@pytest.mark.gpu
def test_special_registers_run():
    tgt = tilec.Target("cuda", device_arch(), 32)
    x, y = to_device([np.zeros(128, np.int64), np.zeros(1, np.int64)])
    timed[(1,)](x, y, target=tgt)
    assert y.numpy()[0] > 0 and (x.numpy() == 100).all()
    ids = to_device([np.full(1024, -1, np.int32)])[0]
    sm_ids[(1024,)](ids, target=tgt)
    got = ids.numpy()
    assert (got >= 0).all() and len(np.unique(got)) > 1


@pytest.mark.gpu
@pytest.mark.parametrize("hint", [0, 1, 2])
def test_hints_assume_maxnreg_and_arch_run(hint):
    arch = device_arch()
    x = np.arange(3000, dtype=np.float32)
    dev = to_device([np.zeros_like(x), x, np.array([1024], np.int32)])
    offset_copy[(2,)](dev[0], dev[1], dev[2], 3000, BLOCK=1024, HINT=hint, maxnreg=64,
                      target=tilec.Target("cuda", arch, 32))
    np.testing.assert_array_equal(dev[0].numpy()[1024:], x[1024:])
    dev = to_device([np.arange(4096, dtype=np.float32), np.zeros(4096, np.float32)])
    strided_rows[(2,)](dev[0], dev[1], 2048, 1000, ASSUME=True, BLOCK=1024, arch="sm80",
                       target=tilec.Target("cuda", arch, 32))
    np.testing.assert_array_equal(dev[1].numpy()[2048:3048], 2 * np.arange(2048, 3048, dtype=np.float32))
