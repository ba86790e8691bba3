"""Compile the spelling benchmark's kernels with tilec and with Triton for one NVIDIA arch, without a GPU, and
print what each uses: registers, spills, shared memory, and the instruction mix of the hottest loop in SASS
(tensor-core instructions, shared loads/stores, barriers, global loads). What a GPU run would show as a speed gap
usually shows here first (a transposed operand shuffled through shared memory every iteration, spills).

    PYTHONPATH=. python benchmarks/tc_codegen.py [--arch 90] [--only NAME] [--sass DIR] [--cold]

The last column is each compile's wall time in seconds (source to cubin, ptxas included). With ``--cold`` both
compilers start from empty kernel caches (temporary directories) and each first compiles one kernel untimed, so
that one-time start-up (LLVM's, MLIR's) is charged to no row: the compile-time comparison of the issue's item 7.

Needs Triton (for its side; tilec's side alone with --no-triton), ptxas and cuobjdump (or nvdisasm) on PATH.
"""
import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir))
sys.path.insert(0, HERE)
from spelling_cases import CASES  # noqa: E402


def _load(use_tilec):
    from kernel_loading import load_kernels
    return load_kernels(use_tilec, "gpu_spelling_kernels.py")


def _sass(cubin: bytes) -> str:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.cubin")
        with open(p, "wb") as f:
            f.write(cubin)
        tool = shutil.which("cuobjdump")
        out = subprocess.run([tool, "-sass", p], capture_output=True, text=True).stdout if tool else ""
        res = subprocess.run([tool, "-res-usage", p], capture_output=True, text=True).stdout if tool else ""
    return out, res


def _usage(res: str):
    m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", res)
    return dict(zip(("regs", "stack", "shared", "local"), map(int, m.groups()))) if m else {}


KINDS = (("HGMMA", r"\bHGMMA\b"), ("IGMMA", r"\bIGMMA\b"), ("QGMMA", r"\bQGMMA\b"), ("HMMA", r"\bHMMA\b"),
         ("IMMA", r"\bIMMA\b"), ("LDS", r"\bLDS(M)?\b"), ("STS", r"\bSTS\b"), ("BAR", r"\bBAR\b"),
         ("LDG", r"\bLDG(STS)?\b"), ("LDGSTS", r"\bLDGSTS\b"), ("UTMA", r"\bUTMALDG\b"), ("STL", r"\bSTL\b"),
         ("LDL", r"\bLDL\b"), ("FFMA", r"\bFFMA\b"), ("MUFU", r"\bMUFU\b"))


def hot_loop(sass: str):
    """The instruction lines of the loop with the most tensor-core instructions (a backward branch's body)."""
    lines = [ln for ln in sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4,}\*/", ln)]
    addr = [int(re.match(r"\s*/\*([0-9a-f]+)\*/", ln).group(1), 16) for ln in lines]
    best, best_n = [], -1
    for i, ln in enumerate(lines):
        m = re.search(r"BRA\s+(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))", ln)
        target = None
        if m and m.group(1):
            target = int(m.group(1), 16)
        else:
            m2 = re.search(r"BRA\s+`\((\.L_x_\d+)\)", ln)
            if m2:
                lab = m2.group(1)
                for j, l2 in enumerate(sass.splitlines()):
                    if l2.strip().startswith(lab + ":"):
                        nxt = [x for x in sass.splitlines()[j + 1:] if re.match(r"\s*/\*[0-9a-f]{4,}\*/", x)]
                        if nxt:
                            target = int(re.match(r"\s*/\*([0-9a-f]+)\*/", nxt[0]).group(1), 16)
                        break
        if target is None or target > addr[i]:
            continue
        body = [x for x, a in zip(lines, addr) if target <= a <= addr[i]]
        n = sum(1 for x in body if re.search(r"GMMA|HMMA|IMMA", x))
        if n > best_n or (n == best_n and len(body) > len(best)):
            best, best_n = body, n
    return best


def mix(body):
    return {k: sum(1 for x in body if re.search(rx, x)) for k, rx in KINDS}


def constexprs(K, case):
    """The case's constexprs with dtype names resolved in the kernels module's own ``tl``."""
    return {n: getattr(K.tl, v[1]) if isinstance(v, tuple) and v[0] == "tl" else v for n, v in case.constexprs.items()}


def compile_tilec(K, case, arch):
    import tilec
    from tilec.compiler import ASTSource, Target
    fn = getattr(K, case.kernel)
    sig = {n: t for n, t in case.signature.items()}
    src = ASTSource(fn, signature=sig, constexprs=constexprs(K, case), attrs=case.tilec_attrs())
    ck = tilec.compile(src, Target("cuda", arch, 32), {"num_warps": case.num_warps, "num_stages": case.num_stages})
    return ck.asm.get("cubin"), ck.asm.get("ptx")


def compile_triton(K, case, arch):
    import triton
    from triton.backends.compiler import GPUTarget
    fn = getattr(K, case.kernel)
    sig = dict(case.signature)
    for n in case.constexprs:
        sig[n] = "constexpr"
    src = triton.compiler.ASTSource(fn, signature=sig, constexprs=constexprs(K, case), attrs=case.triton_attrs(fn))
    ck = triton.compile(src, target=GPUTarget("cuda", arch, 32),
                        options={"num_warps": case.num_warps, "num_stages": case.num_stages})
    return ck.asm["cubin"], ck.asm["ptx"]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--only", action="append")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--sass", metavar="DIR", help="write each kernel's SASS there")
    ap.add_argument("--cold", action="store_true", help="empty kernel caches; time compiles after a warm-up")
    args = ap.parse_args(argv)
    if args.cold:
        for var in ("TILEC_CACHE_DIR", "TRITON_CACHE_DIR"):
            os.environ[var] = tempfile.mkdtemp(prefix="tc_codegen_")
    sides = [("tilec", compile_tilec, _load(True))]
    if not args.no_triton:
        sides.append(("triton", compile_triton, _load(False)))
    if args.cold:
        warm = dataclasses.replace(CASES[0], num_stages=CASES[0].num_stages + 1)  # a variant no row compiles
        for _, comp, K in sides:
            comp(K, warm, args.arch)
    cols = ["regs", "local"] + [k for k, _ in KINDS] + ["loop", "secs"]
    print(f"{'case':34} {'side':6} " + " ".join(f"{c:>6}" for c in cols))
    for case in CASES:
        if args.only and not any(o in case.name for o in args.only):
            continue
        for side, comp, K in sides:
            try:
                t0 = time.perf_counter()
                cubin, ptx = comp(K, case, args.arch)
                secs = time.perf_counter() - t0
            except Exception as e:  # report and go on: one failing spelling must not hide the others
                print(f"{case.name:34} {side:6} FAILED {type(e).__name__}: {str(e).splitlines()[0][:120]}")
                continue
            sass, res = _sass(cubin)
            u = _usage(res)
            body = hot_loop(sass)
            m = mix(body)
            if args.sass:
                os.makedirs(args.sass, exist_ok=True)
                stem = os.path.join(args.sass, f"{case.name}.{side}".replace("/", "_"))
                for ext, text in (("sass", sass), ("ptx", ptx)):
                    with open(f"{stem}.{ext}", "w") as f:
                        f.write(text)
            vals = [u.get("regs", -1), u.get("local", -1)] + [m[k] for k, _ in KINDS] + [len(body), f"{secs:.2f}"]
            print(f"{case.name:34} {side:6} " + " ".join(f"{v:>6}" for v in vals))


if __name__ == "__main__":
    main()
