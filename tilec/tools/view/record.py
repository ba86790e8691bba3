"""Recording what a compile does, for the viewer: per variant, the IR (with locations) before the first pass and
after every pass, and every stage's text. Variants are named as in the dumps: kernel and the compile hash's first
12 digits. Cache hits are not compiles, so recording turns the kernel cache off for its duration."""
from __future__ import annotations

import atexit
import os
from contextlib import contextmanager
from dataclasses import dataclass, field

from ... import pipeline
from ...ir.printer import print_ir
from ...passes import manager
from .page import write_pages


@dataclass
class Variant:
    kernel: str
    variant: str
    passes: list = field(default_factory=list)    # (label, text with locations)
    stages: dict = field(default_factory=dict)    # stage -> text (backend stages; binaries left out)
    target: str = ""
    source_file: str | None = None


class Recorder:
    def __init__(self):
        self.variants: dict = {}

    def _get(self, kernel, variant) -> Variant:
        key = (kernel, variant)
        if key not in self.variants:
            self.variants[key] = Variant(kernel, variant)
        return self.variants[key]

    def on_pass(self, pm, label, module):
        v = self._get(pm.kernel_name, pm.variant or "")
        v.passes.append((label, print_ir(module, locations=True)))
        if v.source_file is None:
            funcs = [f for f in getattr(module, "funcs", []) if f.attrs.get("kernel")]
            if funcs and funcs[0].loc is not None:
                v.source_file = funcs[0].loc.file

    def on_compile(self, src, target, options, kernel):
        v = self._get(kernel.name, (kernel.metadata.get("hash") or "")[:12])
        v.target = str(target)
        for stage, text in kernel.asm.items():
            if isinstance(text, str) and stage != "tir":
                v.stages[stage] = text

    def complete(self) -> list:
        """Variants that were compiled here (cache hits have no passes and are left out)."""
        return [v for v in self.variants.values() if v.passes]


@contextmanager
def recording():
    """A Recorder that sees every compile while the block runs (the kernel cache is bypassed meanwhile)."""
    rec = Recorder()
    old = os.environ.get("TILEC_ALWAYS_COMPILE")
    os.environ["TILEC_ALWAYS_COMPILE"] = "1"
    manager.PASS_OBSERVERS.append(rec.on_pass)
    pipeline.COMPILE_OBSERVERS.append(rec.on_compile)
    try:
        yield rec
    finally:
        manager.PASS_OBSERVERS.remove(rec.on_pass)
        pipeline.COMPILE_OBSERVERS.remove(rec.on_compile)
        if old is None:
            os.environ.pop("TILEC_ALWAYS_COMPILE", None)
        else:
            os.environ["TILEC_ALWAYS_COMPILE"] = old


def install_at_exit(out_dir: str):
    """``TILEC_DUMP_HTML=DIR``: record this whole process and write the pages when it exits."""
    cm = recording()
    rec = cm.__enter__()

    def write():
        cm.__exit__(None, None, None)
        import sys
        paths = write_pages(rec.complete(), out_dir)
        if paths:
            sys.stderr.write(f"tilec: {len(paths) - 1} kernel page(s) in {out_dir} (index.html)\n")
    atexit.register(write)
