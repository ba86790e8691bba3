"""Property test: random broadcasting expressions written as kernel source agree with numpy."""
import importlib.util
import itertools

import numpy as np
from hypothesis import given, settings, strategies as st

from helpers import launch
from tilec.runtime.jit import JITFunction

_counter = itertools.count()
LEAVES = ["a", "b", "c", "1.5", "2", "-0.25"]


def expressions(depth):
    leaf = st.sampled_from(LEAVES)
    if depth == 0:
        return leaf
    sub = expressions(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(st.sampled_from(["+", "-", "*"]), sub, sub).map(lambda t: f"({t[1]} {t[0]} {t[2]})"),
        st.tuples(st.sampled_from(["tl.maximum", "tl.minimum"]), sub, sub).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        st.tuples(sub, sub, sub, sub).map(lambda t: f"tl.where({t[0]} < {t[1]}, {t[2]}, {t[3]})"),
        sub.map(lambda e: f"abs({e})"),
        sub.map(lambda e: f"(-{e})"),
    )


def numpy_eval(expr, a, b, c):
    env = {"a": a, "b": b, "c": np.float32(c), "tl": type("tl", (), {
        "maximum": staticmethod(np.maximum), "minimum": staticmethod(np.minimum),
        "where": staticmethod(np.where)})}
    # Python literals are weak scalars: in numpy 2 they also adopt the array's float32
    return np.broadcast_to(eval(expr, env), (a.shape[0], b.shape[1])).astype(np.float32)


def make_kernel(tmp_path, expr):
    path = tmp_path / f"expr_kernel_{next(_counter)}.py"
    path.write_text(
        "import tilec\nimport tilec.language as tl\n\n\n"
        "@tilec.jit\n"
        "def k(A, B, Out, c, M: tl.constexpr, N: tl.constexpr):\n"
        "    rm = tl.arange(0, M)\n"
        "    rn = tl.arange(0, N)\n"
        "    a = tl.load(A + rm)[:, None]\n"
        "    b = tl.load(B + rn)[None, :]\n"
        f"    r = {expr}\n"
        "    tl.store(Out + rm[:, None] * N + rn[None, :], r + tl.zeros([M, N], tl.float32))\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


@settings(max_examples=30, deadline=None)
@given(expr=expressions(3), seed=st.integers(0, 2**31 - 1))
def test_random_expression(tmp_path_factory, expr, seed):
    tmp_path = tmp_path_factory.mktemp("expr")
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(4).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    c = float(np.float32(rng.standard_normal()))
    out = np.zeros((4, 8), np.float32)
    kernel = make_kernel(tmp_path, expr)
    launch(kernel, 1, a, b, out, c, M=4, N=8)
    ref = numpy_eval(expr, a[:, None], b[None, :], c)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5, err_msg=expr)
    interpreted = np.zeros_like(out)
    JITFunction(kernel.fn, interpret=True)[(1,)](a, b, interpreted, c, M=4, N=8)
    np.testing.assert_array_equal(interpreted, out, err_msg=expr)
