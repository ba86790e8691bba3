"""The GPU IR as a dialect of the core IR: importing this module registers the GPU ops (``ops.py``) and every
layout encoding (``layouts.py``, and the matrix-core layouts of ``matrix_core_layouts.py``) with the parser.

The parser imports it the first time it meets a name it does not know (``gpu/__init__.py`` registers it there),
so gir text reads back in any process, whichever backend it has loaded.
"""
from . import layouts, matrix_core_layouts, ops  # noqa: F401  (each registers its names when imported)
