"""Ahead-of-time compilation: a kernel specialisation becomes C that a program links without Python.

``spec.py`` reads what to compile (the kernel, ``-s`` signature, ``-g`` grid); ``cuda_c.py`` writes C source and
a header embedding the cubin (or PTX); ``cpu_object.py`` writes a host object and a header; ``dispatch.py`` writes
the dispatcher over several specialisations that ``python -m tilec.tools.link`` asks for. Every header carries
one ``// tilec-aot {json}`` line describing its specialisation, which is all the linker reads.
"""
