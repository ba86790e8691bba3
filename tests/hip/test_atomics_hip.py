"""Atomics on AMD keep Triton's memory semantics and scope: gpu is LLVM's agent scope, cta the work-group, sys
the system; float atomics at agent or work-group scope are the native instructions (no compare-and-swap loop;
L2 write-back/invalidate only where the ordering asks for it at device scope), system scope keeps the loop
fine-grained host memory needs. Read from the assembly of linked, validated code objects; no ROCm or GPU."""
import re

import pytest

import tilec
from atomic_kernels import SCOPES, SEMS, cas_source, rmw_source
from hsaco_check import validate_hsaco

LLVM_SCOPE = {"cta": 'syncscope("workgroup") ', "gpu": 'syncscope("agent") ', "sys": ""}
LLVM_ORDER = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel"}


def _compile(src, arch, warp_size):
    k = tilec.compile(src, tilec.Target("hip", arch, warp_size))
    validate_hsaco(k.asm["hsaco"], k.name, arch, warp_size)
    return k


def _ops(asm, prefix):
    return [line.split()[0] for line in asm.splitlines() if line.strip().startswith(prefix)]


@pytest.mark.parametrize("sem", SEMS)
@pytest.mark.parametrize("scope", SCOPES)
def test_sem_and_scope_reach_llvm(sem, scope):
    k = _compile(rmw_source("max", "i32", sem, scope), "gfx942", 64)
    assert re.search(rf"atomicrmw max ptr addrspace\(1\) %\S+, i32 %\S+ {re.escape(LLVM_SCOPE[scope])}"
                     rf"{LLVM_ORDER[sem]}\b", k.asm["llir"])
    # at system scope the memory may be the host's over PCIe, which has no integer max: LLVM loops instead
    assert _ops(k.asm["amdgcn"], "global_atomic_cmpswap" if scope == "sys" else "global_atomic_smax")


@pytest.mark.parametrize("arch,warp_size,instr", [("gfx942", 64, "global_atomic_add_f32"),
                                                  ("gfx1100", 32, "global_atomic_add_f32"),
                                                  ("gfx950", 64, "global_atomic_add_f32")])
@pytest.mark.parametrize("scope", ["gpu", "cta"])
def test_float_add_is_native_below_system_scope(arch, warp_size, instr, scope):
    asm = _compile(rmw_source("add", "fp32", "acq_rel", scope), arch, warp_size).asm["amdgcn"]
    assert _ops(asm, instr) and not _ops(asm, "global_atomic_cmpswap")


def test_float_add_at_system_scope_loops():
    asm = _compile(rmw_source("add", "fp32", "acq_rel", "sys"), "gfx942", 64).asm["amdgcn"]
    assert _ops(asm, "global_atomic_cmpswap") and not _ops(asm, "global_atomic_add_f32")


@pytest.mark.parametrize("sem,writeback,invalidate", [("relaxed", False, False), ("release", True, False),
                                                      ("acquire", False, True), ("acq_rel", True, True)])
def test_cache_maintenance_follows_the_ordering(sem, writeback, invalidate):
    """gfx942 at agent scope: a release writes L2 back first (``buffer_wbl2 sc1``), an acquire invalidates after
    (``buffer_inv sc1``); at work-group scope neither is needed."""
    asm = _compile(rmw_source("add", "fp32", sem, "gpu"), "gfx942", 64).asm["amdgcn"]
    assert bool(_ops(asm, "buffer_wbl2")) == writeback and bool(_ops(asm, "buffer_inv")) == invalidate
    asm = _compile(rmw_source("add", "fp32", sem, "cta"), "gfx942", 64).asm["amdgcn"]
    assert not _ops(asm, "buffer_wbl2") and not _ops(asm, "buffer_inv")


@pytest.mark.parametrize("dtype,instr", [("fp64", "global_atomic_add_f64"), ("i64", "global_atomic_add_x2"),
                                         ("u32", "global_atomic_umax")])
def test_other_types_on_gfx942(dtype, instr):
    kind = "max" if dtype == "u32" else "add"
    asm = _compile(rmw_source(kind, dtype, "relaxed", "gpu"), "gfx942", 64).asm["amdgcn"]
    assert _ops(asm, instr)


def test_bf16_add_updates_two_bytes():
    """bf16 lives in f32 registers: the atomic works on its 16-bit memory form (LLVM's bfloat), a loop on the
    aligned 32-bit word around it, never a 4-byte float add."""
    k = _compile(rmw_source("add", "bf16", "relaxed", "gpu"), "gfx942", 64)
    assert re.search(r"atomicrmw fadd ptr addrspace\(1\) %\S+, bfloat", k.asm["llir"])
    assert not _ops(k.asm["amdgcn"], "global_atomic_add_f32")


@pytest.mark.parametrize("sem", SEMS)
@pytest.mark.parametrize("arch,warp_size", [("gfx942", 64), ("gfx1100", 32)])
def test_compare_and_swap(sem, arch, warp_size):
    k = _compile(cas_source("i32", sem, "gpu"), arch, warp_size)
    fail = {"relaxed": "monotonic", "release": "monotonic"}.get(sem, "acquire")
    assert re.search(rf'cmpxchg ptr addrspace\(1\) %\S+, i32 %\S+, i32 %\S+ syncscope\("agent"\) '
                     rf"{LLVM_ORDER[sem]} {fail}", k.asm["llir"])
    assert _ops(k.asm["amdgcn"], "global_atomic_cmpswap")
