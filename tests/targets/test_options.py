"""Compile options: each backend's frozen dataclass, parsed once from the launch or compile keywords, each way to
get one wrong refused with a message that says what is valid, and the same object seen by every pass; the GPU pass
list built from a ``GpuTarget`` and the options, never from an architecture number."""
import dataclasses

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.compiler import ASTSource, Target
from tilec.errors import BackendError
from tilec.gpu.passes.accelerate_dot import AccelerateDot
from tilec.gpu.passes.convert_to_gir import ConvertToGIR
from tilec.gpu.passes.software_pipeline import SoftwarePipeline
from tilec.gpu.pipeline import device_callable, gpu_passes
from tilec.passes.manager import Pass, PassManager, tir_pipeline
from tilec.pipeline import cache_key
from tilec.runtime.binder import LAUNCH_OPTIONS
from tilec.targets.cpu.options import CPUOptions
from tilec.targets.cuda.options import CUDAOptions
from tilec.targets.cuda.target import CudaTarget
from tilec.targets.hip.options import HIPOptions
from tilec.targets.hip.target import HipTarget
from tilec.targets.options import NumWarpsError, OptionError, Options, as_dict, num_warps_of


@tilec.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)


SOURCE = ASTSource(add, "*fp32,*fp32,*fp32,i32", {"BLOCK": 64})


def hip(**given):
    return HIPOptions.parse(given, arch="gfx942", warp_size=64)


# -- parsing ---------------------------------------------------------------------------------------------------
def test_defaults_are_each_backends_own():
    cpu, cuda, amd = CPUOptions.parse({}, host="h"), CUDAOptions.parse({}, arch=90), hip()
    assert cpu.num_warps == cuda.num_warps == amd.num_warps == Options.num_warps
    assert (cpu.num_stages, cuda.num_stages, amd.num_stages) == (Options.num_stages, Options.num_stages, 2)
    assert cpu.default_dot_input_precision == "ieee" and cuda.default_dot_input_precision == "tf32"
    assert (cpu.opt_level, cpu.host) == (3, "h")
    assert cuda.arch == 90 and (amd.arch, amd.warp_size, amd.matrix_instr_nonkdim) == ("gfx942", 64, 0)


def test_given_values_none_and_arch():
    o = CUDAOptions.parse({"num_warps": 8, "num_stages": 2, "debug": 1, "maxnreg": None, "arch": 80}, arch=90)
    assert (o.num_warps, o.num_stages, o.debug, o.maxnreg) == (8, 2, True, None)
    assert o.arch == 90  # the target's: a launch's arch= retargets before options are parsed


def test_fp_fusion_default_follows_the_environment(monkeypatch):
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")
    assert CUDAOptions.parse({}, arch=80).enable_fp_fusion is False
    assert CUDAOptions.parse({"enable_fp_fusion": True}, arch=80).enable_fp_fusion is True
    monkeypatch.delenv("TRITON_DEFAULT_FP_FUSION")
    assert CUDAOptions.parse({}, arch=80).enable_fp_fusion is True


def test_unknown_option_lists_the_valid_ones_and_the_closest():
    with pytest.raises(OptionError) as e:
        CUDAOptions.parse({"num_wraps": 8}, arch=90)
    msg = str(e.value)
    assert "unknown CUDA option 'num_wraps'" in msg and "did you mean 'num_warps'?" in msg
    assert "the CUDA options are num_warps, num_stages" in msg and "arch" not in msg.split("are", 1)[1]
    with pytest.raises(OptionError, match="unknown CPU options 'a', 'b'"):
        CPUOptions.parse({"b": 1, "a": 2}, host="h")
    with pytest.raises(OptionError, match="did you mean 'kpack'"):
        hip(kpak=2)
    with pytest.raises(OptionError, match="unknown CUDA option 'waves_per_eu'"):  # AMD's own
        CUDAOptions.parse({"waves_per_eu": 2}, arch=90)
    with pytest.raises(OptionError, match="unknown HIP option 'warp_size'"):  # the target's, not a launch's
        hip(warp_size=32)
    assert isinstance(e.value, BackendError)


