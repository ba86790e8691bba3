"""``tl.extra.cuda``: the NVIDIA spelling of ``tl.extra.libdevice``."""
from . import libdevice  # noqa: F401
