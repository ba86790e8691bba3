"""Runs the stages: frontend -> tir passes -> the backend's stages; keeps every stage's text in ``asm``."""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import threading
import time

from . import cache, stage_files
from .errors import BackendError
from .ir.core import IRError, Operation
from .passes.pointer_origins import written_params
from .targets.entry import entries
from .targets.grid import SINGLE, CheckedGrid, checked_grid, normalize_grid
from .targets.options import as_dict
from .compiler import ASTSource, Target, get_backend
from .version import __version__
from .targets.debug_record import CheckedLauncher
from .ir.printer import print_ir
from .ir.parser import IRParseError, parse_module
from .ir.verifier import verify
from .passes.manager import debug_variables_set
from .passes import PassManager, tir_pipeline
from .passes.debug_checks import DebugChecks

#: held while a compiled kernel loads its launcher (loading is rare; a lock per kernel would buy nothing)
_LOADING = threading.RLock()


class Metadata(dict):
    """The metadata dict, also readable as attributes (``compiled.metadata.shared``) as Triton scripts expect."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Asm(dict):
    """``asm[stage]`` texts. A key no stage made may be one the backend derives from them when first read
    (``backend.derived_asm(name, asm)``; CUDA: ``sass`` from the cubin), so compiles never pay for texts that
    nobody reads. As in Triton, such a key is not ``in`` the dict until it has been read. Triton's names for the
    tile IR stages read tilec's: ``ttir`` is ``tir``, ``ttgir`` is ``gir`` (tilec's own spelling of the ops)."""

    ALIASES = {"ttir": "tir", "ttgir": "gir"}

    def __init__(self, texts, derive=None):
        super().__init__(texts)
        self._derive = derive

    def __missing__(self, key):
        alias = self.ALIASES.get(key)
        if alias is not None and dict.__contains__(self, alias):
            return dict.__getitem__(self, alias)
        text = self._derive(key, self) if self._derive is not None else None
        if text is None:
            raise KeyError(key)
        self[key] = text
        return text


class CompiledKernel:
    """A compiled specialisation: ``asm[stage]`` texts, ``metadata``, and ``run(grid, args)``.

    ``kernel[grid](*args)`` also works, with either the runtime arguments or every parameter's value
    (constexprs included, which are then dropped), like Triton's compiled kernels."""

    def __init__(self, name: str, target: Target, asm: dict, metadata: dict, backend):
        self.name = name
        self.target = target
        self.asm = Asm(asm, getattr(backend, "derived_asm", None))
        self.metadata = Metadata(metadata)
        self.metadata.setdefault("shared", 0)
        self._backend = backend
        self._launcher = None
        self._last_grid = None

    @property
    def n_regs(self) -> int:
        return self.metadata.get("num_regs", 0) or 0

    @property
    def n_spills(self) -> int:
        return self.metadata.get("spill_stores", 0) or 0

    def _init_handles(self):
        """Load the kernel now (Triton scripts call this before reading ``n_regs``)."""
        self.launcher  # noqa: B018

    def __getitem__(self, grid):
        last = self._last_grid
        if last is not None and last[0] is grid:  # a loop launching with the same grid object
            return last[1]
        launch = self._launch_for(grid)
        self._last_grid = (grid, launch)
        return launch

    def _launch_for(self, grid):
        """``kernel[grid]``: for a grid of plain ints and a launcher that knows its argument count (the CPU's), the
        kernel's launch entry itself (``targets/entry.py``; the grid checked once here, where Triton loads the
        kernel too); otherwise a function that checks the grid at each call."""
        g = checked_grid(grid)
        count = None
        if type(g) is CheckedGrid:
            try:
                count = getattr(self.launcher, "nargs", None)
            except Exception:  # noqa: BLE001  (a kernel that does not load says so when launched, as before)
                count = None
        if count is not None:
            single, any_grid = entries(self.launcher, count, loose=self._launch_list)
            return single if g is SINGLE else functools.partial(any_grid, g)
        name = self.name

        def launch(*args):
            g = normalize_grid(grid, name)
            return self._launch_list(g, args) if g is not None else None
        return launch

    def _launch_list(self, grid, args):
        """Launch with the runtime arguments, or with every parameter's value (the constexprs are dropped)."""
        runtime = self.metadata.get("runtime_params")
        if runtime is not None and len(args) == self.metadata.get("num_params", -1) != len(runtime):
            args = [args[i] for i in runtime]
        return self.launcher(grid, list(args))

    @property
    def launcher(self):
        if self._launcher is None:
            with _LOADING:  # once: threads that first launch a kernel together must not each load their own
                if self._launcher is None:
                    loaded = self._backend.load(self.asm, self.metadata)
                    if "debug_checks" in self.metadata:
                        loaded = CheckedLauncher(loaded, self.metadata)
                    self._launcher = loaded
        return self._launcher

    def run(self, grid, args):
        """Launch over ``grid`` (1-3 ints) with the runtime arguments in parameter order."""
        g = normalize_grid(grid, self.name)
        return self.launcher(g, args) if g is not None else None

    def __repr__(self):
        return f"<CompiledKernel {self.name} for {self.target}: {', '.join(self.asm)}>"


