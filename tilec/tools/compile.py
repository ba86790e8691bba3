"""``python -m tilec.tools.compile``: compile one kernel specialisation ahead of time into C.

    python -m tilec.tools.compile kernels.py -n add_kernel -s "*fp32:16, *fp32:16, *fp32:16, i32, 1024" \\
        -g "(n + 1023) / 1024, 1, 1" -w 4 -ns 3 -t cuda:90 -o out/add

writes ``out/add.<sig-hash>.h`` and, for CUDA, ``out/add.<sig-hash>.c`` (cubin or PTX embedded,
``load_``/``unload_`` and the launch function ``add_<sig-hash>(CUstream, args...)``), for ``-t hip:gfx942`` the
same over the HIP runtime (hsaco embedded, ``add_<sig-hash>(hipStream_t, args...)``), for ``-t cpu`` the host
object ``out/add.<sig-hash>.o`` (``add_<sig-hash>(args...)`` runs the grid on the calling thread).
``python -m tilec.tools.link out/*.h -o out/add_dispatch`` then writes a dispatcher over several of them.
Exit status 0, or 2 with a one-line ``tilec: ...`` message for bad input (1 when the compiler itself fails).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from ..errors import TilecError
from .aot.spec import AOTError, KernelSpec, c_type, load_kernel, parse_grid, parse_signature
from .targets import parse_target
from ..compiler import ASTSource, Target
from ..errors import CompilationError, for_user
from ..pipeline import compile_source
from ..targets.options import Options


def _parser():
    ap = argparse.ArgumentParser(prog="python -m tilec.tools.compile",
                                 description="Compile a @jit kernel ahead of time into C (CUDA, HIP) or a host object.")
    ap.add_argument("path", help="the Python file that defines the kernel")
    ap.add_argument("-n", "--kernel-name", required=True, help="the kernel's name in that file")
    ap.add_argument("-s", "--signature", required=True,
                    help='one entry per parameter: "*fp32:16, i32:1, i32, 1024" (types with optional :16/:1 '
                         'hints; values for constexprs)')
    ap.add_argument("-g", "--grid", default="1,1,1", help='C expressions over the parameters: "n / 1024, 1, 1"')
    ap.add_argument("-w", "--num-warps", type=int, default=Options.num_warps)
    ap.add_argument("-ns", "--num-stages", type=int, default=Options.num_stages)
    ap.add_argument("--debug", action="store_true", help="keep device_assert checks (as Triton's debug=True)")
    ap.add_argument("-t", "--target", default="cpu",
                    help="cpu (default), cuda:90, cuda:80, ..., hip:gfx942, hip:gfx1100 (wave32), ...")
    ap.add_argument("-o", "--out-path", help="path prefix of the outputs (default: the out name, here)")
    ap.add_argument("-on", "--out-name", help="C name of the kernel (default: the -o basename or -n)")
    return ap


def build(a) -> list[str]:
    """Compile as ``a`` (parsed arguments) asks; the paths written."""
    try:
        target, backend = parse_target(a.target)
    except ValueError as e:
        raise AOTError(str(e)) from None
    if target.backend not in ("cpu", "cuda", "hip"):
        raise AOTError(f"AOT output for {target.backend!r} is not supported yet (cpu, cuda, hip)")
    fn = load_kernel(a.path, a.kernel_name)
    runtime, constexprs = parse_signature(fn, a.signature)
    grid = parse_grid(a.grid, runtime, constexprs)
    out_path = a.out_path or a.out_name or a.kernel_name
    out_name = a.out_name or os.path.basename(out_path) or a.kernel_name
    if not out_name.isidentifier():
        raise AOTError(f"out name {out_name!r} is not a C identifier (give -on)")
    arch = getattr(backend, "arch", None)
    if target.backend == "hip":
        from .aot.hip_c import arch_name  # each backend's C generator only when asked for
        arch = arch_name(backend)
    spec = KernelSpec(fn, fn.__name__, runtime, constexprs, grid, a.num_warps, a.num_stages, target.backend,
                      arch, out_name, {"debug": True} if a.debug else {})
    warp = getattr(backend, "warp_size", 1) or 1
    src = ASTSource(fn, signature=spec.signature, constexprs=constexprs)
    try:
        compiled = compile_source(src, Target(target.backend, target.arch, warp),
                                  {"num_warps": a.num_warps, "num_stages": a.num_stages, "debug": a.debug,
                                   # a C caller passes no array extents: asserts only, in their plain form
                                   **({"bounds_checks": False} if a.debug else {})})
    except CompilationError as e:
        raise for_user(e) from None
    for p, kind in zip(runtime, compiled.metadata["param_kinds"]):
        p.kind, p.ctype = kind, c_type(kind, target.backend)
    record = json.dumps(spec.describe(), separators=(",", ":"))
    base = os.path.join(os.path.dirname(out_path), f"{out_name}.{spec.sig_hash}")
    if os.path.dirname(base):
        os.makedirs(os.path.dirname(base), exist_ok=True)
    written = {}
    if target.backend == "cpu":
        from .aot import cpu_object  # each backend's generator only when asked for (this one needs llvmlite)
        written[base + ".o"] = cpu_object.object_code(spec, compiled)
        written[base + ".h"] = cpu_object.header(spec, record)
    elif target.backend == "hip":
        from .aot import hip_c  # each backend's generator only when asked for
        image = hip_c.image_of(compiled)
        written[base + ".h"] = hip_c.header(spec, record, compiled)
        written[base + ".c"] = hip_c.source(spec, compiled, image)
    else:
        from .aot import cuda_c  # each backend's generator only when asked for
        image, kind = cuda_c.image_of(compiled)
        written[base + ".h"] = cuda_c.header(spec, record, kind)
        written[base + ".c"] = cuda_c.source(spec, compiled, image, kind)
    for path, data in written.items():
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
    return list(written)


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    try:
        for path in build(a):
            print(path)
    except AOTError as e:
        print(f"tilec: {e}", file=sys.stderr)
        return 2
    except TilecError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"tilec: compiling {a.kernel_name} failed: {first}", file=sys.stderr)
        if os.environ.get("TILEC_DEBUG"):
            raise
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
