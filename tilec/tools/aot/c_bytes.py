"""A byte string as the initialiser of a C ``unsigned char`` array: how the GPU targets embed their code objects
(cubin, PTX, hsaco) in generated C, so a program needs no file beside it at run time."""
from __future__ import annotations


def bytes_literal(data: bytes, per_line: int = 24) -> str:
    rows = [", ".join(f"0x{b:02x}" for b in data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return ",\n  ".join(rows)
