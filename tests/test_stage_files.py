"""Every stage as a file: TILEC_KERNEL_DUMP writes them per variant, TILEC_KERNEL_OVERRIDE compiles on from an
edited copy (only what was edited counts), Config(ir_override=...) takes one file; bad overrides are tilec
errors that say which file and why."""
import os
import shutil

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.errors import BackendError

CPU_STAGES = {"tir", "plan", "llir", "asm"}


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    for v in ("TILEC_KERNEL_DUMP", "TILEC_KERNEL_OVERRIDE", "TILEC_OVERRIDE_DIR", "TILEC_DUMP_DIR", "TILEC_DUMP_IR"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("TILEC_DUMP_DIR", str(tmp_path / "dump"))
    monkeypatch.setenv("TILEC_OVERRIDE_DIR", str(tmp_path / "override"))
    return tmp_path, monkeypatch


def make_kernel():
    """A fresh @jit function each time (no launch reuses another test's compiled variant in memory)."""
    @tilec.jit
    def stage_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
    return stage_kernel


def launch(block=32):
    x = np.arange(100, dtype=np.float32)
    y = np.full(100, 2.0, np.float32)
    out = np.zeros(100, np.float32)
    make_kernel()[(tilec.cdiv(100, block),)](x, y, out, 100, BLOCK=block)
    return x, y, out


def variants(root):
    return sorted((root / "stage_kernel").iterdir())


def test_dump_writes_every_stage_of_every_variant(dirs):
    tmp, env = dirs
    env.setenv("TILEC_KERNEL_DUMP", "1")
    launch(32)
    launch(16)
    vs = variants(tmp / "dump")
    assert len(vs) == 2 and all(len(v.name) == 12 for v in vs)
    for v in vs:
        stages = {f.name.split(".", 1)[1] for f in v.iterdir() if f.name.startswith("stage_kernel.")}
        assert stages == CPU_STAGES
        assert "func @stage_kernel" in (v / "stage_kernel.tir").read_text()
    blocks = {("tile<32x" in (v / "stage_kernel.tir").read_text()) for v in vs}
    assert blocks == {True, False}
    # a cache hit is dumped too
    shutil.rmtree(tmp / "dump")
    launch(32)
    assert len(variants(tmp / "dump")) == 1


def _copy_dump_to_override(tmp):
    shutil.copytree(tmp / "dump", tmp / "override")
    (v,) = variants(tmp / "override")
    return v


@pytest.mark.parametrize("stage, old, new, expect", [
    ("tir", "= add %10, %13 : tile<32xf32>", "= mul %10, %13 : tile<32xf32>", lambda x, y: x * y),
    ("llir", "fadd <", "fsub <", lambda x, y: x - y),
])
def test_edited_stage_overrides_and_compiles_on(dirs, capsys, stage, old, new, expect):
    tmp, env = dirs
    env.setenv("TILEC_KERNEL_DUMP", "1")
    x, y, out = launch()
    np.testing.assert_array_equal(out, x + y)
    v = _copy_dump_to_override(tmp)
    path = v / f"stage_kernel.{stage}"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    env.setenv("TILEC_KERNEL_OVERRIDE", "1")
    capsys.readouterr()
    x, y, out = launch()
    np.testing.assert_array_equal(out, expect(x, y))
    err = capsys.readouterr().err
    assert f"stage {stage} taken from {path}" in err and err.count("taken from") == 1
    # the override never reaches the kernel cache: without it, the original kernel comes back
    env.delenv("TILEC_KERNEL_OVERRIDE")
    x, y, out = launch()
    np.testing.assert_array_equal(out, x + y)


def test_unedited_override_files_change_nothing(dirs, capsys):
    tmp, env = dirs
    env.setenv("TILEC_KERNEL_DUMP", "1")
    launch()
    _copy_dump_to_override(tmp)
    env.setenv("TILEC_KERNEL_OVERRIDE", "1")
    x, y, out = launch()
    np.testing.assert_array_equal(out, x + y)
    assert "taken from" not in capsys.readouterr().err


def test_config_ir_override(dirs, tmp_path):
    tmp, env = dirs
    env.setenv("TILEC_KERNEL_DUMP", "1")
    launch()
    (v,) = variants(tmp / "dump")
    edited = tmp_path / "mine.llir"
    edited.write_text((v / "stage_kernel.llir").read_text().replace("fadd <", "fmul <"))
    k = make_kernel()
    tuned = tilec.autotune(configs=[tilec.Config({"BLOCK": 32}, ir_override=str(edited))], key=["n"])(k)
    x = np.arange(100, dtype=np.float32)
    y = np.full(100, 3.0, np.float32)
    out = np.zeros(100, np.float32)
    tuned[lambda m: (tilec.cdiv(100, m["BLOCK"]),)](x, y, out, 100)
    np.testing.assert_array_equal(out, x * y)


def test_bad_overrides_are_tilec_errors(dirs, tmp_path):
    tmp, env = dirs
    env.setenv("TILEC_KERNEL_DUMP", "1")
    launch()
    v = _copy_dump_to_override(tmp)
    env.setenv("TILEC_KERNEL_OVERRIDE", "1")
    tir = (v / "stage_kernel.tir").read_text()
    (v / "stage_kernel.tir").write_text(tir.replace("= add %10", "= frobnicate %10"))
    with pytest.raises(BackendError, match=r"tir override of stage_kernel \[\w+\] does not parse"):
        launch()
    (v / "stage_kernel.tir").write_text(tir)
    (v / "stage_kernel.asm").write_text("nop\n")
    with pytest.raises(BackendError, match="the CPU runs from llir"):
        launch()
    (v / "stage_kernel.asm").unlink()
    (v / "stage_kernel.llir").write_text("this is not LLVM IR\n")
    with pytest.raises(BackendError, match="LLVM rejected"):
        launch()
    env.delenv("TILEC_KERNEL_OVERRIDE")
    with pytest.raises(BackendError, match="extension must name a stage"):
        make_kernel()[(1,)](np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32), 4, BLOCK=4,
                            ir_override=str(tmp_path / "x.txt"))
    with pytest.raises(BackendError, match="cannot read"):
        make_kernel()[(1,)](np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32), 4, BLOCK=4,
                            ir_override=str(tmp_path / "missing.llir"))


