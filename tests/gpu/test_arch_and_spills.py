"""What a CUDA compile says up front: an architecture tilec does not know is refused before LLVM or ptxas see it,
with the list of those it knows; a kernel that spills registers says so in one line on stderr (once per variant
and process; TILEC_SPILL_WARNING=0 hides it)."""
import shutil

import pytest

import tilec
import tilec.language as tl
from tilec.errors import ConfigurationError
from tilec.targets.cuda import backend


@tilec.jit
def live(x_ptr, y_ptr, n, B: tl.constexpr):
    """Two tiles of ``B`` floats live through a loop: on one warp, 4096 of them need more than 255 registers."""
    o = tl.arange(0, B)
    x = tl.load(x_ptr + o)
    y = tl.load(y_ptr + o)
    for i in range(n):
        x = x * y + 1.0
        y = y * x + 2.0
    tl.store(x_ptr + o, x + y)


def _compile(arch=90, block=4096):
    src = tilec.ASTSource(live, signature="*fp32,*fp32,i32", constexprs={"B": block})
    return tilec.compile(src, target=tilec.Target("cuda", arch, 32), options={"num_warps": 1})


@pytest.mark.parametrize("arch", [95, "sm_95", "ampere", 0])
def test_an_unknown_architecture_is_refused_up_front(arch, capfd):
    with pytest.raises(ConfigurationError, match=r"unknown CUDA architecture .*; tilec compiles for compute "
                                                 r"capabilities 70, 75, 80, 86, 87, 89, 90, 100") as e:
        _compile(arch, block=16)
    assert repr(str(arch)) in str(e.value)
    assert "not a recognized processor" not in capfd.readouterr().err  # LLVM never saw it


def test_known_spellings_of_an_architecture():
    for arch in (90, "90", "sm_90", "sm_90a"):
        assert backend.CUDABackend(tilec.Target("cuda", arch, 32)).arch == 90


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (the spill report is ptxas's)")
def test_a_spilling_kernel_says_so_once(monkeypatch, capfd):
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    monkeypatch.setattr(backend, "_said", set())
    monkeypatch.setenv("TILEC_SPILL_WARNING", "0")
    k = _compile()
    assert k.metadata["spill_stores"] > 0 and "spills" not in capfd.readouterr().err
    monkeypatch.delenv("TILEC_SPILL_WARNING")
    k = _compile()
    lines = [x for x in capfd.readouterr().err.splitlines() if "spills" in x]
    md = k.metadata
    assert lines == [f"tilec: kernel 'live' spills on sm_90 (1 warps): {md['num_regs']} registers, "
                     f"{md['spill_stores']} bytes stored to and {md['spill_loads']} loaded from local memory per "
                     "thread (smaller tiles or more warps help; TILEC_SPILL_WARNING=0 hides this)"]
    _compile()
    assert "spills" not in capfd.readouterr().err  # once per variant and process
    small = _compile(block=256)
    assert small.metadata["spill_stores"] == 0 and "spills" not in capfd.readouterr().err


def test_ptxas_serialising_warpgroup_dots_is_reported_once(monkeypatch, capfd):
    """ptxas's C7514 note (every wgmma then waits for the one before) reaches the metadata and one warning."""
    from tilec.targets.cuda import ptx
    log = ("ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due "
           "to non wgmma instructions reading accumulator registers of  a wgmma between start and end of the "
           "pipeline stage in the function 'k'\nptxas info    : Used 124 registers")
    md = {"name": "k", "arch": 90, "hash": "h1"}
    for name, rx in (("num_regs", ptx._INFO), ("wgmma_serialized", ptx._SERIALISED)):
        m = rx.search(log)
        md[name] = int(m.group(1)) if name == "num_regs" else " ".join(m.group(1).split())
    assert md["wgmma_serialized"].startswith("wgmma.mma_async instructions are serialized due to non wgmma")
    monkeypatch.setattr(backend, "_said", set())
    monkeypatch.delenv("TILEC_SPILL_WARNING", raising=False)
    backend.warn_ptxas_report(md)
    backend.warn_ptxas_report(md)
    err = capfd.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("tilec: kernel 'k' on sm_90: ptxas made its warpgroup dots wait")
    assert "reading accumulator registers of a wgmma" in err[0] and "spills" not in err[0]
