"""tilec kernels as torch custom operators on a CUDA GPU: torch.compile(fullgraph=True) with Inductor (no graph
break, no warning), CUDA graphs capturing and replaying the launches (by hand and through Inductor's
``mode="reduce-overhead"``), autograd through the registered backward, and torch.export."""
import importlib
import math
import os
import sys
import warnings

import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch", reason="torch is not installed")

import tilec  # noqa: E402
from tilec.torch import like, op  # noqa: E402

from . import ops  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gpu"))


@pytest.fixture(autouse=True)
def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    # imported by name: an `import torch._dynamo` here would make `torch` a local of this function
    importlib.import_module("torch._dynamo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        importlib.import_module("torch._inductor.compile_fx")  # torch's own import-time warnings, before recording
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    yield
    torch._dynamo.reset()


TF32 = dict(rtol=1e-2, atol=5e-2)  # fp32 dots run on tf32 tensor cores, as in Triton


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", generator=g).to(dtype)


def run_compiled(fn, *args, **compile_kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = torch.compile(fn, fullgraph=True, **compile_kwargs)
        out = compiled(*args)
        torch.cuda.synchronize()
    assert not torch._dynamo.utils.counters["graph_break"], dict(torch._dynamo.utils.counters["graph_break"])
    assert [str(w.message) for w in caught] == []
    return compiled, out


def test_compile_inductor_fullgraph():
    x, y = rand(100_003, seed=1), rand(100_003, seed=2)
    a, b = rand(300, 200, seed=3), rand(200, 170, seed=4)

    def f(x, y, a, b):
        return torch.relu(ops.scale_add(x, y, 0.5)).sum() + ops.softplus(ops.matmul(a, b))

    _, got = run_compiled(f, x, y, a, b)
    ref = torch.relu(0.5 * x + y).sum() + torch.nn.functional.softplus(a @ b)
    torch.testing.assert_close(got, ref, **TF32)


def test_cuda_graph_capture_and_replay():
    """The launches of an operator are captured into a CUDA graph and replayed on new input data."""
    x, y = rand(4099, seed=5), rand(4099, seed=6)
    a, b = rand(128, 96, seed=7), rand(96, 80, seed=8)

    def step():
        return ops.softplus(ops.scale_add(x, y, 2.0)), ops.matmul(a, b)

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):  # compile and load every kernel before capture
            step()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out1, out2 = step()
    for seed in (9, 10):
        x.copy_(rand(4099, seed=seed))
        a.copy_(rand(128, 96, seed=seed + 100))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out1, torch.nn.functional.softplus(2.0 * x + y))
        torch.testing.assert_close(out2, a @ b, **TF32)


def test_compile_reduce_overhead_uses_cuda_graphs():
    """Inductor's CUDA graphs (mode="reduce-overhead") take the operators without skipping the graph."""
    a, b = rand(256, 128, seed=11), rand(128, 192, seed=12)
    f = lambda a, b: ops.softplus(ops.matmul(a, b)) * 2  # noqa: E731
    compiled, _ = run_compiled(f, a, b, mode="reduce-overhead")
    for seed in (13, 14, 15):
        a2 = rand(256, 128, seed=seed)
        got = compiled(a2, b).clone()
        torch.testing.assert_close(got, torch.nn.functional.softplus(a2 @ b) * 2, **TF32)
    assert torch._dynamo.utils.counters["inductor"]["cudagraph_skips"] == 0


def test_tensor_core_matmul_operator_in_a_graph():
    """An f16 tensor-core matmul (mma.sync / wgmma) as an operator, compiled and captured by Inductor."""
    @op("tilec_tests::matmul_f16", out=like("a", shape=lambda a, b: (a.shape[0], b.shape[1])))
    def matmul_f16(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), dtype=a.dtype, device=a.device)
        ops.matmul_kernel[(tilec.cdiv(M, 64), tilec.cdiv(N, 64))](
            a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(), BM=64, BN=64, BK=32, num_warps=4)
        return c

    a, b = rand(512, 384, dtype=torch.float16, seed=16), rand(384, 320, dtype=torch.float16, seed=17)
    compiled, got = run_compiled(lambda a, b: matmul_f16(a, b).float().relu(), a, b, mode="reduce-overhead")
    ref = (a.double() @ b.double()).relu()
    torch.testing.assert_close(got.double(), ref, atol=1e-2 * math.sqrt(384), rtol=1e-2)
    got2 = compiled(a, b)
    torch.testing.assert_close(got2.double(), ref, atol=1e-2 * math.sqrt(384), rtol=1e-2)


def test_descriptor_kernel_in_a_cuda_graph_with_torch_allocator():
    """A kernel with global scratch (tensor copy descriptors on sm_90) captured in a CUDA graph, its scratch from
    torch's caching allocator through tilec.set_allocator."""
    from tc_kernels import desc_matmul_kernel

    @op("tilec_tests::desc_matmul", out=like("a", shape=lambda a, b: (a.shape[0], b.shape[1]), dtype=torch.float32))
    def desc_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), device=a.device, dtype=torch.float32)
        desc_matmul_kernel[(tilec.cdiv(M, 128), tilec.cdiv(N, 128))](
            a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0), BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
            DESC_STORE=False, num_warps=8, num_stages=3)
        return c

    tilec.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    try:
        a, b = rand(256, 512, dtype=torch.float16, seed=18), rand(512, 256, dtype=torch.float16, seed=19)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                desc_matmul(a, b)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            c = desc_matmul(a, b)
        a.copy_(rand(256, 512, dtype=torch.float16, seed=20))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(c.double(), a.double() @ b.double(), atol=1e-2 * math.sqrt(512), rtol=1e-2)
    finally:
        tilec.set_allocator(None)


def test_backward_on_the_gpu():
    x = rand(37, 53, dtype=torch.float64, seed=21).requires_grad_()
    assert torch.autograd.gradcheck(ops.softplus, (x,))
    x32 = rand(10_001, seed=22).requires_grad_()
    f = lambda x: (ops.softplus(x) * x).sum()  # noqa: E731
    _, loss = run_compiled(f, x32)
    loss.backward()
    torch.testing.assert_close(x32.grad, (torch.nn.functional.softplus(x32) + x32 * torch.sigmoid(x32)).detach(),
                               rtol=1e-5, atol=1e-5)


def test_export_on_the_gpu():
    class M(torch.nn.Module):
        def forward(self, a, b):
            return ops.softplus(ops.matmul(a, b))

    a, b = rand(64, 48, seed=23), rand(48, 40, seed=24)
    program = torch.export.export(M(), (a, b))
    calls = [n.target for n in program.graph.nodes if n.op == "call_function"]
    assert calls == [torch.ops.tilec_tests.matmul.default, torch.ops.tilec_tests.softplus.default]
    torch.testing.assert_close(program.module()(a, b), torch.nn.functional.softplus(a @ b), **TF32)
