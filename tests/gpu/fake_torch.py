"""A stand-in for torch, enough for launches: ``torch.version`` (CUDA or ROCm), the current raw stream per device,
and a tensor type whose instances report a data pointer and a device (recognised as torch's by its module)."""
import sys
import types


def install(monkeypatch, streams, hip: bool = False):
    """Make ``import torch`` give the stand-in; ``streams[device]`` is its current stream there. Returns the tensor
    type: ``Tensor(address, device_index)``."""
    torch = types.ModuleType("torch")
    torch.version = types.SimpleNamespace(hip="6.2.41133" if hip else None, cuda=None if hip else "12.8")
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda dev: streams[dev])
    monkeypatch.setitem(sys.modules, "torch", torch)

    class Tensor:
        is_cuda = True
        dtype = "torch.float32"

        def __init__(self, ptr, index=0):
            self.ptr, self.device = ptr, types.SimpleNamespace(type="cuda", index=index)

        def data_ptr(self):
            return self.ptr

        def get_device(self):
            return self.device.index
    Tensor.__module__ = "torch"
    torch.Tensor = Tensor
    return torch
