"""Flash-attention forward fp16, B4 H32 S4096, D64/D128, causal and not: tilec vs Triton vs torch on one GPU
in one run; prints a table (see gpu_tensorcores.py; accepts --quick and --sm80).

    PYTHONPATH=. python benchmarks/gpu_attention.py [--quick] [--sm80]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_tensorcores import main  # noqa: E402

if __name__ == "__main__":
    main(["--only", "attention"] + sys.argv[1:])
