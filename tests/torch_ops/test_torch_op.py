"""tilec kernels as torch custom operators on the CPU (CPU tensors, the CPU backend): torch.compile with
fullgraph=True traces through them with no graph break and no warning (eager, aot_eager and Inductor backends,
static and dynamic shapes), autograd uses the registered backward, torch.export keeps each as one node, and a
wrong output declaration is a clear error."""
import shutil
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0 for the CPU build)")

from tilec.torch import like, op  # noqa: E402

from . import ops  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    import torch._dynamo
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    yield
    torch._dynamo.reset()


@pytest.fixture(scope="module")
def torch_warmed():
    """torch's own modules imported (some warn about their own deprecations once, on import), so a test's
    recorded warnings are those of the compile it does."""
    import torch._dynamo  # noqa: F401
    import torch._functorch.aot_autograd  # noqa: F401
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch._inductor.compile_fx  # noqa: F401
        import torch.export  # noqa: F401


def compiled_cleanly(fn, *args, backend="aot_eager", dynamic=None):
    """fn compiled with fullgraph=True and run on ``args``: the result, after checking there was one graph,
    no graph break and no warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = torch.compile(fn, fullgraph=True, backend=backend, dynamic=dynamic)(*args)
    counters = torch._dynamo.utils.counters
    assert not counters["graph_break"], dict(counters["graph_break"])
    assert [str(w.message) for w in caught] == []
    return out


def rand(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


def has_cxx() -> bool:
    return any(shutil.which(c) for c in ("g++", "c++", "clang++"))


# -- eager -------------------------------------------------------------------------------------------------------
def test_eager_results_and_inferred_schemas():
    x, y = rand(1000, seed=1), rand(1000, seed=2)
    torch.testing.assert_close(ops.scale_add(x, y, 2.5), 2.5 * x + y)
    a, b = rand(45, 70), rand(70, 51, seed=3)
    torch.testing.assert_close(ops.matmul(a, b), a @ b, rtol=1e-4, atol=1e-4)
    mean, var = ops.moments(a)
    torch.testing.assert_close(mean, a.mean(1))
    torch.testing.assert_close(var, a.var(1, unbiased=False), rtol=1e-5, atol=1e-5)
    out = torch.empty(1000)
    assert ops.scale_add_(x, y, -1.0, out) is None
    torch.testing.assert_close(out, y - x)
    assert str(torch.ops.tilec_tests.scale_add.default._schema) == \
        "tilec_tests::scale_add(Tensor x, Tensor y, float a) -> Tensor"
    assert str(torch.ops.tilec_tests.moments.default._schema) == \
        "tilec_tests::moments(Tensor x) -> (Tensor, Tensor)"
    assert "Tensor(a3!) out) -> ()" in str(torch.ops.tilec_tests.scale_add_.default._schema)


# -- torch.compile -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compile_fullgraph_no_break_no_warning(torch_warmed, backend):
    x, y = rand(1001, seed=4), rand(1001, seed=5)

    def f(x, y):
        z = ops.scale_add(x, y, 0.5)
        return torch.relu(z) + ops.softplus(z)

    z = 0.5 * x + y
    torch.testing.assert_close(compiled_cleanly(f, x, y, backend=backend), torch.relu(z) + torch.nn.functional.softplus(z))


@pytest.mark.skipif(not has_cxx(), reason="Inductor's CPU code needs a C++ compiler on PATH")
def test_compile_with_inductor(torch_warmed):
    a, b = rand(45, 70, seed=6), rand(70, 51, seed=7)

    def f(a, b):
        c = ops.matmul(a, b)
        mean, var = ops.moments(c)
        return (c - mean[:, None]) * torch.rsqrt(var[:, None] + 1e-5)

    got = compiled_cleanly(f, a, b, backend="inductor")
    c = a @ b
    torch.testing.assert_close(got, (c - c.mean(1, keepdim=True)) / torch.sqrt(c.var(1, unbiased=False,
                                                                                      keepdim=True) + 1e-5),
                               rtol=1e-3, atol=1e-3)


def test_compile_dynamic_shapes(torch_warmed):
    """Symbolic shapes flow through the declared outputs: one graph serves every size."""
    f = torch.compile(lambda a, b: ops.matmul(a, b) * 2, fullgraph=True, backend="aot_eager", dynamic=True)
    for m, k, n in ((45, 70, 51), (17, 33, 90), (64, 8, 5)):
        a, b = rand(m, k, seed=m), rand(k, n, seed=n)
        torch.testing.assert_close(f(a, b), 2 * (a @ b), rtol=1e-4, atol=1e-4)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == 1


def test_compile_mutating_operator(torch_warmed):
    x, y = rand(300, seed=8), rand(300, seed=9)

    def f(x, y, out):
        ops.scale_add_(x, y, 3.0, out)
        return out * 2

    out = torch.zeros(300)
    got = compiled_cleanly(f, x, y, out)
    torch.testing.assert_close(out, 3.0 * x + y)
    torch.testing.assert_close(got, 2 * (3.0 * x + y))


def test_compile_an_autotuned_kernel_inside(torch_warmed):
    import tilec
    import tilec.language as tl

    @tilec.autotune(configs=[tilec.Config({"BLOCK": b}) for b in (64, 256)], key=["n"])
    @tilec.jit
    def negate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

    @op("tilec_tests::negate", out=like("x"))
    def neg(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        negate[lambda meta: (tilec.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
        return out

    x = rand(777, seed=10)
    torch.testing.assert_close(compiled_cleanly(lambda x: neg(x) + 1, x), 1 - x)


# -- autograd ------------------------------------------------------------------------------------------------------
def test_backward_gradcheck():
    x = rand(13, 29, dtype=torch.float64, seed=11).requires_grad_()
    assert torch.autograd.gradcheck(ops.softplus, (x,))


def test_backward_through_compile(torch_warmed):
    x = rand(500, seed=12).requires_grad_()
    f = lambda x: (ops.softplus(x) * x).sum()  # noqa: E731
    f(x).backward()
    eager = x.grad.clone()
    x.grad = None
    compiled_cleanly(f, x).backward()
    torch.testing.assert_close(x.grad, eager)
    torch.testing.assert_close(eager, (torch.nn.functional.softplus(x) + x * torch.sigmoid(x)).detach())


# -- torch.export ----------------------------------------------------------------------------------------------------
def test_export_keeps_one_node(torch_warmed):
    class M(torch.nn.Module):
        def forward(self, a, b):
            return ops.softplus(ops.matmul(a, b)) + 1

    a, b = rand(45, 70, seed=13), rand(70, 51, seed=14)
    batch = torch.export.Dim("batch", min=2, max=1024)
    program = torch.export.export(M(), (a, b), dynamic_shapes=({0: batch}, None))
    calls = [n.target for n in program.graph.nodes if n.op == "call_function"]
    assert calls.count(torch.ops.tilec_tests.matmul.default) == 1
    assert calls.count(torch.ops.tilec_tests.softplus.default) == 1
    assert len(calls) == 3
    for rows in (45, 100):
        a = rand(rows, 70, seed=rows)
        torch.testing.assert_close(program.module()(a, b), torch.nn.functional.softplus(a @ b) + 1,
                                   rtol=1e-4, atol=1e-4)


# -- errors --------------------------------------------------------------------------------------------------------
def test_an_output_unlike_its_declaration_is_a_clear_error():
    @op("tilec_tests::wrong_shape", out=like("x"))
    def wrong_shape(x: torch.Tensor) -> torch.Tensor:
        return x.new_empty(x.shape[0] + 1)

    with pytest.raises(TypeError, match=r"tilec_tests::wrong_shape: output 0 \(like\('x'\)\) has shape \(11,\) "
                                        r"where the declaration gives \(10,\)"):
        wrong_shape(torch.zeros(10))

    @op("tilec_tests::wrong_strides", out=like("x"))
    def wrong_strides(x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x.contiguous())

    with pytest.raises(TypeError, match=r"strides \(5, 1\) where the declaration gives \(1, 3\).*contiguous=True"):
        wrong_strides(torch.zeros(5, 3).t())

    @op("tilec_tests::wrong_dtype", out=like("x"))
    def wrong_dtype(x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x, dtype=torch.float64)

    with pytest.raises(TypeError, match="dtype torch.float64 where the declaration gives torch.float32"):
        wrong_dtype(torch.zeros(3))

    @op("tilec_tests::unchecked", out=like("x"), check=False)
    def unchecked(x: torch.Tensor) -> torch.Tensor:
        return x.new_empty(x.shape[0] + 1)

    assert unchecked(torch.zeros(4)).shape == (5,)


def test_declaration_errors_at_registration():
    with pytest.raises(TypeError, match=r"like\('z'\) names no parameter of f \(its parameters: x, y\)"):
        @op("tilec_tests::bad1", out=like("z"))
        def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return x

    with pytest.raises(TypeError, match="declare what it returns"):
        @op("tilec_tests::bad2")
        def g(x: torch.Tensor) -> torch.Tensor:
            return x

    with pytest.raises(TypeError, match="not int"):
        like(0)

    with pytest.raises(TypeError, match="setup_context= without backward="):
        @op("tilec_tests::bad3", out=like("x"), setup_context=lambda ctx, inputs, output: None)
        def h(x: torch.Tensor) -> torch.Tensor:
            return x


def test_a_declaration_naming_a_non_tensor():
    @op("tilec_tests::like_float", out=like("a"))
    def like_float(x: torch.Tensor, a: float) -> torch.Tensor:
        return x

    with pytest.raises(TypeError, match=r"like\('a'\): a is a float, not a tensor"):
        like_float(torch.zeros(2), 1.0)


def test_importing_tilec_does_not_import_torch(tmp_path):
    code = ("import sys, numpy as np, tilec, tilec.language as tl\n"
            "@tilec.jit\n"
            "def k(x, n, B: tl.constexpr):\n"
            "    o = tl.arange(0, B)\n"
            "    tl.store(x + o, tl.load(x + o, mask=o < n) + 1, mask=o < n)\n"
            "a = np.zeros(5, np.float32); k[(1,)](a, 5, B=8); assert (a == 1).all()\n"
            "assert 'torch' not in sys.modules, 'torch imported'\n"
            "import tilec.torch; assert 'torch' in sys.modules\n")
    script = tmp_path / "no_torch.py"
    script.write_text(code)
    import os
    import tilec
    root = os.path.dirname(os.path.dirname(os.path.abspath(tilec.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr


def test_outputs_of_transposed_inputs_match_their_declarations(torch_warmed):
    """like("x") is torch.empty_like(x): a transposed input's layout, in eager calls and in compiled graphs
    alike; like("x", contiguous=True) is contiguous whatever x's strides."""
    @op("tilec_tests::negate_like", out=like("x"))
    def negate_like(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)  # x's strides: the kernel walks both through x's storage order
        n = x.numel()
        ops.scale_add_kernel[ops.grid1(n)](x, torch.zeros_like(x), out, -1.0, n, BLOCK=256)
        return out

    x = rand(37, 53, seed=15).t()
    got = negate_like(x)
    assert got.stride() == x.stride()
    torch.testing.assert_close(got, -x)
    torch.testing.assert_close(compiled_cleanly(lambda x: negate_like(x) * 2, x), -2 * x)
    g = rand(53, 37, seed=16)
    s = ops.sigmoid_mul(x, g)
    assert s.is_contiguous()
    torch.testing.assert_close(s, g * torch.sigmoid(x))