@pytest.mark.parametrize("nw", [3, 6, 12])
def test_num_warps_not_a_power_of_two_is_tritons_assertion_error(nw):
    for make in (lambda: CPUOptions.parse({"num_warps": nw}, host="h"),
                 lambda: CUDAOptions.parse({"num_warps": nw}, arch=90), lambda: hip(num_warps=nw)):
        with pytest.raises(AssertionError, match="num_warps must be a power of 2") as e:
            make()
        assert isinstance(e.value, NumWarpsError) and isinstance(e.value, BackendError)


def test_num_warps_power_of_two_error_on_a_cpu_launch():
    x = np.zeros(64, np.float32)
    with pytest.raises(AssertionError, match="must be a power of 2"):
        add[(1,)](x, x, x, 64, BLOCK=64, num_warps=3)
    add[(1,)](x, x, x, 64, BLOCK=64, num_warps=1)


@pytest.mark.parametrize("make, message", [
    (lambda: Options.parse({"num_warps": 0}), "num_warps must be a positive int, got 0"),
    (lambda: Options.parse({"num_warps": "4"}), "num_warps must be a positive int, got '4'"),
    (lambda: Options.parse({"num_warps": True}), "num_warps must be a positive int"),
    (lambda: Options.parse({"num_stages": 0}), "num_stages must be a positive int, got 0"),
    (lambda: Options.parse({"num_ctas": 0}), "num_ctas must be a positive int"),
    (lambda: Options.parse({"maxnreg": 0}), "maxnreg must be an int in 1..255"),
    (lambda: Options.parse({"maxnreg": 256}), "maxnreg must be an int in 1..255"),
    (lambda: CPUOptions.parse({"opt_level": 4}, host="h"), "opt_level must be an int in 0..3, got 4"),
    (lambda: CUDAOptions.parse({"num_warps": 64}, arch=90), "num_warps must be at most 32 on CUDA"),
    (lambda: hip(num_warps=32), "num_warps must keep num_warps \\* 64 <= 1024 on gfx942"),
    (lambda: hip(matrix_instr_nonkdim=8), "matrix_instr_nonkdim must be 0 \\(choose\\), 16 or 32, got 8"),
    (lambda: hip(waves_per_eu=-1), "waves_per_eu must be a non-negative int"),
])
def test_bad_values(make, message):
    with pytest.raises(OptionError, match=message):
        make()


def test_wave32_takes_more_warps():
    assert HIPOptions.parse({"num_warps": 32}, arch="gfx1100", warp_size=32).num_warps == 32


def test_the_launch_keywords_are_the_shared_fields():
    assert set(Options.names()) <= set(LAUNCH_OPTIONS)
    assert set(LAUNCH_OPTIONS) - set(Options.names()) == {"target", "ir_override", "arch"}


# -- frozen, hashed, keyed -----------------------------------------------------------------------------------
def test_frozen_hashable_and_part_of_the_cache_key():
    a, b = CUDAOptions.parse({"num_warps": 8}, arch=90), CUDAOptions.parse({"num_warps": 8}, arch=90)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.num_warps = 4
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    target = Target("cuda", 90, 32)
    assert cache_key(SOURCE, target, a) == cache_key(SOURCE, target, b) == cache_key(SOURCE, target, as_dict(a))
    assert cache_key(SOURCE, target, a) != cache_key(SOURCE, target, a.replace(num_warps=4))
    assert cache_key(SOURCE, target, a) != cache_key(SOURCE, target, a.replace(maxnreg=128))
    with pytest.raises(NumWarpsError):
        a.replace(num_warps=5)


def test_metadata_records_every_field():
    k = tilec.compile(SOURCE, Target("cuda", 80, 32), {"num_warps": 2, "maxnreg": 96})
    assert k.metadata["options"] == as_dict(CUDAOptions.parse({"num_warps": 2, "maxnreg": 96}, arch=80))
    assert k.metadata["num_warps"] == 2
    assert '"nvvm.maxntid"="64"' in k.asm["llir"] and '"nvvm.maxnreg"="96"' in k.asm["llir"]
    assert "num_warps = 2" in k.asm["gir"]


