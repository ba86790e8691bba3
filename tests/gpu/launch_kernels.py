"""Kernels and helpers the launch-path tests share (through fake drivers and on a real device)."""
import threading

import tilec
import tilec.language as tl


@tilec.jit
def scaled(out, a, b, BLOCK: tl.constexpr):
    """``a * i + b`` for a pair of scalars of any float kinds (f16 and bf16 by signature)."""
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, a.to(tl.float32) * offs + b.to(tl.float32))


@tilec.jit
def busy_for(out, ns):
    """Keeps its stream busy for ``ns`` nanoseconds of the GPU's global timer, then stores how long it waited."""
    start = tl.extra.cuda.globaltimer()
    now = start
    while now - start < ns:
        now = tl.extra.cuda.globaltimer()
    tl.store(out, now - start)


@tilec.jit
def positive(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.device_assert(tl.load(x + offs, mask=offs < n, other=1.0) > 0, "inputs must be positive")


def in_threads(work, count: int) -> list:
    """Run ``work(t)`` for t in range(count), each on a thread of its own; the exceptions they raised."""
    errors = []

    def run(t):
        try:
            work(t)
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=run, args=(t,)) for t in range(count)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return errors
