"""The NVIDIA backend: options (``CUDAOptions``, ``options.py``), the stages after the tir passes, and loading for
launch.

Stages (each ``fn(artifact, metadata)``):
``gir`` (the module after the GPU passes, which ``passes`` contributes to the compile's one pass pipeline), ``llir`` (NVVM LLVM IR text), ``ptx`` (text), and
``cubin`` (bytes; only when ptxas is on PATH and knows the architecture). None of them needs a GPU or a CUDA driver; ``load`` does.
``asm["sass"]`` is made only when first read (``derived_asm``), so compiles never pay for a disassembler.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import subprocess
import tempfile

from ...errors import BackendError, ConfigurationError, did_you_mean
from ...gpu.passes.verify_gir import verify_gir
from ...gpu.pipeline import FRONTEND_OPTIONS, gpu_passes, run_gpu_passes  # noqa: F401  (run_gpu_passes: for tools and tests)
from ...gpu.shared_limit import check_shared_memory
from . import ptx
from .driver import compute_capability
from .launcher import is_cuda_value, make_launcher
from ..params import param_kind
from .lower import lower_module_text
from .options import CUDAOptions
from .target import CudaTarget
from ...gpu.launch_tensormaps import launch_metadata, scratch_layout



def parse_arch(value, what: str = "arch") -> int:
    """A compute capability from ``90``, ``"90"``, ``"sm90"``, ``"sm_90"`` or ``"sm_90a"`` (Triton's spellings)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    for prefix in ("sm_", "sm", "cuda:"):
        text = text.removeprefix(prefix)
    try:
        return int(text.rstrip("a"))
    except ValueError:
        raise BackendError(f"{what} must be a compute capability such as 80, 'sm80' or 'sm_90a', got {value!r}") \
            from None


def detect_arch(default: int = 80) -> int:
    """``TILEC_CUDA_ARCH`` (e.g. ``80``: the Ampere code path on a newer GPU), else the first device's compute
    capability when a driver is usable, else ``default`` (compiling needs no GPU)."""
    forced = os.environ.get("TILEC_CUDA_ARCH")
    if forced:
        return parse_arch(forced, "TILEC_CUDA_ARCH")
    try:
        return compute_capability(0)
    except Exception:
        return default


_ENCODING = re.compile(r"\s*/\* 0x[0-9a-f]+ \*/")


def disassemble(cubin: bytes) -> str:
    """The SASS of a cubin, from ``cuobjdump -sass`` or else ``nvdisasm`` (whichever is on PATH and works: CUDA
    13's cuobjdump itself needs nvdisasm), without the instruction encodings. BackendError saying why when
    neither gives it."""
    tools = [(t, args) for t, args in (("cuobjdump", ["-sass"]), ("nvdisasm", ["-c"])) if shutil.which(t)]
    if not tools:
        raise BackendError("no SASS: neither cuobjdump nor nvdisasm is on PATH")
    failures = []
    with tempfile.TemporaryDirectory(prefix="tilec-sass-") as d:
        path = os.path.join(d, "k.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        for tool, args in tools:
            p = subprocess.run([shutil.which(tool), *args, path], capture_output=True, text=True)
            if p.returncode == 0 and p.stdout.strip():
                lines = [(x, _ENCODING.sub("", x).rstrip()) for x in p.stdout.splitlines()]
                return "\n".join(y for x, y in lines if y or not x.strip()).strip("\n") + "\n"
            failures.append(f"{tool}: {(p.stderr or p.stdout).strip() or f'exit status {p.returncode}'}")
    raise BackendError("no SASS: " + "; ".join(failures))


def _known_arch(arch) -> int:
    """``arch`` (any of :func:`parse_arch`'s spellings) as an int, refused up front unless tilec knows the
    architecture (LLVM would only warn, and ptxas refuse the PTX much later)."""
    text = str(arch).strip()
    try:
        value = parse_arch(arch)
    except BackendError:
        value = None
    if value not in ptx.KNOWN_ARCHS:
        names = [str(a) for a in ptx.KNOWN_ARCHS]
        raise ConfigurationError(f"unknown CUDA architecture {text!r}"
                                 f"{did_you_mean(text.removeprefix('sm_'), names)}; tilec compiles for compute "
                                 f"capabilities {', '.join(names)} (cuda:90, or TILEC_CUDA_ARCH=90)")
    return value


_said: set = set()


def warn_ptxas_report(metadata: dict):
    """One line on stderr when a kernel spills registers to local memory, and one when ptxas serialised its
    warpgroup dots (once per kernel variant and process; ``TILEC_SPILL_WARNING=0`` hides them): both cost much of
    a GPU kernel's speed and are otherwise only in ``metadata``."""
    if os.environ.get("TILEC_SPILL_WARNING", "1") in ("0", ""):
        return
    stores, loads = metadata.get("spill_stores") or 0, metadata.get("spill_loads") or 0
    name, arch, key = metadata.get("name", "?"), metadata.get("arch", "?"), metadata.get("hash")
    if (stores or loads) and ("spills", key) not in _said:
        _said.add(("spills", key))
        sys.stderr.write(f"tilec: kernel '{name}' spills on sm_{arch} "
                         f"({metadata.get('num_warps', '?')} warps): {metadata.get('num_regs', '?')} registers, "
                         f"{stores} bytes stored to and {loads} loaded from local memory per thread "
                         "(smaller tiles or more warps help; TILEC_SPILL_WARNING=0 hides this)\n")
    reason = metadata.get("wgmma_serialized")
    if reason and ("serial", key) not in _said:
        _said.add(("serial", key))
        sys.stderr.write(f"tilec: kernel '{name}' on sm_{arch}: ptxas made its warpgroup dots wait for each "
                         f"other, which costs much of their speed ({reason}); please report it with the kernel "
                         "(TILEC_SPILL_WARNING=0 hides this)\n")


class CUDABackend:
    name = "cuda"
    frontend_options = FRONTEND_OPTIONS

    def __init__(self, target):
        self.target = target
        arch = target.arch if target.arch is not None else detect_arch()
        self.arch = _known_arch(arch)
        self.warp_size = target.warp_size if target.warp_size and target.warp_size > 1 else 32
        if self.warp_size != 32:
            raise BackendError(f"CUDA warps have 32 lanes, not {self.warp_size}")

    # -- options ---------------------------------------------------------------------------------------
    def parse_options(self, options: dict) -> CUDAOptions:
        """The compile's options (``cuda/options.py``), for this backend's architecture."""
        return CUDAOptions.parse(options, arch=self.arch)

    # -- passes and stages ---------------------------------------------------------------------------------
    @property
    def pass_defaults(self) -> dict:
        """Options tools give lone passes (``tilec-opt --target cuda:90 -p convert-to-gir``), as the pipeline does."""
        return {"target": f"cuda:{self.arch}"}

    def gpu_target(self) -> CudaTarget:
        return CudaTarget(self.arch)

    def passes(self, options: CUDAOptions):
        """The GPU passes, run after the tir passes by the compile's PassManager; on sm_90 the tensor
        descriptor loads the copy engine can move stay whole (``CudaTarget.keeps_descriptor``)."""
        return gpu_passes(self.gpu_target(), options)

    verifier = staticmethod(verify_gir)

    def stages(self, options: CUDAOptions):
        out = [("gir", lambda m, md: self.make_gir(m, md, options)),
               ("llir", lambda m, md: self.make_llir(m, md, options)),
               ("ptx", lambda s, md: self.make_ptx(s, md, options))]
        if ptx.ptxas_knows(self.arch):
            out.append(("cubin", lambda s, md: self.make_cubin(s, md, options)))
        return out

    def make_gir(self, module, metadata, options):
        """The module after the GPU passes; records what the launch needs."""
        kernel = next((f for f in module.funcs if f.attrs.get("kernel")), None)
        metadata["shared"] = int(kernel.attrs.get("shared", 0)) if kernel is not None else 0
        metadata["num_warps"] = options.num_warps
        metadata["arch"] = self.arch
        if kernel is not None:
            check_shared_memory(kernel, metadata, self.gpu_target())
            metadata["param_kinds"] = [param_kind(t) for t in kernel.function_type.inputs]
            # tensor copy descriptors live in global scratch the launch provides (128 bytes each): those the
            # launch writes in a header, the others per program (``gpu/launch_tensormaps.py``)
            lay = scratch_layout(kernel)
            metadata["global_scratch_size"] = lay.per_program  # bytes per program (the header comes first)
            metadata["global_scratch_align"] = 128
            metadata["launch_tensormaps"] = launch_metadata(lay)
        return module

    def make_llir(self, module, metadata, options):
        return lower_module_text(module, options)

    def make_ptx(self, llir, metadata, options):
        metadata["ptx_version"] = max(ptx.ptx_version(self.arch), ptx.features_version(llir))
        return ptx.llir_to_ptx(llir, self.arch)

    def make_cubin(self, ptx_text, metadata, options):
        cubin = ptx.assemble(ptx_text, self.arch, metadata)
        warn_ptxas_report(metadata)
        return cubin

    def derived_asm(self, name: str, asm: dict):
        """Texts made on first read instead of at every compile: ``sass``, the cubin disassembled."""
        if name == "sass" and "cubin" in asm:
            return disassemble(asm["cubin"])
        return None

    # -- launch ------------------------------------------------------------------------------------------
    def load(self, asm: dict, metadata: dict):
        warn_ptxas_report(metadata)  # a kernel from the cache says it too, once per process
        return make_launcher(asm, metadata)

    @staticmethod
    def convert_arg(value):
        """Arguments go to the launcher unchanged: it reads pointers from tensors/arrays per launch."""
        return value

    @staticmethod
    def arg_kind(value) -> str | None:
        """'cuda' for values living on a CUDA device (torch CUDA tensors, ``__cuda_array_interface__``,
        tilec.cuda arrays, DLPack CUDA tensors); None otherwise."""
        return "cuda" if is_cuda_value(value) else None
