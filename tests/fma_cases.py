"""The fma kernel and the midpoint cases the CPU and GPU fma tests share: a product on a midpoint of the format
plus an addend far below its precision, where rounding twice goes the wrong way."""
import numpy as np

import tilec
import tilec.language as tl


@tilec.jit
def fma_kernel(a_ptr, b_ptr, c_ptr, out_ptr, DT: tl.constexpr, B: tl.constexpr):
    r = tl.arange(0, B)
    a = tl.load(a_ptr + r).to(DT)
    b = tl.load(b_ptr + r).to(DT)
    c = tl.load(c_ptr + r).to(DT)
    tl.store(out_ptr + r, tl.fma(a, b, c).to(tl.float64))


DTYPES = {"f16": tl.float16, "bf16": tl.bfloat16, "f32": tl.float32, "f64": tl.float64}
# a product on a midpoint of the format plus an addend far below its precision: one rounding goes up
MIDPOINTS = {"f16": (1.5, 1 + 3 * 2 ** -10, 2.0 ** -24, 1.5 + 2 ** -8 + 2 ** -10),
             "bf16": (1 + 2 ** -4, 1 + 2 ** -4, 2.0 ** -100, 1 + 2 ** -3 + 2 ** -7),
             "f32": (0.75, float(np.float32(6.586683e+23)), 39.0, float(np.float32(4.9400125e+23))),
             "f64": (1 + 3 * 2 ** -52, 1.5, 2.0 ** -200, 1.5 + 2 ** -50 + 2 ** -52)}
