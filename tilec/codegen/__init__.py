"""tir -> LLVM IR for the host CPU: the CPU register model (``llvm_types``: 16-bit codes for bf16, i8 codes for
fp8, vectors), the elementwise op table over it (``elementwise``, ``casts``, ``mathfns``) and the host LLVM
driver (``driver``: target machine, optimisation). ``intrinsics`` (declaring and calling LLVM intrinsics) and
``llvm_types.byte_size`` are also used by the GPU lowering, whose register model lives in
``tilec/gpu/lowering/types.py``."""
