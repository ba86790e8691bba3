"""The CPU backend: tir -> loop nests over fixed-width LLVM vectors -> host code JIT-compiled in process."""
