"""Command-line tools for looking inside the compiler: each module here is one tool with a ``main``.

- ``opt.py``: ``tilec-opt`` / ``python -m tilec.opt``, passes over textual tir or gir (the driver is
  ``tilec/passes/cli.py``; this adds ``--target``).
- ``report.py``: ``python -m tilec.tools.report script.py``, the resources of every kernel a script compiles
  (``collect.py`` watches the compiles, ``resources.py`` reads the metadata).
- ``fuzz/``: ``python -m tilec.tools.fuzz``, the differential fuzzer (random valid kernels run on several
  backends, results compared, failures minimised).
- ``compile.py`` / ``link.py``: ``python -m tilec.tools.compile`` / ``link``, ahead-of-time C (``aot/``: the
  specialisation spec, CUDA C with the embedded cubin, host objects, dispatchers).
- ``view/``: ``python -m tilec.tools.view script.py``, the pass-by-pass HTML pages (also ``TILEC_DUMP_HTML``).
- ``targets.py``: ``--target BACKEND[:ARCH]``, read alike by the tools.
"""
