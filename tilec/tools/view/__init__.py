"""``python -m tilec.tools.view script.py [--kernel NAME] [-o DIR]``: a pass-by-pass HTML page per compiled
variant, or ``TILEC_DUMP_HTML=DIR`` for any program.

``record.py`` watches the compiles (every pass's IR through ``PassManager``'s observers, every stage through the
pipeline's); ``lines.py`` maps each line of each stage (tir/gir ``loc(...)``, LLVM ``!dbg``, PTX/asm ``.loc``) to
a line of the kernel's Python source; ``page.py`` writes the self-contained page (``assets.py``: its CSS and JS):
the source beside the stages, side-by-side diffs before/after every pass with unchanged passes folded, and
clicking an op highlights its source line and the other way round.
"""
