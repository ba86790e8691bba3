"""Host-side microscaling (OCP MX) data for ``tl.dot_scaled``, as torch tensors: ``triton.tools.mxfp`` under
``python -m tilec run``.

``MXFP4Tensor`` holds e2m1 codes (one uint8 per element: sign in bit 3, two exponent bits, one mantissa bit) and
packs them two per byte, the first element of each pair in the low nibble: the layout ``tl.dot_scaled`` reads.
``MXScaleTensor`` holds e8m0 scale codes (the value is 2^(code-127); 255 is NaN). Both convert from floats (e2m1
rounds to nearest, ties to the even code, and saturates at +-6; a scale rounds its base-2 logarithm to the nearest
integer) and back with ``.to(dtype)``. Triton's block-scaled tutorials make their operands with these; tilec's
emulated ``dot_scaled`` takes the same bytes. torch is imported when a tensor is made, never by importing this.
"""
from __future__ import annotations

#: the e2m1 magnitudes of codes 0..7 (code | 8 is the negative)
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
E8M0_BIAS = 127
E8M0_NAN = 255


def _torch():
    try:
        import torch
    except ImportError:
        raise ImportError("tilec.tools.mxfp (triton.tools.mxfp) makes torch tensors: install torch") from None
    return torch


def _as_float(torch, data, device):
    return torch.as_tensor(data, device=device).to(torch.float32)


def e2m1_codes(x):
    """float tensor -> e2m1 codes (uint8): nearest value, ties to the even code, magnitudes past 6 saturate."""
    torch = _torch()
    if torch.isnan(x).any():
        raise ValueError("e2m1 has no NaN: the data holds NaN")
    mag = x.abs().clamp(max=E2M1_VALUES[-1])
    mids = torch.tensor([(a + b) / 2 for a, b in zip(E2M1_VALUES, E2M1_VALUES[1:])], device=x.device)
    below = torch.bucketize(mag, mids, right=False)   # a tie counts as below the midpoint...
    above = torch.bucketize(mag, mids, right=True)    # ...or above it: keep whichever code is even
    code = torch.where(below == above, below, torch.where(below % 2 == 0, below, above))
    return (code | (torch.signbit(x).to(code.dtype) << 3)).to(torch.uint8)


class _Codes:
    """A tensor of one format's codes, one uint8 per element (``.data``): made from ``data`` (floats, which
    ``encode`` converts) or as ``size`` elements of the code ``fill``. Both MX formats are made this way."""
    fill = 0

    def __init__(self, data=None, size=None, device=None):
        torch = _torch()
        if data is not None:
            self.data = self.encode(torch, _as_float(torch, data, device))
        elif size is not None:
            self.data = torch.full(tuple(size), self.fill, dtype=torch.uint8, device=device)
        else:
            raise ValueError(f"{type(self).__name__} needs data or a size")
        self.device = self.data.device

    @staticmethod
    def encode(torch, x):
        raise NotImplementedError

    @property
    def shape(self):
        return self.data.shape


class MXFP4Tensor(_Codes):
    """e2m1 elements: ``MXFP4Tensor(data=floats)`` converts, ``MXFP4Tensor(size=shape)`` is zeros (then
    ``.random()``); ``.data`` is the codes, one per element."""

    @staticmethod
    def encode(torch, x):
        return e2m1_codes(x)

    def random(self):
        """Every element a uniformly random e2m1 code (both zeros included); returns self."""
        torch = _torch()
        self.data = torch.randint(0, 16, tuple(self.data.shape), dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype):
        """The values as a float tensor of ``dtype`` (exact in any float format)."""
        torch = _torch()
        table = torch.tensor(E2M1_VALUES + tuple(-v for v in E2M1_VALUES), dtype=torch.float32, device=self.device)
        return table[self.data.long()].to(dtype)

    def to_packed_tensor(self, dim):
        """uint8, two codes a byte along ``dim`` (element 2i low nibble, 2i+1 high); an odd length is padded with
        a zero code."""
        torch = _torch()
        codes = self.data.movedim(dim, -1)
        if codes.shape[-1] % 2:
            codes = torch.nn.functional.pad(codes, (0, 1))
        packed = codes[..., 0::2] | (codes[..., 1::2] << 4)
        return packed.movedim(-1, dim).contiguous()


class MXScaleTensor(_Codes):
    """e8m0 scales: ``MXScaleTensor(data=positive floats)`` converts (log2 rounded to the nearest integer, clamped
    to the codes 0..254), ``MXScaleTensor(size=shape)`` is ones (code 127); ``.data`` is the codes."""
    fill = E8M0_BIAS

    @staticmethod
    def encode(torch, x):
        if (x <= 0).any():
            raise ValueError("e8m0 scales are powers of two: the data holds values <= 0")
        code = (torch.round(torch.log2(x)) + E8M0_BIAS).clamp(0, E8M0_NAN - 1)
        return torch.where(torch.isnan(x), E8M0_NAN, code).to(torch.uint8)

    def to(self, dtype):
        """2^(code-127) as a float tensor of ``dtype``; code 255 is NaN."""
        torch = _torch()
        codes = self.data.to(torch.float32)
        values = torch.exp2(codes - E8M0_BIAS)
        return torch.where(self.data == E8M0_NAN, float("nan"), values).to(dtype)
