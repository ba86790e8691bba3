"""A failing fuzz kernel as a standalone script: the kernel, its exact launch arguments, and a run on the
interpreter and the compiled CPU backend that prints each output side by side."""
from __future__ import annotations

import numpy as np

from .data import arguments
from .infer import infer
from .program import Kernel
from .render import params, render


def _array_src(a: np.ndarray) -> str:
    vals = ", ".join(repr(v.item()) if not (isinstance(v.item(), float) and not np.isfinite(v)) else
                     f"float('{v.item()}')" for v in a)
    return f"np.array([{vals}], dtype=np.{a.dtype.name})"


def repro_script(k: Kernel, outcome=None) -> str:
    info = infer(k)
    args, cx, grid = arguments(k, info)
    names = params(k, info)
    head = [f"# tilec fuzz reproducer: seed {k.seed}"]
    if outcome is not None:
        head.append(f"# {outcome.status}: " + outcome.detail.replace("\n", "\n# "))
    arg_src = ",\n        ".join(_array_src(a) if isinstance(a, np.ndarray) else repr(a) for a in args)
    outs = [i for i, n in enumerate(names) if n in info.outputs]
    main = f'''

if __name__ == "__main__":
    import numpy as np

    def arguments():
        return [
        {arg_src}]

    results = {{}}
    for mode in ("interp", "cpu"):
        args = arguments()
        tilec.jit(kernel.fn, interpret=mode == "interp")[{grid!r}](*args, **{cx!r})
        results[mode] = args
    for i in {outs!r}:
        name = {names!r}[i]
        same = np.array_equal(results["interp"][i], results["cpu"][i], equal_nan=True)
        print(name, "same" if same else "DIFFERENT")
        if not same:
            print("  interp:", results["interp"][i])
            print("  cpu:   ", results["cpu"][i])
'''
    return "\n".join(head) + "\n" + render(k, info) + main
