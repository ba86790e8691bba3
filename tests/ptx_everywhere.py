"""Every kernel the suite compiles for the CPU is also compiled for sm_80 and sm_90 and assembled with ptxas (when
ptxas is on PATH), so invalid PTX fails the run even on a machine without a GPU; every memory access in the PTX must
be provably aligned to its width (``ptx_alignment.py``), so a vector width the addresses do not justify fails too.

The plugin records each distinct CPU compilation; at the end of the session it cross-compiles them. Features the
CUDA backend reports as unsupported (a ``BackendError`` saying so) are listed, not failed; anything else — ptxas
rejecting the PTX, LLVM rejecting the IR, a crash — fails the session. ``TILEC_TEST_PTX=0`` turns it off;
``TILEC_TEST_PTX_REPORT=file`` appends the summary there too (under pytest-xdist each worker checks its own kernels
and its terminal output is not shown).
"""
import os
import shutil
import time

import pytest

import compile_env

ARCHS = (80, 90)
_seen: dict = {}


def enabled() -> bool:
    return os.environ.get("TILEC_TEST_PTX", "1") != "0" and shutil.which("ptxas") is not None


def _record():
    from tilec import pipeline

    def observe(src, target, options, kernel):
        if target.backend == "cpu" and "ir_override" not in options:  # a stage file is for one backend only
            _seen.setdefault(kernel.metadata["hash"], (src, dict(options), compile_env.snapshot()))

    pipeline.COMPILE_OBSERVERS.append(observe)


# Kernels of the suite that hit a known CUDA backend bug (tests/language marks the same cases known_bug on CUDA).
KNOWN_CUDA_BUGS: dict = {}

# Kernels whose vector accesses are justified in the IR (axis analysis) but not provably so from the PTX: their
# index tiles reach the address arithmetic through a shared-memory layout conversion (a 3-d ``arange`` expanded
# from a 2-d layout), which the PTX analysis cannot follow. (module, kernel) -> why.
ALIGNMENT_UNPROVABLE = {
    ("test_dot", "batched_kernel"): "3-d aranges converted through shared memory",
    ("test_gather", "gather3"): "3-d aranges converted through shared memory",
}


def _kernel_key(src):
    fn = getattr(src.fn, "fn", None)
    module = (getattr(fn, "__module__", "") or "").rsplit(".", 1)[-1]
    return module, getattr(src.fn, "__name__", "")


def _known_bug(src):
    return KNOWN_CUDA_BUGS.get(_kernel_key(src))


def pytest_configure(config):
    if enabled():
        _record()


def pytest_sessionfinish(session, exitstatus):
    if not enabled() or not _seen or exitstatus not in (0, pytest.ExitCode.OK):
        return
    import tilec
    from ptx_alignment import check_kernel
    t0 = time.perf_counter()
    failures, unsupported, done = [], {}, 0
    for src, options, env in _seen.values():
        for arch in ARCHS:
            try:
                with compile_env.restored(env):
                    k = tilec.compile(src, target=tilec.Target("cuda", arch, 32), options=options)
                assert "cubin" in k.asm, "no cubin although ptxas is on PATH"
                bad = check_kernel(k) if _kernel_key(src) not in ALIGNMENT_UNPROVABLE else []
                assert not bad, "memory accesses not provably aligned to their width: " + "; ".join(
                    f"line {a.line}: {a.text.strip()} (needs {a.needs}, known {a.known})" for a in bad[:3])
                done += 1
            except Exception as e:  # noqa: BLE001 - every failure is reported below
                name = getattr(src.fn, "__name__", "?")
                known = _known_bug(src)
                if known or compile_env.unsupported(e):
                    why = f"known bug: {known}" if known else str(e).splitlines()[0][:160]
                    unsupported.setdefault(why, []).append(f"{name}@sm_{arch}")
                else:
                    failures.append(f"{name} sm_{arch} {src.signature} {src.constexprs}: "
                                    f"{type(e).__name__}: {str(e)[:400]}")
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    write = tr.write_line if tr else print
    write(f"\nPTX for every CPU-compiled kernel: {done} assembled with ptxas for sm_80/sm_90 "
          f"({len(_seen)} kernels, {time.perf_counter() - t0:.0f} s); {sum(map(len, unsupported.values()))} "
          f"unsupported on CUDA, {len(failures)} failed")
    for why, where in sorted(unsupported.items()):
        write(f"  unsupported on CUDA ({len(where)}): {why} [{', '.join(sorted(set(where))[:4])}...]")
    for f in failures:
        write(f"  FAILED {f}")
    if os.environ.get("TILEC_TEST_PTX_REPORT"):  # under pytest-xdist a worker's terminal output is not shown
        with open(os.environ["TILEC_TEST_PTX_REPORT"], "a", encoding="utf-8") as fh:
            fh.write(f"PTX: {done} assembled ({len(_seen)} kernels), {len(failures)} failed\n")
            fh.write("".join(f"  FAILED {f}\n" for f in failures))
    compile_env.fail_session(session, failures, "PTX")
