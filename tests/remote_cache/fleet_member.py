"""One machine of a fleet, as a child process: launches ``kernels.scale_add`` with each BLOCK given on the command
line (each a variant), checks every result against numpy, and prints one JSON line: whether all were right, the
cache's counts and any cache warnings.

    python fleet_member.py 32 64 128 [--sleep-after-first S]
"""
import json
import sys
import time
import warnings

import numpy as np

from tilec import cache

from kernels import scale_add


def main(argv):
    blocks, pause = [], 0.0
    it = iter(argv)
    for a in it:
        if a == "--sleep-after-first":
            pause = float(next(it))
        else:
            blocks.append(int(a))
    ok, caught = True, []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i, block in enumerate(blocks):
            rng = np.random.default_rng(block)
            n = 1000 + block % 7
            x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
            out = np.empty_like(x)
            scale_add[(-(-n // block),)](x, y, out, 2.5, n, BLOCK=block)
            ok &= bool(np.allclose(out, 2.5 * x + y, rtol=1e-6))
            print(json.dumps({"launched": block}), flush=True)
            if i == 0 and pause:
                time.sleep(pause)
        caught = [str(x.message) for x in w if issubclass(x.category, cache.CacheWarning)]
    print(json.dumps({"ok": ok, "stats": cache.stats(), "warnings": caught}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
