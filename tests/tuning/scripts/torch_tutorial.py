"""Written like Triton's tutorials (torch tensors on DEVICE, autotune, do_bench); needs torch."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 64}), triton.Config({"BLOCK_SIZE": 256}, num_warps=8)],
                 key=["n_elements"], warmup=1, rep=2)
@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor):
    output = torch.empty_like(x)
    assert x.device == DEVICE and y.device == DEVICE and output.device == DEVICE
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]), )
    add_kernel[grid](x, y, output, n_elements)
    return output


torch.manual_seed(0)
size = 98432
x = torch.rand(size, device=DEVICE)
y = torch.rand(size, device=DEVICE)
output_torch = x + y
output_triton = add(x, y)
print(f"max difference {torch.max(torch.abs(output_torch - output_triton)).item()}")
ms = triton.testing.do_bench(lambda: add(x, y), warmup=1, rep=5)
print(f"best {add_kernel.best_config.kwargs} timed {ms > 0}")
