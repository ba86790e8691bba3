"""tir -> LLVM IR pieces shared by every backend: type mapping, the elementwise op table, math functions,
llvmlite module/target helpers and the optimisation driver."""
