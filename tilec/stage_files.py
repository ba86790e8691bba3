"""Every compile stage as a file: dump them, and compile on from an edited one (Triton's ``TRITON_KERNEL_DUMP``
/ ``TRITON_KERNEL_OVERRIDE`` / ``Config(ir_override=...)``).

- ``TILEC_KERNEL_DUMP=1`` writes ``<kernel>.<stage>`` for every stage of every compiled variant under
  ``TILEC_DUMP_DIR/<kernel>/<variant>/`` (default dump dir ``~/.cache/tilec/dump``), next to the pass-by-pass
  dumps that ``TILEC_DUMP_DIR`` writes there. ``<variant>`` is the first 12 digits of the compile's hash, the
  same in every dump, header and cache entry. Cache hits are dumped as well.
- ``TILEC_KERNEL_OVERRIDE=1`` with ``TILEC_OVERRIDE_DIR`` (default ``~/.cache/tilec/override``): a file
  ``<kernel>/<variant>/<kernel>.<stage>`` there replaces that stage when its text differs from what the compiler
  made, and the compile goes on from it. Copy a dump folder over, edit one file: unedited files change nothing.
  Only the earliest edited stage applies (later files were made from the unedited one). Each applied override
  is named on stderr. Variants with override files bypass the kernel cache.
- ``Config(ir_override="k.llir")`` (or the launch option ``ir_override=``): one file, its stage named by its
  extension, always applied.

Stages that can be replaced: ``tir`` and ``gir`` (parsed back into IR), ``llir`` and ``ptx`` (text), ``cubin``
(bytes). The CPU's ``asm`` is not: the CPU JIT runs from ``llir``, so an edited ``asm`` is refused rather than
silently ignored; the CPU ``plan`` is a report, not an input.
"""
from __future__ import annotations

import hashlib
import os
import sys

from .errors import BackendError

BINARY = {"cubin", "hsaco"}
TEXT = {"llir", "ptx", "amdgcn"}
IR = {"tir", "gir"}
EXTENSIONS = {".tir": "tir", ".gir": "gir", ".llir": "llir", ".ll": "llir", ".ptx": "ptx", ".cubin": "cubin"}


def _on(var: str) -> bool:
    return os.environ.get(var, "") not in ("", "0", "false", "False")


def _default(sub: str) -> str:
    return os.path.join(os.path.expanduser(os.environ.get("TILEC_CACHE_DIR", "~/.cache/tilec")), sub)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_.-" else "_" for c in name)


def dump_enabled() -> bool:
    return _on("TILEC_KERNEL_DUMP")


def dump_stages(kernel: str, variant: str, asm: dict):
    """Write every stage text of one variant (``asm``) as ``<dir>/<kernel>/<variant>/<kernel>.<stage>``."""
    d = os.path.join(os.environ.get("TILEC_DUMP_DIR") or _default("dump"), _safe(kernel), variant)
    os.makedirs(d, exist_ok=True)
    for stage, text in asm.items():
        with open(os.path.join(d, f"{_safe(kernel)}.{stage}"), "wb" if isinstance(text, (bytes, bytearray)) else "w") as f:
            f.write(text)


def _override_dir() -> str | None:
    if not _on("TILEC_KERNEL_OVERRIDE"):
        return None
    return os.environ.get("TILEC_OVERRIDE_DIR") or _default("override")


def variant_has_overrides(variant: str) -> bool:
    """Whether the override folder has files for this variant (of any kernel name): then the cache is bypassed."""
    root = _override_dir()
    if root is None or not os.path.isdir(root):
        return False
    return any(os.path.isdir(os.path.join(root, k, variant)) and os.listdir(os.path.join(root, k, variant))
               for k in os.listdir(root))


def override_stage(path) -> str:
    """The stage an ``ir_override`` file replaces, named by its extension."""
    stage = EXTENSIONS.get(os.path.splitext(str(path))[1])
    if stage is None:
        raise BackendError(f"ir_override {path!r}: the extension must name a stage ({', '.join(sorted(EXTENSIONS))})")
    return stage


def ir_override_hash(path) -> str:
    """What the cache key sees of ``ir_override``: the file's content (editing it recompiles)."""
    override_stage(path)
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        raise BackendError(f"ir_override: cannot read {path!r}: {e.strerror}") from None


class Overrides:
    """The replacement stages of one compile: from ``ir_override`` (always applied) and the override folder
    (applied when edited). ``take(stage, computed_text)`` answers the text to use instead, or None."""

    def __init__(self, kernel: str, variant: str, ir_override=None):
        self.kernel, self.variant = kernel, variant
        self.forced: dict = {}
        self.files: dict = {}
        self.applied: str | None = None
        if ir_override is not None:
            self.forced[override_stage(ir_override)] = str(ir_override)
        root = _override_dir()
        if root is not None:
            d = os.path.join(root, _safe(kernel), variant)
            if os.path.isdir(d):
                prefix = _safe(kernel) + "."
                for f in sorted(os.listdir(d)):
                    if f.startswith(prefix):
                        self.files[f[len(prefix):]] = os.path.join(d, f)

    def __bool__(self):
        return bool(self.forced or self.files)

    def take(self, stage: str, computed):
        """The replacement for ``stage`` (str, or bytes for binaries), given what the compiler made; None to keep it."""
        path, forced = self.forced.get(stage), True
        if path is None:
            path, forced = self.files.get(stage), False
        if path is None:
            return None
        binary = stage in BINARY
        try:
            with open(path, "rb" if binary else "r") as f:
                text = f.read()
        except OSError as e:
            raise BackendError(f"override of stage {stage!r}: cannot read {path}: {e.strerror}") from None
        if not forced:
            if text == computed:
                return None
            if self.applied is not None:  # made from the unedited earlier stage: stale, not an edit
                return None
        if stage not in IR | TEXT | BINARY:
            raise BackendError(f"override of stage {stage!r} ({path}): this stage cannot be replaced "
                               + ("(the CPU runs from llir: edit that)" if stage == "asm" else "(tir, gir, llir, ptx, cubin can)"))
        self.applied = stage
        sys.stderr.write(f"tilec: {self.kernel} [{self.variant}]: stage {stage} taken from {path}\n")
        return text
