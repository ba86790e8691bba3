"""The generic GPU lowering: gir (tir with layouts, after the GPU passes) -> LLVM IR for any vendor.

A lowered tile is a Python list of LLVM values, one per register of its layout, in register order (the linear
layout's register index); a scalar is one LLVM value. Elementwise ops map over the lists; ops that move data
between registers or threads (broadcast, expand_dims, convert_layout, trans, reshape, reduce, dot) use the
linear-layout helpers of :mod:`.layouts`; memory ops use the axis analysis for vector widths. Structured control
flow becomes basic blocks with one phi per carried register. Everything a vendor decides comes from a
:class:`tilec.gpu.target.GpuTarget`.

Files: ``function.py`` (per-kernel state), ``registry.py`` (op class -> lowering), one file per op family
(``elementwise``, ``inline_asm``, ``movement``, ``memory``, ``shared``, ``reduce``, ``dot``, ``control``, ``debug``), ``layouts.py``
(thread coordinates, register remapping, shared-memory shuffles), ``shuffle.py`` (lane shuffles of any scalar
through a vendor's 32-bit one), ``budget.py`` (the unrolled code's size,
refused past its limits before lowering), ``types.py`` + ``scalar.py`` (the GPU register
model: LLVM types of tir types, scalar op semantics), ``mathlib*.py`` + ``trig32``/``pow32``/``f32ir`` (the math
library a target's ``math`` is built from).
"""
from __future__ import annotations

import re

import llvmlite.ir as ir

from ...codegen import debuginfo
from . import budget, control, debug, dot, elementwise, gather, inline_asm, memory, movement, reduce, shared, tma  # noqa: F401  (they register lowerings)
from .function import FuncLowering, declare_device_function
from .types import FP8_ENCODER
from ...targets.options import num_warps_of


def lower_module(module, options, target) -> ir.Module:
    """Lower every function of a gir module for ``target`` (kernels as entry points, the functions they call as
    device functions) under the compile's ``options`` (a backend's :class:`~tilec.targets.options.Options`);
    returns the llvmlite module."""
    m = ir.Module(name="tilec")
    m.triple = target.triple
    m.data_layout = target.data_layout
    debug = debuginfo.DebugInfo(m, module.funcs[0].loc if module.funcs else None, dwarf_version=None,
                                kind="DebugDirectivesOnly") if debuginfo.enabled() and module.funcs else None
    device = {f.sym_name: declare_device_function(m, f) for f in module.funcs if not f.attrs.get("kernel", False)}
    token = FP8_ENCODER.set(target)
    try:
        for f in module.funcs:
            budget.check(f, num_warps_of(f, options), target.warp_size)
            FuncLowering(m, f, options, target, debug).run(device.get(f.sym_name))
    finally:
        FP8_ENCODER.reset(token)
    target.finish_module(m)
    return m


def lower_module_text(module, options, target) -> str:
    """LLVM IR text of a gir module, each kernel carrying the target's attributes for its block size (llvmlite
    cannot attach string attributes itself, so they are added to the text)."""
    text = str(lower_module(module, options, target))
    groups = []
    for i, f in enumerate(module.funcs):
        threads = target.warp_size * num_warps_of(f, options)
        attrs = target.kernel_attributes(threads, f, options)
        if not attrs:
            continue
        pat = re.compile(r'^(define ' + re.escape(target.kernel_calling_convention) + r' void @"?'
                         + re.escape(f.sym_name) + r'"?\(.*\))( !dbg !\d+)?\s*$', re.M)
        text, k = pat.subn(lambda mm, i=i: f"{mm.group(1)} #{i}{mm.group(2) or ''}", text, count=1)
        if k:
            body = " ".join(f'"{key}"="{val}"' for key, val in attrs.items())
            groups.append(f"attributes #{i} = {{ {body} }}")
    return text + "\n" + "\n".join(groups) + "\n"


__all__ = ["lower_module", "lower_module_text", "FuncLowering"]
