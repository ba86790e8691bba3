"""examples/torch_op.py runs end to end on the CPU (the SwiGLU operator eager, backward, compiled with
fullgraph=True, exported)."""
import os
import sys

import pytest

pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0 for the CPU build)")

EXAMPLES = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples"))


def test_torch_op_example(capsys):
    sys.path.insert(0, EXAMPLES)
    try:
        import torch_op
    finally:
        sys.path.remove(EXAMPLES)
    torch_op.main(tokens=19, dim=40, hidden=77, backend="aot_eager", timing=False)
    assert "0 breaks), torch.export: ok" in capsys.readouterr().out
