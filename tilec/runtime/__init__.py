"""The runtime: ``@jit`` functions and their launch (``jit.py``), what arguments mean for specialisation
(``args.py``, ``specialize.py``), the autotuner and heuristics (``autotuner.py``) and the interpreter driver
(``interpreter.py``).

It sits on top of everything else: it reaches the compiler through ``compiler.py`` (``ASTSource``,
``target_for``) and ``pipeline.py`` (``compile_source``), backends through the registry in ``backends.py``, and
learns what an argument is from ``targets/arguments.py`` (shared with the backends' launchers). Nothing below
imports it: the frontend knows a @jit function as a ``frontend.function.KernelFunction``."""
