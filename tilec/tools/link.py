"""``python -m tilec.tools.link out/*.h -o out/dispatch``: writes ``out/dispatch.h`` and ``out/dispatch.c``, the
dispatchers over the AOT specialisations that ``python -m tilec.tools.compile`` wrote, one per out name
(``aot/dispatch.py`` says what each exports). Exit status 0, or 2 with a one-line message for bad input."""
from __future__ import annotations

import argparse
import os
import sys

from .aot.dispatch import group, read_header, write
from .aot.spec import AOTError


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tilec.tools.link",
                                 description="Write dispatchers over AOT-compiled kernel specialisations.")
    ap.add_argument("headers", nargs="+", help="headers written by python -m tilec.tools.compile")
    ap.add_argument("-o", "--out", default="dispatch", help="path prefix of the .h/.c written (default: dispatch)")
    a = ap.parse_args(argv)
    try:
        out_name = os.path.basename(a.out)
        if not out_name:
            raise AOTError(f"-o {a.out!r} names a folder; give a path prefix such as out/dispatch")
        h, c = write(group([read_header(h) for h in a.headers]), out_name)
        if os.path.dirname(a.out):
            os.makedirs(os.path.dirname(a.out), exist_ok=True)
        for ext, text in ((".h", h), (".c", c)):
            with open(a.out + ext, "w") as f:
                f.write(text)
            print(a.out + ext)
    except AOTError as e:
        print(f"tilec: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
