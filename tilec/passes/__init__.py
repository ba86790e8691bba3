"""Target-independent tir passes: the pass manager, the pattern-rewriting driver and one file per pass.

- ``base.py``: ``Pass`` (subclasses register by ``name``) and the registered pass packages of higher layers;
  ``manager.py``: ``get_pass``, ``tir_pipeline()`` (the default order and why), ``PassManager`` (timing, verification between passes, ``TILEC_DUMP_IR`` / ``TILEC_DUMP_DIR`` /
  ``TILEC_DEBUG``).
- ``pipeline_spec.py``: ``parse_pipeline`` (pipelines from text, ``"cse,convert-to-gir{num-warps=8}"``) and the
  options each pass takes, read from its constructor; ``cli.py``: the command line over both.
- ``rewrite.py``: ``RewritePattern`` / ``@pattern`` + ``PatternRewriter`` + ``apply_patterns_greedily``, the one
  worklist driver for canonicalisation and lowerings.
- ``inline.py`` (with symbol DCE), ``canonicalize.py`` (folding + pattern table), ``cse.py``, ``dce.py``,
  ``licm.py``; ``utils.py`` holds the effect queries (pure / removable / speculatable) they share.

A new pass is a ``Pass`` subclass (``base.py``) with a ``name`` in its own file, imported at the top of
``manager.py`` (the passes of a higher layer, such as ``gpu/passes``, come as a registered pass package, found by
name on demand). ``python -m tilec.passes`` runs passes over a ``.tir`` file.
"""
from .manager import PASS_REGISTRY, Pass, PassFailure, PassManager, get_pass, tir_pipeline
from .pipeline_spec import PipelineError, parse_pipeline
from .rewrite import FunctionPattern, PatternRewriter, RewritePattern, apply_patterns_greedily, pattern
from .inline import Inline
from .canonicalize import Canonicalize
from .cse import CSE
from .dce import DCE
from .licm import LICM

__all__ = ["PASS_REGISTRY", "Pass", "PassFailure", "PassManager", "get_pass", "parse_pipeline", "PipelineError",
           "tir_pipeline", "FunctionPattern", "PatternRewriter", "RewritePattern", "apply_patterns_greedily", "pattern",
           "Inline", "Canonicalize", "CSE", "DCE", "LICM"]
