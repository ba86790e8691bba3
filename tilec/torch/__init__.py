"""tilec inside torch programs: functions that launch tilec kernels as torch custom operators, so that
``torch.compile(fullgraph=True)`` traces through them without a graph break, CUDA graphs capture them and
``torch.export`` keeps each as one node (``docs/torch.md``). Importing ``tilec`` never imports torch; importing
``tilec.torch`` does.

    import torch, tilec, tilec.torch

    @tilec.torch.op("mylib::add", out=tilec.torch.like("x"))
    def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        add_kernel[(tilec.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
        return out
"""
from .op import op
from .outputs import Like, like

__all__ = ["op", "like", "Like"]
