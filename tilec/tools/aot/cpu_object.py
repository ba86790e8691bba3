"""``-t cpu``: a host object file and a header, callable from C with no Python and no tilec at run time.

The object holds the kernel as the JIT would run it (the optimised ``asm["llir"]``) plus one exported entry
``<func>_grid(args..., gx, gy, gz)`` that packs the arguments the way the launcher does, runs every program of
the grid on the calling thread through the worker (``targets/cpu/wrapper.py``) with a scratch area from
``aligned_alloc``, and returns 0, or 1 when a device-side assert failed (printed to stdout). Everything else in
the object is internal, so any number of kernels link into one program. The header's ``static inline <func>``
computes the grid from the ``-g`` expressions. Code is built for this machine's CPU (its vector features);
programs link with ``-lm`` (kernels may call libm).
"""
from __future__ import annotations

import llvmlite.binding as llvm
import llvmlite.ir as ir

from ...codegen import driver
from ...codegen import llvm_types as LT
from ...targets.cpu.resources import scratch_per_program
from ...targets.cpu.wrapper import WORKER, worker_type
from .spec import AOTError, KernelSpec

_C_FACING = {"ptr": LT.PTR, "i1": LT.I8, "i8": LT.I8, "u8": LT.I8, "i16": ir.IntType(16), "u16": ir.IntType(16),
             "f16": ir.IntType(16), "bf16": ir.IntType(16), "i32": LT.I32, "u32": LT.I32, "i64": LT.I64,
             "u64": LT.I64, "f32": LT.F32, "f64": LT.F64}


def _cstr(m, name, text):
    data = bytearray(text.encode() + b"\0")
    ty = ir.ArrayType(LT.I8, len(data))
    g = ir.GlobalVariable(m, ty, name=name)
    g.global_constant, g.linkage, g.initializer = True, "internal", ir.Constant(ty, data)
    return g


def _runtime_functions(m, failed):
    """``tilec_cpu_print``/``tilec_cpu_assert`` (in the JIT, callbacks into Python) over libc's printf."""
    printf = ir.Function(m, ir.FunctionType(LT.I32, [LT.PTR], var_arg=True), "printf")
    pr = ir.Function(m, ir.FunctionType(LT.VOID, [LT.PTR, LT.I32, LT.I32, LT.I32, LT.I64, LT.I32, LT.F64, LT.I64]),
                     "tilec_cpu_print")
    prefix, x, y, z, index, kind, f, i = pr.args
    b = ir.IRBuilder(pr.append_basic_block("entry"))
    fmts = {(k, idx): _cstr(m, f"tilec.aot.fmt{k}{int(idx)}",
                            "pid (%d, %d, %d)" + (" idx %lld" if idx else "") + " %s" + ("%g", "%lld", "0x%llx")[k] + "\n")
            for k in range(3) for idx in (False, True)}
    has_idx = b.icmp_signed(">=", index, LT.const(LT.I64, 0))
    for k in range(3):
        with b.if_then(b.icmp_signed("==", kind, LT.const(LT.I32, k))):
            val = f if k == 0 else i
            with b.if_else(has_idx) as (then, other):
                with then:
                    b.call(printf, [fmts[(k, True)], x, y, z, index, prefix, val])
                with other:
                    b.call(printf, [fmts[(k, False)], x, y, z, prefix, val])
    b.ret_void()
    asrt = ir.Function(m, ir.FunctionType(LT.VOID, [LT.PTR, LT.I32, LT.I32, LT.I32]), "tilec_cpu_assert")
    msg, x, y, z = asrt.args
    b = ir.IRBuilder(asrt.append_basic_block("entry"))
    fmt = _cstr(m, "tilec.aot.assert", "device-side assertion failed at pid (%d, %d, %d): %s\n")
    b.call(printf, [fmt, x, y, z, msg])
    b.store(LT.const(LT.I32, 1), failed)
    b.ret_void()


def _as_slot(b, v):
    """``v`` as the 8-byte slot the worker reads its parameter from (low bytes first, the rest zero)."""
    t = v.type
    if isinstance(t, ir.PointerType):
        return b.ptrtoint(v, LT.I64)
    if isinstance(t, (ir.FloatType, ir.DoubleType)):
        v = b.bitcast(v, ir.IntType(32 if isinstance(t, ir.FloatType) else 64))
    return b.zext(v, LT.I64) if v.type.width < 64 else v


