"""Atomics keep Triton's memory semantics and scope in PTX: ``atom.global.<scope>.<sem>.<op>`` for
read-modify-writes and ``atom.global.<sem>.<scope>.cas`` (the spellings Triton emits and test_core's atomics
cases look for), native float adds (f32, f64, f16; bf16 on sm_90), and LLVM's compare-and-swap loops, still
ordered and scoped, for what PTX has no atom for. Every PTX is assembled with ptxas."""
import re

import pytest

import tilec
from atomic_kernels import SCOPES, SEMS, cas_source, default_rmw_kernel, rmw_source
from gpu_helpers import ARCHS, HAVE_PTXAS

def _compile(src, arch):
    k = tilec.compile(src, tilec.Target("cuda", arch, 32))
    if HAVE_PTXAS:
        assert k.asm["cubin"][:4] == b"\x7fELF"
    return k


def _atoms(ptx):
    return re.findall(r"\batom\.[\w.]+", ptx)


@pytest.mark.parametrize("sem", SEMS)
@pytest.mark.parametrize("scope", SCOPES)
def test_every_sem_and_scope_reaches_the_ptx(sem, scope):
    k = _compile(rmw_source("add", "fp32", sem, scope), 90)
    assert _atoms(k.asm["ptx"]) == [f"atom.global.{scope}.{sem}.add.f32"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kind,dtype,suffix", [
    ("add", "fp32", "add.f32"), ("add", "fp64", "add.f64"), ("add", "fp16", "add.noftz.f16"),
    ("add", "i32", "add.u32"), ("add", "u64", "add.u64"), ("max", "i32", "max.s32"), ("max", "u32", "max.u32"),
    ("min", "i64", "min.s64"), ("min", "u64", "min.u64"), ("and", "i32", "and.b32"), ("or", "i64", "or.b64"),
    ("xor", "u32", "xor.b32"), ("xchg", "fp32", "exch.b32"), ("xchg", "i64", "exch.b64")])
def test_each_type_has_its_atom(arch, kind, dtype, suffix):
    k = _compile(rmw_source(kind, dtype, "acq_rel", "gpu"), arch)
    assert f"atom.global.gpu.acq_rel.{suffix}" in k.asm["ptx"]


@pytest.mark.parametrize("arch,native", [(80, False), (90, True)])
def test_bf16_add_is_native_from_sm_90(arch, native):
    ptx = _compile(rmw_source("add", "bf16", "release", "cta"), arch).asm["ptx"]
    assert ("atom.global.cta.release.add.noftz.bf16" in ptx) == native
    if not native:  # a 32-bit compare-and-swap loop around the two bytes, still release at cta scope
        assert re.search(r"atom\.release\.cta\.global\.cas\.b32", ptx)


@pytest.mark.parametrize("dtype", ["i8", "i16"])
def test_narrow_integers_loop_with_their_order_and_scope(dtype):
    ptx = _compile(rmw_source("max", dtype, "acquire", "sys"), 90).asm["ptx"]
    assert re.search(r"atom\.acquire\.sys\.global\.cas\.b32", ptx)
    assert "atom.global.add" not in ptx


@pytest.mark.parametrize("sem", SEMS)
@pytest.mark.parametrize("dtype,bits", [("i32", 32), ("i64", 64), ("fp32", 32), ("fp16", 16)])
def test_compare_and_swap(sem, dtype, bits):
    ptx = _compile(cas_source(dtype, sem, "gpu"), 90).asm["ptx"]
    assert f"atom.global.{sem}.gpu.cas.b{bits}" in ptx
    assert f"atom.global.{sem}.gpu.cas.b32" in ptx and f"atom.global.gpu.{sem}.exch.b32" in ptx  # the lock


def test_triton_defaults_are_acq_rel_at_gpu_scope():
    src = tilec.ASTSource(default_rmw_kernel, "*fp32,*fp32")
    for arch in ARCHS:
        assert "atom.global.gpu.acq_rel.add.f32" in _compile(src, arch).asm["ptx"]
