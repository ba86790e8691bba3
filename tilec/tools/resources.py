"""What a compiled kernel uses, as a table: one place that knows what each backend's ``metadata`` means.

The same key means different things per backend, so units are stated: on CUDA the numbers are ptxas's report
(registers per thread, spill and stack bytes per thread, shared memory per block); on the CPU they are read from
the host assembly (``targets/cpu/resources.py``: architectural registers the code touches, spill instructions,
the stack frame) plus the scratch area big tiles live in; on HIP they come from the code object's metadata note
(VGPRs/AGPRs per thread, SGPRs per wave, spilled VGPRs as bytes per thread, dynamic LDS per work-group, scratch
per thread, the register-limited occupancy). A value the metadata lacks shows as ``-`` (a CUDA compile without ptxas has no
register count).
"""
from __future__ import annotations


def _bytes(n) -> str:
    return "-" if n is None else f"{n} bytes"


def _specialisation(src) -> str:
    """``x_ptr: *fp32:16, n: i32; BLOCK=1024``: the runtime parameters with what was assumed of them (``:16``
    divisible by 16, ``:1`` equal to 1), then the constexprs."""
    sig = getattr(src, "signature", None)
    attrs = getattr(src, "attrs", None) or {}
    if isinstance(sig, dict):
        parts = []
        for name, ty in sig.items():
            if ty == "constexpr":
                continue
            a = attrs.get(name) or {}
            suffix = ":1" if a.get("equal_to_1") else f":{a['divisibility']}" if a.get("divisibility") else ""
            parts.append(f"{name}: {ty}{suffix}")
        sig = ", ".join(parts)
    consts = ", ".join(f"{k}={v}" for k, v in (getattr(src, "constexprs", None) or {}).items())
    return "; ".join(x for x in (sig, consts) if x)


def rows(kernel, src=None) -> list[tuple[str, str]]:
    """(label, value) pairs for a ``CompiledKernel``: backend, registers, spills, shared memory, local/stack,
    num_warps, num_stages (and what else its backend reports)."""
    md = kernel.metadata
    backend, arch, _ = (list(md.get("target") or [None, None, None]) + [None] * 3)[:3]
    options = md.get("options") or {}
    out = []
    if src is not None and _specialisation(src):
        out.append(("specialisation", _specialisation(src)))
    if backend == "cuda":
        out += [
            ("backend", f"cuda sm_{md.get('arch', arch)}" + ("" if "cubin" in kernel.asm else " (PTX only: no ptxas)")),
            ("registers", "-" if md.get("num_regs") is None else f"{md['num_regs']} per thread"),
            ("spills", "-" if md.get("spill_stores") is None else
             f"{md['spill_stores']} bytes stored, {md.get('spill_loads', 0)} bytes loaded"),
            ("shared memory", _bytes(md.get("shared"))),
            ("local/stack", "-" if md.get("stack_bytes") is None else f"{md['stack_bytes']} bytes stack frame"),
        ]
    elif backend == "hip":
        out += [
            ("backend", f"hip {md.get('arch', arch)} (wave{md.get('warp_size', '?')})"),
            ("registers", "-" if md.get("num_vgprs") is None else
             f"{md['num_vgprs']} VGPRs, {md.get('num_agprs', 0)} AGPRs per thread, {md.get('num_sgprs', '-')} SGPRs "
             f"per wave"),
            ("spills", "-" if md.get("spill_stores") is None else
             f"{md['spill_stores']} bytes stored ({md.get('vgpr_spills', 0)} VGPRs), "
             f"{md.get('sgpr_spills', 0)} SGPRs to VGPR lanes"),
            ("shared memory", _bytes(md.get("shared")) + " LDS"),
            ("local/stack", "-" if md.get("stack_bytes") is None else f"{md['stack_bytes']} bytes scratch per thread"),
            ("occupancy", "-" if md.get("occupancy") is None else f"{md['occupancy']} waves per SIMD (registers)"),
        ]
    else:
        out += [
            ("backend", " ".join(str(x) for x in (backend, md.get("cpu") or arch) if x)),
            ("registers", "-" if md.get("num_regs") is None else f"{md['num_regs']} (registers touched)"),
            ("spills", "-" if md.get("spill_stores") is None else f"{md['spill_stores']} spill stores"),
            ("shared memory", "- (none on this backend; metadata.shared is the per-program scratch, "
                              f"{_bytes(md.get('shared'))})" if backend == "cpu" else _bytes(md.get("shared"))),
            ("local/stack", f"{_bytes(md.get('stack_bytes'))} stack frame, {_bytes(md.get('scratch_size', 0))} "
                            "tile scratch" if backend == "cpu" else _bytes(md.get("stack_bytes"))),
        ]
    out += [("num_warps", str(md.get("num_warps", options.get("num_warps", "-")))),
            ("num_stages", str(options.get("num_stages", "-")))]
    if md.get("vector_bytes"):
        out.append(("vectors", f"{md['vector_bytes']}-byte registers"))
    if md.get("compile_time_s") is not None:
        out.append(("compile time", f"{md['compile_time_s'] * 1e3:.0f} ms"))
    return out


def table(kernel, src=None, title: str | None = None) -> str:
    """``rows`` under a title line (the kernel's name unless given), labels aligned."""
    body = rows(kernel, src)
    width = max(len(label) for label, _ in body)
    head = title or kernel.name
    lines = [head, "-" * len(head)] + [f"  {label:<{width}}  {value}" for label, value in body]
    return "\n".join(lines) + "\n"
