"""TILEC_CUDA_ARCH picks the architecture compiled for when the target names none (the sm_80 path on a newer
GPU), and the architecture is part of the cache key."""
import pytest

import tilec
import tilec.language as tl


@tilec.jit
def add1(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def _compile():
    return tilec.compile(tilec.ASTSource(add1, signature="*fp32,i32", constexprs={"BLOCK": 128}),
                         target=tilec.Target("cuda"))


@pytest.mark.parametrize("arch", [80, 90])
def test_env_selects_the_arch(arch, monkeypatch, tmp_path):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_CUDA_ARCH", str(arch))
    k = _compile()
    assert k.metadata["arch"] == arch and f".target sm_{arch}" in k.asm["ptx"]


def test_arch_is_in_the_cache_key(monkeypatch, tmp_path):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_CUDA_ARCH", "80")
    a = _compile()
    monkeypatch.setenv("TILEC_CUDA_ARCH", "sm_90")
    b = _compile()
    assert a.metadata["hash"] != b.metadata["hash"] and ".target sm_90" in b.asm["ptx"]


def test_bad_value_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("TILEC_CUDA_ARCH", "ampere")
    with pytest.raises(tilec.BackendError if hasattr(tilec, "BackendError") else Exception,
                       match="TILEC_CUDA_ARCH must be a compute capability"):
        _compile()
