"""Host-side names Triton programs use: ``@jit(repr=...)`` kernel names, ``triton.TritonError``,
``triton.reinterpret``, ``triton.set_allocator`` and ``triton.tools.tensor_descriptor`` through the compatibility
layer."""
import numpy as np
import pytest

import tilec
import tilec.language as tl


def _name(spec):
    ones = "_".join(k for k, v in spec.constants.items() if v == 1)
    return f"scale_{spec.signature['x']}_{spec.signature['X']}_{ones}"


@tilec.jit(repr=_name)
def named(X, x, one, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(X + o, tl.load(X + o) * x + one)


@pytest.mark.parametrize("value,sig", [(3, "i32"), (2**40, "i64")])
def test_repr_names_the_variant(value, sig):
    x = np.arange(8, dtype=np.float64)
    k = named[(1,)](x, value, 1, BLOCK=8)
    assert k.name == f"scale_{sig}__fp64_one"  # the name is made a valid symbol
    np.testing.assert_array_equal(x, np.arange(8) * float(value) + 1)


def test_compat_exposes_triton_error_and_reinterpret():
    from tilec import compat
    compat.install()
    try:
        import triton
        assert issubclass(tilec.CompilationError, triton.TritonError)
        codes = np.array([1.0, -2.0], np.float16).view(np.int16)
        out = np.zeros(2, np.int16)

        @tilec.jit
        def neg(X, Y):
            o = tl.arange(0, 2)
            tl.store(Y + o, -tl.load(X + o))

        neg[(1,)](triton.reinterpret(codes, tl.float16), triton.reinterpret(out, tl.float16))
        np.testing.assert_array_equal(out.view(np.float16), np.array([-1.0, 2.0], np.float16))
    finally:
        compat.uninstall()


@tilec.jit
def takes_int(X, v):
    pass


@pytest.mark.parametrize("v", [2**64, -2**63 - 1])
def test_integer_arguments_past_64_bits_overflow(v):
    with pytest.raises(OverflowError, match="does not fit in 64 bits"):
        takes_int[(1,)](np.zeros(1, np.float32), v)
    takes_int[(1,)](np.zeros(1, np.float32), 2**64 - 1)


def test_compat_exposes_set_allocator_and_host_descriptors():
    from tilec import compat
    compat.install()
    try:
        import triton
        from triton.tools.tensor_descriptor import TensorDescriptor
        from triton.runtime._allocation import set_allocator
        assert TensorDescriptor is tilec.TensorDescriptor
        assert triton.set_allocator is tilec.set_allocator is set_allocator
    finally:
        compat.uninstall()
