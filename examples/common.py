"""Shared by the examples: pick where the data lives (a GPU through torch when present, else the CPU) and time."""
import os
import time

import numpy as np


def device():
    """'cuda' when torch sees a CUDA GPU, else 'cpu' (tilec follows where the arrays live); ``TILEC_BACKEND=cpu``
    keeps the data on the host, as it keeps the kernels there."""
    if os.environ.get("TILEC_BACKEND", "").lower() == "cpu":
        return "cpu"
    try:
        import torch
        if torch.cuda.is_available():
            return "cuda"
    except ImportError:
        pass
    return "cpu"


def to_device(a: np.ndarray, dev: str):
    if dev == "cpu":
        return a
    import torch
    return torch.from_numpy(a).to(dev)


def to_numpy(a):
    return a if isinstance(a, np.ndarray) else a.cpu().numpy()


def empty_like(a, dev):
    return np.empty_like(a) if dev == "cpu" else to_device(np.empty_like(a), dev)


def bench(fn, repeat: int = 10, dev: str = "cpu") -> float:
    """Best wall time of ``fn()`` in seconds over ``repeat`` runs after one warm-up."""
    sync = (lambda: __import__("torch").cuda.synchronize()) if dev == "cuda" else (lambda: None)
    fn()
    sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def strides(a) -> list:
    """Per-dimension strides in elements, for numpy arrays and torch tensors alike."""
    return [st // a.itemsize for st in a.strides] if isinstance(a, np.ndarray) else list(a.stride())


def empty(shape, dtype, like):
    """An uninitialised array on the same device as ``like``."""
    if isinstance(like, np.ndarray):
        return np.empty(shape, dtype)
    import torch
    return torch.empty(shape, dtype=getattr(torch, np.dtype(dtype).name), device=like.device)


def row_stride(a) -> int:
    """Elements between rows, for numpy arrays and torch tensors alike."""
    return a.strides[0] // a.itemsize if isinstance(a, np.ndarray) else a.stride(0)
