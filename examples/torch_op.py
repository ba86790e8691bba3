"""tilec kernels as a torch operator: a fused SwiGLU activation (silu(a) * b, the gate of LLaMA-style MLPs) with
its backward, registered with ``tilec.torch.op`` so that ``torch.compile(fullgraph=True)`` traces a model through
it without a graph break, autograd differentiates it, and ``torch.export`` keeps it as one node.

    python examples/torch_op.py          # needs torch; runs on a CUDA GPU when torch sees one, else on the CPU
"""
import torch

import tilec
import tilec.language as tl
import tilec.torch
from tilec.torch import like

BLOCK = 1024


@tilec.jit
def swiglu_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=m).to(tl.float32)
    silu = a / (1.0 + tl.exp(-a))
    tl.store(out_ptr + offs, (silu * b).to(out_ptr.dtype.element_ty), mask=m)


@tilec.jit
def swiglu_backward_kernel(a_ptr, b_ptr, g_ptr, da_ptr, db_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=m).to(tl.float32)
    g = tl.load(g_ptr + offs, mask=m).to(tl.float32)
    sig = 1.0 / (1.0 + tl.exp(-a))
    tl.store(da_ptr + offs, (g * b * sig * (1.0 + a * (1.0 - sig))).to(da_ptr.dtype.element_ty), mask=m)
    tl.store(db_ptr + offs, (g * a * sig).to(db_ptr.dtype.element_ty), mask=m)


@tilec.torch.op("tilec_examples::swiglu_backward", out=(like("a", contiguous=True), like("b", contiguous=True)))
def swiglu_backward(a: torch.Tensor, b: torch.Tensor, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a, b, grad = a.contiguous(), b.contiguous(), grad.contiguous()
    da, db = torch.empty_like(a), torch.empty_like(b)
    n = a.numel()
    swiglu_backward_kernel[(tilec.cdiv(n, BLOCK),)](a, b, grad, da, db, n, BLOCK=BLOCK)
    return da, db


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, grad):
    return swiglu_backward(*ctx.saved_tensors, grad)


@tilec.torch.op("tilec_examples::swiglu", out=like("a", contiguous=True), backward=_backward,
                setup_context=_setup_context)
def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """silu(a) * b, elementwise (a and b of one shape)."""
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    swiglu_kernel[(tilec.cdiv(n, BLOCK),)](a, b, out, n, BLOCK=BLOCK)
    return out


def mlp(x, w_gate, w_up, w_down):
    """A LLaMA-style MLP block: the matmuls are torch's, the gate is the tilec operator."""
    return swiglu(x @ w_gate, x @ w_up) @ w_down


def reference(x, w_gate, w_up, w_down):
    return (torch.nn.functional.silu(x @ w_gate) * (x @ w_up)) @ w_down


def main(tokens=37, dim=96, hidden=250, backend="inductor", timing=True):
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(0)
    x = torch.randn(tokens, dim, generator=g).to(dev)
    ws = [(torch.randn(*s, generator=g) / s[0] ** 0.5).to(dev).requires_grad_()
          for s in ((dim, hidden), (dim, hidden), (hidden, dim))]

    # eager, with autograd through the registered backward
    out = mlp(x, *ws)
    out.square().sum().backward()
    grads = [w.grad.clone() for w in ws]
    for w in ws:
        w.grad = None
    ref = reference(x, *ws)
    ref.square().sum().backward()
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
    for got, w in zip(grads, ws):
        torch.testing.assert_close(got, w.grad, rtol=1e-4, atol=1e-4)
        w.grad = None

    # torch.compile: one graph (fullgraph=True raises on any break), the operator a node in it
    explained = torch._dynamo.explain(mlp)(x, *ws)
    assert explained.graph_break_count == 0, explained.break_reasons
    compiled = torch.compile(mlp, fullgraph=True, backend=backend)
    out_c = compiled(x, *ws)
    out_c.square().sum().backward()
    torch.testing.assert_close(out_c, ref, rtol=1e-4, atol=1e-4)
    for got, w in zip(grads, ws):
        torch.testing.assert_close(w.grad, got, rtol=1e-4, atol=1e-4)

    # torch.export: the operator stays one node of the exported program
    class Block(torch.nn.Module):
        def forward(self, x, w_gate, w_up, w_down):
            return mlp(x, w_gate, w_up, w_down)

    program = torch.export.export(Block(), (x, *(w.detach() for w in ws)))
    nodes = [n for n in program.graph.nodes if n.op == "call_function"
             and n.target is torch.ops.tilec_examples.swiglu.default]
    assert len(nodes) == 1
    torch.testing.assert_close(program.module()(x, *(w.detach() for w in ws)), ref, rtol=1e-4, atol=1e-4)
    print(f"swiglu MLP block on {dev}: eager, backward, torch.compile(fullgraph=True, backend={backend!r}) "
          f"({explained.graph_count} graph, 0 breaks), torch.export: ok")
    if timing:
        import time
        with torch.no_grad():
            for name, fn in (("eager", mlp), ("compiled", compiled)):
                fn(x, *ws)
                t0 = time.perf_counter()
                for _ in range(20):
                    fn(x, *ws)
                if dev == "cuda":
                    torch.cuda.synchronize()
                print(f"  {name}: {(time.perf_counter() - t0) / 20 * 1e3:.3f} ms per block")


if __name__ == "__main__":
    main()
