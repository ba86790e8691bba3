"""``tl.math``: the math functions under Triton's submodule name."""
from .standard import (exp, exp2, log, log2, sqrt, rsqrt, sin, cos, floor, ceil, erf, sqrt_rn, sigmoid, abs, fma,
                       fdiv, maximum, minimum, cdiv, div_rn)  # noqa: F401
from .random import umulhi  # noqa: F401

__all__ = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "floor", "ceil", "erf", "sqrt_rn", "sigmoid",
           "abs", "fma", "fdiv", "maximum", "minimum", "cdiv", "div_rn", "umulhi"]
