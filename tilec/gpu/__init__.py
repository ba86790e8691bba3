"""The vendor-neutral GPU compiler: layouts (``layouts.py``), the GPU passes (``passes/``), the generic lowering
and the ``GpuTarget`` contract a vendor implements. Nothing here names a vendor.

The core IR and the tir passes never name this package: it registers itself with them here, the GPU IR as a
dialect the parser loads when it meets a name it does not know (``dialect.py``), the GPU passes as a pass
package found by name. ``tilec/__init__.py`` imports this package, so the registrations hold in every process.
"""
from ..ir.parser import register_dialect
from ..passes.base import register_pass_package

register_dialect("tilec.gpu.dialect")
register_pass_package("tilec.gpu.passes", "GPU passes")
