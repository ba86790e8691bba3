"""A Triton-tutorial-style vector add written against ``triton`` (run it with ``python -m tilec run``)."""
import sys

import numpy as np
import triton
import triton.language as tl
from triton import language as tl2

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl2.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x, y):
    output = np.empty_like(x)
    n_elements = output.size
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=triton.next_power_of_2(256))
    return output


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 98_432
    rng = np.random.default_rng(0)
    x = rng.random(size, dtype=np.float32)
    y = rng.random(size, dtype=np.float32)
    out = add(x, y)
    err = float(np.max(np.abs(out.astype(np.float64) - (x.astype(np.float64) + y))))
    triton.testing.assert_close(out, x + y, atol=1e-6)
    print(f"device={DEVICE} size={size} max_abs_err={err:.3g} sum={float(out.astype(np.float64).sum()):.6f}")
    print(f"expected_sum={float((x.astype(np.float64) + y).sum()):.6f}")