def _entry_module(spec: KernelSpec, kinds, scratch_size: int, needs_runtime: bool) -> str:
    m = ir.Module(name="tilec_aot_entry")
    failed = ir.GlobalVariable(m, LT.I32, name="tilec.aot.failed")
    failed.linkage, failed.initializer = "internal", LT.const(LT.I32, 0)
    if needs_runtime:
        _runtime_functions(m, failed)
    worker = ir.Function(m, worker_type(), WORKER)
    alloc = ir.Function(m, ir.FunctionType(LT.PTR, [LT.I64, LT.I64]), "aligned_alloc")
    free = ir.Function(m, ir.FunctionType(LT.VOID, [LT.PTR]), "free")
    fn = ir.Function(m, ir.FunctionType(LT.I32, [_C_FACING[k] for k in kinds] + [LT.I32] * 3),
                     spec.func_name + "_grid")
    args, (gx, gy, gz) = fn.args[:len(kinds)], fn.args[len(kinds):]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    run, out = fn.append_basic_block("run"), fn.append_basic_block("empty")
    pos = [b.icmp_signed(">", g, LT.const(LT.I32, 0)) for g in (gx, gy, gz)]
    b.cbranch(b.and_(b.and_(pos[0], pos[1]), pos[2]), run, out)
    b.position_at_end(out)
    b.ret(LT.const(LT.I32, 0))
    b.position_at_end(run)
    block = b.alloca(ir.ArrayType(LT.I64, max(1, len(kinds))))
    for i, a in enumerate(args):
        b.store(_as_slot(b, a), b.gep(block, [LT.const(LT.I32, 0), LT.const(LT.I32, i)]))
    counter = b.alloca(LT.I64)
    b.store(LT.const(LT.I64, 0), counter)
    scratch = b.call(alloc, [LT.const(LT.I64, 64), LT.const(LT.I64, scratch_size)])
    nomem, go = fn.append_basic_block("nomem"), fn.append_basic_block("go")
    b.cbranch(b.icmp_unsigned("==", scratch, ir.Constant(LT.PTR, None)), nomem, go)
    b.position_at_end(nomem)
    b.ret(LT.const(LT.I32, 2))
    b.position_at_end(go)
    b.store(LT.const(LT.I32, 0), failed)
    total = b.mul(b.mul(b.zext(gx, LT.I64), b.zext(gy, LT.I64)), b.zext(gz, LT.I64))
    b.call(worker, [block, counter, total, gx, gy, gz, scratch, LT.const(LT.I64, 1), LT.const(LT.I64, 0)])
    b.call(free, [scratch])
    b.ret(b.load(failed, typ=LT.I32))
    return str(m)


def object_code(spec: KernelSpec, compiled) -> bytes:
    """The relocatable object (position independent, for any executable) of ``compiled`` for ``spec``."""
    driver.init()
    kinds = compiled.metadata["param_kinds"]
    scratch = scratch_per_program(compiled.metadata.get("scratch_size", 0))
    mod = driver.parse(compiled.asm["llir"], "LLVM IR of the kernel")
    needs_runtime = any(f.name in ("tilec_cpu_print", "tilec_cpu_assert") for f in mod.functions)
    mod.link_in(driver.parse(_entry_module(spec, kinds, scratch, needs_runtime), "AOT entry"))
    entry = spec.func_name + "_grid"
    for g in list(mod.functions) + list(mod.global_variables):
        if not g.is_declaration and g.name != entry:
            g.linkage = "internal"
    mod.verify()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                                      opt=3, reloc="pic", codemodel="default")
    try:
        return tm.emit_object(mod)
    except RuntimeError as e:
        raise AOTError(f"LLVM could not emit the object: {e}") from None


def header(spec: KernelSpec, record: str) -> str:
    params = ", ".join(f"{p.ctype} {p.name}" for p in spec.params)
    names = ", ".join(p.name for p in spec.params)
    sep = ", " if spec.params else ""
    gx, gy, gz = spec.grid
    return f"""/* {spec.func_name}: {spec.kernel_name} for the host CPU, compiled by tilec ahead of time.
   signature {spec.signature or '(none)'}; {spec.algo}
   Link {spec.out_name}.{spec.sig_hash}.o (and -lm). Returns 0, or 1 after a device-side assertion failed. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
// tilec-aot {record}

#ifdef __cplusplus
extern "C" {{
#endif
/* Runs every program of the grid (gx, gy, gz) on the calling thread. */
int32_t {spec.func_name}_grid({params}{sep}uint32_t gx, uint32_t gy, uint32_t gz);

/* The grid from the compile's -g: ({gx}, {gy}, {gz}). */
static inline int32_t {spec.func_name}({params or 'void'}) {{
  return {spec.func_name}_grid({names}{sep}(uint32_t)({gx}), (uint32_t)({gy}), (uint32_t)({gz}));
}}
#ifdef __cplusplus
}}
#endif
"""
