"""The frontend: ``@tilec.jit`` functions -> tir.

- ``codegen.py``: ``generate(ast_source, options)`` and the per-function/per-module state, helped by
  ``scope.py`` (names), ``expressions.py``, ``statements.py`` (structured control flow) and ``calls.py``;
- ``tir_builder.py``: the builder the language's Semantic layer emits through when compiling;

Python values known at compile time (constexprs, ints, floats, dtypes, tuples) are kept as Python values and
fold in Python; only tensors reach the IR. Variables become IR values when runtime control flow needs them.
"""
