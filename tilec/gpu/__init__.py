"""The vendor-neutral GPU compiler: layouts (``layouts.py``), the GPU passes (``passes/``), the generic lowering
and the ``GpuTarget`` contract a vendor implements. Nothing here names a vendor."""
