"""AMD backend tests: everything here cross-compiles (no ROCm, no GPU); the GPU test cases of tests/gpu are
reused, so that directory is importable."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "gpu"))
sys.path.insert(0, os.path.dirname(__file__))
