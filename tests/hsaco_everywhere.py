"""Every kernel the suite compiles for the CPU is also cross-compiled for AMD GPUs (gfx942 and gfx90a wave64,
gfx1100 wave32), linked by tilec's own ELF linker, and its code object structurally validated
(tests/hip/hsaco_check.py: ELF header, segments, descriptors, metadata kernel and kernarg layout, resources), so
a kernel the AMD backend mishandles fails the run on a machine without a GPU or ROCm.

Like ptx_everywhere.py: the plugin records each distinct CPU compilation and cross-compiles them at the end of
the session. Features the HIP backend reports as unsupported (a ``BackendError`` saying so) are listed by reason,
not failed; anything else (LLVM rejecting the IR, a link error, an invalid code object, a crash) fails the
session. ``TILEC_TEST_HSACO=0`` turns it off; ``TILEC_TEST_HSACO_ARCHS=gfx942:64,gfx1100:32`` picks targets;
``TILEC_TEST_HSACO_REPORT=file`` appends the summary there too (under pytest-xdist each worker checks its own
kernels and its terminal output is not shown).
"""
import os
import sys
import time

import pytest

import compile_env

DEFAULT_ARCHS = "gfx942:64,gfx90a:64,gfx1100:32"
_seen: dict = {}


def enabled() -> bool:
    return os.environ.get("TILEC_TEST_HSACO", "1") != "0"


def archs():
    out = []
    for spec in os.environ.get("TILEC_TEST_HSACO_ARCHS", DEFAULT_ARCHS).split(","):
        name, _, ws = spec.strip().partition(":")
        out.append((name, int(ws) if ws else None))
    return out


def _record():
    from tilec import pipeline

    def observe(src, target, options, kernel):
        if target.backend == "cpu" and "ir_override" not in options:  # a stage file is for one backend only
            _seen.setdefault(kernel.metadata["hash"], (src, dict(options), compile_env.snapshot()))

    pipeline.COMPILE_OBSERVERS.append(observe)


def pytest_configure(config):
    if enabled():
        _record()


def pytest_sessionfinish(session, exitstatus):
    if not enabled() or not _seen or exitstatus not in (0, pytest.ExitCode.OK):
        return
    import tilec
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "hip"))
    from hsaco_check import validate_hsaco
    t0 = time.perf_counter()
    failures, unsupported, done = [], {}, 0
    targets = archs()
    for src, options, env in _seen.values():
        for arch, ws in targets:
            try:
                with compile_env.restored(env):
                    k = tilec.compile(src, target=tilec.Target("hip", arch, ws), options=options)
                validate_hsaco(k.asm["hsaco"], k.name, arch, k.metadata["warp_size"])
                done += 1
            except Exception as e:  # noqa: BLE001 - every failure is reported below
                name = getattr(src.fn, "__name__", "?")
                if compile_env.unsupported(e):
                    unsupported.setdefault(str(e).splitlines()[0][:160], []).append(f"{name}@{arch}")
                else:
                    failures.append(f"{name} {arch} {src.signature} {src.constexprs}: "
                                    f"{type(e).__name__}: {str(e)[:400]}")
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    write = tr.write_line if tr else print
    names = "/".join(a for a, _ in targets)
    write(f"\nAMD code objects for every CPU-compiled kernel: {done} linked and validated for {names} "
          f"({len(_seen)} kernels, {time.perf_counter() - t0:.0f} s); {sum(map(len, unsupported.values()))} "
          f"unsupported on HIP, {len(failures)} failed")
    for why, where in sorted(unsupported.items()):
        write(f"  unsupported on HIP ({len(where)}): {why} [{', '.join(sorted(set(where))[:4])}...]")
    for f in failures:
        write(f"  FAILED {f}")
    if os.environ.get("TILEC_TEST_HSACO_REPORT"):
        lines = [f"AMD code objects: {done} validated ({len(_seen)} kernels), "
                 f"{sum(map(len, unsupported.values()))} unsupported, {len(failures)} failed"]
        lines += [f"  unsupported ({len(w)}): {why}" for why, w in sorted(unsupported.items())]
        lines += [f"  FAILED {f}" for f in failures]
        with open(os.environ["TILEC_TEST_HSACO_REPORT"], "a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    compile_env.fail_session(session, failures, "AMD")
