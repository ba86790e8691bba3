"""The generic f32 math library (``tilec/gpu/lowering/mathlib32.py``) compiled for the host CPU, so its formulas
can be measured without a GPU: each function becomes ``void f(float *x, [float *y,] float *out, i64 n)``, a loop
over arrays, JIT-compiled with llvmlite. The vendor primitives are host stand-ins: ``llvm.exp2.f32`` exactly, or
an emulation of NVIDIA's ``ex2.approx.ftz`` (2 ulp off either way, subnormal inputs and results flushed), so the
CUDA composition is measured with a worst-case hardware approximation under it."""
from __future__ import annotations

import ctypes
import dataclasses

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from tilec.codegen.intrinsics import call
from tilec.gpu.lowering import mathlib32
from tilec.gpu.lowering.types import F32, I32

I64 = ir.IntType(64)
PTR = ir.PointerType()


def exp2_exact(b, x):
    return call(b, "llvm.exp2.f32", F32, [x])


def ex2_approx_emulated(b, x):
    """llvm.exp2 times (1 +- 2**-22) (the sign from x's last bit), with f32 flush-to-zero on input and output."""
    tiny = lambda v: b.fcmp_ordered("<", call(b, "llvm.fabs.f32", F32, [v]), ir.Constant(F32, 2.0 ** -126))  # noqa
    x = b.select(tiny(x), ir.Constant(F32, 0.0), x)
    odd = b.trunc(b.bitcast(x, I32), ir.IntType(1))
    r = exp2_exact(b, x)
    off = b.fmul(r, b.select(odd, ir.Constant(F32, 1 + 2.0 ** -22), ir.Constant(F32, 1 - 2.0 ** -22)))
    return b.select(tiny(r), ir.Constant(F32, 0.0), off)


def ex2_full_emulated(b, x):
    """llvm.exp2 times (1 +- 2**-22) (the sign from x's last bit), subnormal results kept (``ex2.approx.f32``)."""
    odd = b.trunc(b.bitcast(x, I32), ir.IntType(1))
    r = exp2_exact(b, x)
    return b.fmul(r, b.select(odd, ir.Constant(F32, 1 + 2.0 ** -22), ir.Constant(F32, 1 - 2.0 ** -22)))


def cuda_like():
    """The CUDA target's primitives with the emulated ``ex2.approx`` (ftz and not) and the table in host memory."""
    from tilec.targets.cuda import nvvm_math
    return dataclasses.replace(nvvm_math.PRIMITIVES, exp2_reduced=ex2_approx_emulated, exp2=ex2_approx_emulated,
                               exp2_full=ex2_full_emulated, table_address_space=0)


def exact():
    return mathlib32.F32Primitives(exp2_reduced=exp2_exact, exp2=exp2_exact, exp2_full=exp2_exact)


def exact_reduced_only():
    """Without a full-range 2**x: exp from the reduced argument and an exact scaling (``exp_with``)."""
    return mathlib32.F32Primitives(exp2_reduced=exp2_exact, exp2=exp2_exact)


_engines = []


def compile_fn(name: str, primitives, nargs: int = 1):
    """A numpy-vectorised host version of f32 ``name`` (``pow``/``atan2`` take two arrays)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    lib = mathlib32.library("host", primitives)
    body = {"pow": lib.pow_, "atan2": lib.atan2}.get(name) or (lambda b, x: lib.unary(b, name, x))
    m = ir.Module("m")
    m.triple = llvm.get_process_triple()
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [PTR] * (nargs + 1) + [I64]), "f")
    *ins, out, n = fn.args
    entry, loop, done = fn.append_basic_block("entry"), fn.append_basic_block("loop"), fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(I64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    args = [b.load(b.gep(p, [i], source_etype=F32), typ=F32) for p in ins]
    b.store(body(b, *args), b.gep(out, [i], source_etype=F32))
    nxt = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
    b.ret_void()
    mod = llvm.parse_assembly(str(m))
    mod.verify()
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    _engines.append(engine)
    cfn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (nargs + 1), ctypes.c_int64)(engine.get_function_address("f"))

    def run(*xs):
        xs = [np.ascontiguousarray(x, dtype=np.float32) for x in np.broadcast_arrays(*map(np.atleast_1d, xs))]
        out = np.empty_like(xs[0])
        cfn(*[x.ctypes.data for x in xs], out.ctypes.data, out.size)
        return out
    run.engine = engine
    return run


def ulps(got, want):
    """|got - want| in units of the f32 spacing at ``want`` (a float64 reference); subnormal spacing below 2**-126."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    with np.errstate(all="ignore"):
        sp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
        return np.abs(got - want) / sp
