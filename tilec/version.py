__version__ = "0.1.0"
#: the Triton release whose API tilec follows (``triton.__version__`` under ``tilec.compat`` / ``python -m tilec run``)
TRITON_API_VERSION = "3.6.0"
