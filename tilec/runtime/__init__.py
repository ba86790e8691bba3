"""The runtime: ``@jit`` functions and their launch (``jit.py``), what arguments mean for specialisation
(``args.py``, ``specialize.py``), the autotuner and heuristics (``autotuner.py``) and the interpreter driver
(``interpreter.py``)."""
