"""``python -m tilec.tools.view``: see ``cli.py``."""
import sys

from .cli import main

sys.exit(main())