def test_gpu_stages_override_when_cross_compiling(dirs):
    """gir and ptx of a CUDA compile (no GPU needed): an edited gir is lowered, an edited ptx is kept."""
    from tilec.targets.cuda.backend import CUDABackend  # noqa: F401  (the backend is importable)
    tmp, env = dirs
    env.setenv("TILEC_KERNEL_DUMP", "1")
    src = tilec.ASTSource(make_kernel(), signature="*fp32,*fp32,*fp32,i32", constexprs={"BLOCK": 128})
    target = tilec.Target("cuda", 90, 32)
    before = tilec.compile(src, target=target)
    assert "add.f32" in before.asm["ptx"] or "add.rn.f32" in before.asm["ptx"]
    v = _copy_dump_to_override(tmp)
    gir = (v / "stage_kernel.gir").read_text()
    line = next(ln for ln in gir.splitlines() if " = add " in ln and "f32" in ln.split(":")[-1])
    (v / "stage_kernel.gir").write_text(gir.replace(line, line.replace(" = add ", " = mul ")))
    env.setenv("TILEC_KERNEL_OVERRIDE", "1")
    after = tilec.compile(src, target=target)
    assert "mul.f32" in after.asm["ptx"] or "mul.rn.f32" in after.asm["ptx"]
    assert after.metadata["override"] == "gir"
    (v / "stage_kernel.gir").write_text(gir)
    (v / "stage_kernel.ptx").write_text(before.asm["ptx"] + "\n// edited by hand\n")
    for f in v.glob("stage_kernel.cubin"):
        f.unlink()
    after = tilec.compile(src, target=target)
    assert after.asm["ptx"].endswith("// edited by hand\n") and after.metadata["override"] == "ptx"