def _canonical(v):
    if isinstance(v, dict):
        return {str(k): _canonical(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if isinstance(v, (list, tuple)):
        return [_canonical(x) for x in v]
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return repr(v)


@functools.lru_cache(maxsize=None)
def compiler_hash() -> str:
    """Hash of tilec's own source, so an edited compiler never reuses kernels cached by an older one."""
    root = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256(__version__.encode())
    for d, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".py"):
                with open(os.path.join(d, f), "rb") as fh:
                    h.update(f.encode() + b"\0" + fh.read())
    return h.hexdigest()


def cache_key(src: ASTSource, target: Target, options) -> str:
    """The compiled kernel's key: the function, its specialisation, the target and every field of the options
    (a backend's :class:`~tilec.targets.options.Options`, or the dict a backend from outside keeps them in)."""
    fn_key = getattr(src.fn, "cache_key", None) or repr(src.fn)
    payload = json.dumps(_canonical({
        "fn": fn_key, "signature": src.signature, "constexprs": src.constexprs, "attrs": src.attrs,
        "target": [target.backend, target.arch, target.warp_size], "options": as_dict(options),
        "compiler": compiler_hash(),
    }), sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def _text(artifact):
    if isinstance(artifact, (str, bytes, bytearray)):
        return artifact
    if hasattr(artifact, "stage_text"):  # an artifact that is not IR says what its stage shows
        return artifact.stage_text()
    return print_ir(artifact)


def _parse_stage(text: str, stage: str, overrides):
    try:
        module = parse_module(text, f"<{stage} override of {overrides.kernel}>")
        if stage == "tir":
            verify(module)
    except (IRParseError, IRError) as e:
        raise BackendError(f"the {stage} override of {overrides.kernel} [{overrides.variant}] does not parse: {e}") \
            from None
    if not any(f.attrs.get("kernel") for f in module.funcs):
        raise BackendError(f"the {stage} override of {overrides.kernel} has no kernel function")
    return module


_said_debugging: set = set()


def _debugging() -> bool:
    """A debug variable is set (``passes/manager.py: DEBUG_VARIABLES``): compiles skip the on-disk cache, so that
    what the variable asks for happens; said once per set of variables."""
    names = debug_variables_set()
    if not names:
        return False
    key = tuple(names)
    if key not in _said_debugging:
        _said_debugging.add(key)
        sys.stderr.write(f"tilec: {', '.join(names)} {'is' if len(names) == 1 else 'are'} set: kernels compile "
                         "afresh instead of loading from the kernel cache\n")
    return True


# Functions called with (src, target, options, kernel) after every compile or cache hit (test harnesses that
# re-compile what a run compiled for other targets, tools that collect kernels).
COMPILE_OBSERVERS: list = []


def compile_source(src: ASTSource, target: Target, options: dict) -> CompiledKernel:
    kernel = _compile_source(src, target, options)
    for observe in COMPILE_OBSERVERS:
        observe(src, target, options, kernel)
    return kernel


def _compile_source(src: ASTSource, target: Target, options: dict) -> CompiledKernel:
    options = dict(options)
    arch = options.pop("arch", None) or os.environ.get("TRITON_OVERRIDE_ARCH")
    if arch and target.backend != "cpu":  # a launch's ``arch=`` (Triton's) compiles for that architecture
        target = Target(target.backend, arch, target.warp_size)
    backend = get_backend(target)
    ir_override = options.pop("ir_override", None)
    opts = backend.parse_options(options)
    key = cache_key(src, target, dict(as_dict(opts), ir_override=stage_files.ir_override_hash(ir_override))
                    if ir_override is not None else opts)
    variant = key[:12]
    use_cache = cache.enabled() and not stage_files.variant_has_overrides(variant) and not _debugging()
    if use_cache:
        hit = cache.load(key)
        if hit is not None:
            asm, meta = hit
            if stage_files.dump_enabled():
                stage_files.dump_stages(meta["name"], variant, asm)
            return CompiledKernel(meta["name"], target, asm, meta, backend)
        try:
            return _build(src, target, backend, opts, key, ir_override, use_cache)
        finally:
            cache.abandon(key)  # a lease on a remote entry is given up once stored, or when nothing is
    return _build(src, target, backend, opts, key, ir_override, use_cache)


def _build(src: ASTSource, target: Target, backend, opts, key: str, ir_override, use_cache: bool):
    """Compile a variant that no cache level had (stored there when ``use_cache``). ``opts``: what the backend's
    ``parse_options`` made; the frontend and the metadata get it as a dict, the passes and stages as it is."""
    variant = key[:12]
    t0 = time.perf_counter()
    fields = as_dict(opts)
    # the backend's say in how the frontend composes some functions (``frontend_options``: e.g. sort as a network)
    module = src.make_ir(dict(fields, **getattr(backend, "frontend_options", {})))
    kernel = next(f for f in module.funcs if f.attrs.get("kernel"))
    name = kernel.sym_name
    metadata = {"name": name, "target": [target.backend, target.arch, target.warp_size], "options": fields,
                "version": __version__, "hash": key}
    constexprs = getattr(src, "constexprs", None)
    if isinstance(constexprs, dict):  # the int ones: tile sizes that resource errors can name
        metadata["constexprs"] = {str(k): v for k, v in constexprs.items() if type(v) is int}
    params = getattr(src.fn, "params", None)
    if params is not None:
        metadata["num_params"] = len(params)
        metadata["runtime_params"] = [i for i, p in enumerate(params) if not p.is_constexpr]
    overrides = stage_files.Overrides(name, variant, ir_override)
    pm = PassManager(name, variant=variant, options=opts)
    passes = tir_pipeline()
    checks = None
    # after inlining, so every access is traced to the kernel's own arguments; ``bounds_checks=False`` keeps a debug
    # build's asserts in their plain form, for callers that pass no extents (the AOT C entry points)
    if fields.get("debug") and fields.get("bounds_checks", True):
        checks = DebugChecks()
        passes.insert(1, checks)
    pm.run(module, passes)
    asm = {"tir": _text(module)}
    replaced = overrides.take("tir", asm["tir"]) if overrides else None
    if replaced is not None:
        module, asm["tir"] = _parse_stage(replaced, "tir", overrides), replaced
        kernel = next(f for f in module.funcs if f.attrs.get("kernel"))
    metadata["written_params"] = written_params(kernel)
    if checks is not None:
        metadata["debug_checks"] = {"sites": checks.sites, "pointer_params": checks.pointer_params}
    backend_passes = backend.passes(opts) if hasattr(backend, "passes") else []  # optional in the interface
    if backend_passes:  # the same manager: dumps keep numbering, break/print filters apply alike
        pm.run(module, backend_passes, final_verifier=getattr(backend, "verifier", None))
    artifact = module
    stage_times = []
    for stage, fn in backend.stages(opts):
        ts = time.perf_counter()
        out = fn(artifact, metadata)
        text = _text(out)
        stage_times.append((stage, time.perf_counter() - ts))
        replaced = overrides.take(stage, text) if overrides else None
        if replaced is not None:
            if isinstance(out, Operation):  # IR: parsed back, and the stage redone on it (its metadata)
                out = fn(_parse_stage(replaced, stage, overrides), metadata)
            else:
                out = replaced
            text = replaced
        artifact = out
        asm[stage] = text
    metadata["compile_time_s"] = round(time.perf_counter() - t0, 4)
    if overrides.applied:
        metadata["override"] = overrides.applied
    if stage_files.dump_enabled() or pm.dump_dir:
        stage_files.dump_stages(name, variant, asm)
    if pm.dump:  # TILEC_DUMP_IR: the backend's stages after the passes (the CPU lowering's plan included)
        for stage, text in asm.items():
            if stage != "tir" and isinstance(text, str):
                sys.stderr.write(f"// -----// stage {stage} on {name} [{variant}] //----- //\n{text}\n")
    if os.environ.get("TILEC_PASS_TIMING", "") not in ("", "0"):
        sys.stderr.write(f"// -----// pass timing on {name} [{variant}] //----- //\n"
                         + pm.report(stage_times) + "\n")
    if use_cache and not overrides:
        cache.store(key, name, asm, metadata)
    return CompiledKernel(name, target, asm, metadata, backend)
