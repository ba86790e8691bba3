"""Reports how it was run: python -m tilec run must look like running the script with python."""
import os
import sys

import triton

print(f"name={__name__}")
print(f"argv={sys.argv!r}")
print(f"path0={os.path.normcase(sys.path[0])}")
print(f"tilec_backed={getattr(triton, '__tilec_compat__', False)}")
if "--fail" in sys.argv:
    sys.exit(3)
