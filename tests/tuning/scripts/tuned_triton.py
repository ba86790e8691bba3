"""Triton-style kernels using autotune, heuristics, libdevice and the testing helpers (run through tilec.compat)."""
import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 32}, num_warps=1), triton.Config({"BLOCK_SIZE": 128})],
                 key=["n_elements"], warmup=1, rep=2)
@triton.heuristics({"EVEN": lambda args: args["n_elements"] % args["BLOCK_SIZE"] == 0})
@triton.jit
def exp_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:
        x = tl.load(x_ptr + offsets)
        tl.store(out_ptr + offsets, libdevice.exp(x) + tl.math.sqrt(tl.abs(x)))
    else:
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, tl.extra.cuda.libdevice.exp(x) + tl.math.sqrt(tl.abs(x)), mask=mask)


def exp_sqrt(x):
    out = np.empty_like(x)
    n = x.size
    exp_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, out, n)
    return out


def check(n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    out = exp_sqrt(x)
    ref = np.exp(x.astype(np.float64)) + np.sqrt(np.abs(x.astype(np.float64)))
    triton.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    return exp_kernel.best_config
