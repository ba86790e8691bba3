"""``tl.extra``: Triton's vendor-library namespace. ``tl.extra.libdevice`` (and the ``tl.extra.cuda.libdevice``
spelling kernels written for NVIDIA use) maps the common libdevice functions onto tilec's own math ops, so they
run on every backend."""
from . import libdevice  # noqa: F401
from . import cuda  # noqa: F401
