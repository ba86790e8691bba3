"""dtype tables for the conformance suite, and Triton's promotion rules written out independently of tilec's
implementation (so the suite checks it rather than restating it)."""
import numpy as np

import tilec.language as tl

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
NUMERIC = INTS + FLOATS

TL = {"int1": tl.int1, "int8": tl.int8, "int16": tl.int16, "int32": tl.int32, "int64": tl.int64,
      "uint8": tl.uint8, "uint16": tl.uint16, "uint32": tl.uint32, "uint64": tl.uint64,
      "float16": tl.float16, "bfloat16": tl.bfloat16, "float32": tl.float32, "float64": tl.float64}


def bits(name):
    return np.dtype(name).itemsize * 8


def promote(a, b, div_or_mod=False):
    """Triton's result dtype of ``a op b`` for two tensors (C rules for ints; no promotion to int32)."""
    fa, fb = a in FLOATS, b in FLOATS
    if fa or fb:
        if fa and fb:
            out = a if bits(a) >= bits(b) else b
        else:
            out = a if fa else b
        return "float32" if div_or_mod and out == "float16" else out
    sa, sb = not a.startswith("u"), not b.startswith("u")
    if sa == sb:
        return a if bits(a) >= bits(b) else b
    signed, unsigned = (a, b) if sa else (b, a)
    return unsigned if bits(unsigned) >= bits(signed) else signed
