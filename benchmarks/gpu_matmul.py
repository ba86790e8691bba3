"""Matmul fp16 4096^3 and 8192^3 (the tutorial's grouped 128x128x64 kernel): tilec vs Triton vs torch on one GPU
in one run; prints a table (see gpu_tensorcores.py; accepts --quick and --sm80).

    PYTHONPATH=. python benchmarks/gpu_matmul.py [--quick] [--sm80]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_tensorcores import main  # noqa: E402

if __name__ == "__main__":
    main(["--only", "matmul"] + sys.argv[1:])