# -- the passes see them ---------------------------------------------------------------------------------------
class Seen(Pass):
    """Records the options it ran with (no ``name``: not registered)."""

    def run(self, module):
        self.seen = self.options
        return False


def test_every_pass_gets_the_managers_options():
    opts = CPUOptions.parse({"num_warps": 2}, host="h")
    passes = tir_pipeline() + [Seen()]
    PassManager("k", options=opts).run(SOURCE.make_ir(as_dict(opts)), passes)
    assert all(p.options is opts for p in passes) and passes[-1].seen is opts
    alone = Seen()
    PassManager("k").run(SOURCE.make_ir({}), [alone])
    assert alone.seen is None


def test_a_compile_hands_its_options_to_the_gpu_passes(monkeypatch):
    seen = []
    monkeypatch.setattr(Seen, "run", lambda self, module: seen.append(self.options))
    from tilec.targets.cuda.backend import CUDABackend
    monkeypatch.setattr(CUDABackend, "passes", lambda self, options: gpu_passes(self.gpu_target(), options) + [Seen()])
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    tilec.compile(SOURCE, Target("cuda", 90, 32), {"num_warps": 2, "num_stages": 4})
    assert seen == [CUDAOptions.parse({"num_warps": 2, "num_stages": 4}, arch=90)]


def test_num_warps_of_prefers_the_function():
    class F:
        attrs = {}
    f = F()
    assert num_warps_of(f) == Options.num_warps
    assert num_warps_of(f, Options(num_warps=8)) == 8
    f.attrs = {"num_warps": 2}
    assert num_warps_of(f, Options(num_warps=8)) == 2


# -- the GPU pass list asks the target -------------------------------------------------------------------------
def one(passes, cls):
    found = [p for p in passes if isinstance(p, cls)]
    assert len(found) == 1
    return found[0]


def test_cuda_pass_list():
    opts = CUDAOptions.parse({"num_warps": 8, "num_stages": 4}, arch=90)
    passes = gpu_passes(CudaTarget(90), opts)
    gir = one(passes, ConvertToGIR)
    assert (gir.num_warps, gir.warp_size, gir.target) == (8, 32, "cuda:90")
    dot = one(passes, AccelerateDot)
    assert (dot.arch, dot.num_warps, dot.dot_layouts) == (90, 8, None)
    sp = one(passes, SoftwarePipeline)
    assert (sp.num_stages, sp.shared_limit, sp.async_copies, sp.two_blocks) == (4, 0, True, 0)
    four = one(gpu_passes(CudaTarget(90), opts.replace(num_warps=4)), SoftwarePipeline)
    assert four.two_blocks == (232448 - 1024) // 2  # two blocks of 4 warps: half the SM's 228 KB, less 1 KB each
    assert passes[0].keep is device_callable
    assert gpu_passes(CudaTarget(90), opts.replace(debug=True))[0].keep is None  # checks live in the kernel's frame


def test_hip_pass_list_uses_the_targets_matrix_cores():
    target = HipTarget("gfx942")
    passes = gpu_passes(target, hip(num_warps=2))
    dot = one(passes, AccelerateDot)
    assert dot.arch == 0 and dot.dot_layouts == target.dot_layouts
    sp = one(passes, SoftwarePipeline)
    assert (sp.num_stages, sp.shared_limit, sp.async_copies, sp.two_blocks) == (2, target.arch.lds_bytes, False, 0)
    gir = one(passes, ConvertToGIR)
    assert (gir.num_warps, gir.warp_size, gir.target) == (2, 64, "")
    assert passes[0].keep is None


def test_pass_list_takes_no_architecture_number():
    import inspect
    assert list(inspect.signature(gpu_passes).parameters) == ["target", "options"]


def test_tilec_opt_hands_the_targets_options_to_its_passes():
    from tilec.tools.opt import target_setting
    setting = target_setting("cuda:90")
    typed = setting.options({"num_warps": 8, "num_stages": 2, "warp_size": 32, "arch": 90})
    assert typed == CUDAOptions.parse({"num_warps": 8, "num_stages": 2}, arch=90)
    assert one(setting.passes({"num_warps": 8, "num_stages": 2}), ConvertToGIR).num_warps == 8
