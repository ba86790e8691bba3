"""Target-independent tir passes: the pass manager, the pattern-rewriting driver and one file per pass."""
from .manager import PASS_REGISTRY, Pass, PassFailure, PassManager, get_pass, parse_pipeline, tir_pipeline
from .rewrite import FunctionPattern, PatternRewriter, RewritePattern, apply_patterns_greedily, pattern
from .inline import Inline
from .canonicalize import Canonicalize
from .cse import CSE
from .dce import DCE
from .licm import LICM

__all__ = ["PASS_REGISTRY", "Pass", "PassFailure", "PassManager", "get_pass", "parse_pipeline", "tir_pipeline",
           "FunctionPattern", "PatternRewriter", "RewritePattern", "apply_patterns_greedily", "pattern",
           "Inline", "Canonicalize", "CSE", "DCE", "LICM"]
