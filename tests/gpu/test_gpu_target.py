"""The generic GPU lowering names no vendor and works for any GpuTarget: a made-up target with 64-lane warps
lowers reductions, scans and softmax to LLVM IR that LLVM parses and verifies."""
import os
import re

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np
import pytest

from gpu_cases import CASES
from test_gpu_passes import tir
from tilec.gpu.lowering import lower_module_text
from tilec.gpu.pipeline import run_gpu_passes
from tilec.gpu.target import GpuTarget
from tilec.targets.options import Options

GPU_DIR = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "tilec", "gpu")
VENDOR_WORDS = re.compile(r"cuda|nvvm|nvptx|nvidia|\bptx\b|ptx_kernel|\bsm_?\d|amdgpu|amdgcn|\bhip\b|rocm|gfx\d",
                          re.I)


def test_tilec_gpu_names_no_vendor():
    hits = []
    for d, _, files in os.walk(GPU_DIR):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                for i, line in enumerate(open(path), 1):
                    if VENDOR_WORDS.search(line):
                        hits.append(f"{os.path.relpath(path, GPU_DIR)}:{i}: {line.strip()}")
    assert hits == []


class Wave64(GpuTarget):
    """A target made of plain LLVM and declared helper functions: enough for the verifier."""
    name = "wave64"
    warp_size = 64
    kernel_calling_convention = "ccc"

    class math:
        @staticmethod
        def unary(b, name, x):
            return b.call(_declare(b, f"m.{name}.{x.type}", x.type, [x.type]), [x])

        @staticmethod
        def pow_(b, x, y):
            return b.call(_declare(b, f"m.pow.{x.type}", x.type, [x.type, x.type]), [x, y])

        @staticmethod
        def atan2(b, y, x):
            return b.call(_declare(b, f"m.atan2.{x.type}", x.type, [x.type, x.type]), [y, x])

    def kernel_attributes(self, num_threads, func=None, options=None):
        return {"max-threads": str(num_threads)}

    def _i32(self, b, what):
        return b.call(_declare(b, f"w.{what}", ir.IntType(32), []), [])

    def thread_id(self, b):
        return self._i32(b, "tid")

    def block_id(self, b, axis):
        return self._i32(b, f"bid{axis}")

    def num_blocks(self, b, axis):
        return self._i32(b, f"nb{axis}")

    def barrier(self, b):
        b.call(_declare(b, "w.barrier", ir.VoidType(), []), [])

    def shuffle_xor(self, b, value, lane_mask):
        t = value.type
        return b.call(_declare(b, f"w.shfl.{t}".replace(" ", ""), t, [t, ir.IntType(32)]),
                      [value, ir.Constant(ir.IntType(32), lane_mask)])

    def load_global(self, b, ptr, mem_type, n, pred=None, others=None, cache=""):
        out = []
        for i in range(n):
            p = b.gep(ptr, [ir.Constant(ir.IntType(64), i)], source_etype=mem_type) if i else ptr
            v = b.load(p, typ=mem_type)
            if pred is not None:
                v = b.select(pred, v, others[i] if others else ir.Constant(mem_type, None))
            out.append(v)
        return out

    def store_global(self, b, ptr, values, pred=None, cache=""):
        for i, v in enumerate(values):
            p = b.gep(ptr, [ir.Constant(ir.IntType(64), i)], source_etype=v.type) if i else ptr
            b.store(v, p)

    def trap(self, b):
        b.call(_declare(b, "w.trap", ir.VoidType(), []), [])

    def printf(self, lowering, fmt, args, guard):
        pass


def _declare(b, name, ret, params):
    m = b.module
    fn = m.globals.get(name)
    return fn if fn is not None else ir.Function(m, ir.FunctionType(ret, params), name)


@pytest.mark.parametrize("case", ["softmax", "col_sum", "cumsum_argmax", "layer_norm_f16", "vector_add", "while", "transpose"])
@pytest.mark.parametrize("num_warps", [1, 4])
def test_wave64_target_lowers_to_valid_llvm(case, num_warps):
    kernel, make, _ = CASES[case]
    args, cx, *_ = make(np.random.default_rng(0))
    m = tir(kernel, args, **cx)
    run_gpu_passes(m, Wave64(), Options(num_warps=num_warps))
    text = lower_module_text(m, Options(num_warps=num_warps), Wave64())
    llvm.parse_assembly(text).verify()
    threads = 64 * num_warps
    assert f'"max-threads"="{threads}"' in text
    # 64-lane warps: lane = tid & 63, warp = tid >> 6
    assert "and i32 %" in text and ", 63" in text and ("lshr i32 %" in text and ", 6" in text)
    if case in ("softmax", "cumsum_argmax", "layer_norm_f16"):
        assert "w.shfl" in text  # cross-lane reductions go through the target's shuffle


def test_a_target_without_inline_asm_registers_refuses_it_at_the_line():
    """``inline_asm`` is lowered only with the registers a target names; Wave64 names none."""
    import tilec
    import tilec.language as tl

    @tilec.jit
    def asm_kernel(X, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        y = tl.inline_asm_elementwise("mov $0, $1", "=r,r", [tl.load(X + offs)], dtype=tl.int32, is_pure=True,
                                      pack=1)
        tl.store(X + offs, y)
    m = tir(asm_kernel, [np.zeros(256, np.int32)], BLOCK=256)
    run_gpu_passes(m, Wave64())
    with pytest.raises(tilec.CompilationError, match="not supported on the wave64 backend") as e:
        lower_module_text(m, Options(), Wave64())
    assert e.value.line is not None and "inline_asm_elementwise" in e.value.source_line
