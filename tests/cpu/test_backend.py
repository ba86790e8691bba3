"""The backend's contract: options, stage names and texts, loading from cached text alone, compile time that does
not grow with tile size, vector code for contiguous masked accesses, tilec errors instead of LLVM tracebacks,
and print/assert."""
import re
import time

import numpy as np
import pytest

from tilec.errors import BackendError
from tilec.ir.parser import parse_module
from tilec.targets.cpu.backend import CPUBackend

from . import kernels as K
from .helpers import compile_cpu


def test_options_and_stages():
    be = CPUBackend(None)
    opts = be.parse_options({"num_warps": 8, "num_stages": 2, "debug": True})
    assert opts.num_warps == 8 and opts.num_stages == 2 and opts.debug is True
    assert [n for n, _ in be.stages(opts)] == ["plan", "llir", "asm"]


def test_load_from_cached_text_only():
    _, asm, md = compile_cpu(K.vector_add(128))
    import json
    md2 = json.loads(json.dumps(md))
    run = CPUBackend(None).load({"llir": asm["llir"], "asm": asm["asm"]}, md2)
    x, y = np.arange(300, dtype=np.float32), np.ones(300, np.float32)
    o = np.zeros(300, np.float32)
    run((3, 1, 1), [x, y, o, 300])
    np.testing.assert_array_equal(o, x + 1)


def test_contiguous_masked_load_is_vector_code():
    _, asm, _ = compile_cpu(K.vector_add(1024))
    text = asm["asm"]
    vec = re.findall(r"\bv(?:movups|movdqu\w*|maskmov\w*|addps)\b[^\n]*%[yz]mm", text)
    assert vec, "no vector loads/adds in the assembly"
    assert "masked.load" in asm["llir"] or re.search(r"load <\d+ x float>", asm["llir"])
    assert "gather" not in text


@pytest.mark.parametrize("make", [lambda: K.matmul(128, 128, 32), lambda: K.softmax(128 * 128),
                                  lambda: K.layer_norm(16384)])
def test_compile_time_independent_of_tile_size(make):
    m = make()
    t0 = time.perf_counter()
    compile_cpu(m)
    dt = time.perf_counter() - t0
    assert dt < 5.0, f"compile took {dt:.2f}s"


def test_big_tiles_use_scratch_not_stack():
    run, asm, md = compile_cpu(K.softmax(1 << 16))
    assert md["scratch_size"] >= (1 << 16) * 4
    n = 70_000
    x = np.random.default_rng(0).standard_normal((2, n)).astype(np.float32)
    o = np.zeros_like(x)
    run((2, 1, 1), [x, o, n, n])
    np.testing.assert_allclose(o.sum(1), [1, 1], rtol=1e-4)


def test_fp8_is_held_as_its_codes():
    """fp8 has no LLVM type: values travel as their i8 codes, so a load/store moves the bytes unchanged."""
    m = parse_module("""module {
  func @k(%x: ptr<f8e4m3>) {kernel = true} {
    %v = load %x : f8e4m3
    store %x, %v
    return
  }
}""")
    run, _, _ = compile_cpu(m)
    x = np.arange(256, dtype=np.uint8)[77:78].copy()
    run((1, 1, 1), [x])
    assert x[0] == 77


def test_llvm_rejection_is_backend_error_with_excerpt():
    from tilec.codegen import driver
    with pytest.raises(BackendError) as e:
        driver.parse("define void @f() {\n  %x = add i32 1, %nope\n  ret void\n}\n")
    assert "nope" in str(e.value)


def test_print_and_assert(capfd):
    m = parse_module("""module {
  func @k(%x: ptr<i32>) {kernel = true} {
    %v = load %x : i32
    print %v {prefix = "v="}
    %z = constant {value = 5} : i32
    %ok = cmp %v, %z {predicate = "lt"} : i1
    assert %ok {message = "v too big"}
    return
  }
}""")
    run, _, _ = compile_cpu(m)
    run((1, 1, 1), [np.array([3], np.int32)])
    assert "v=3" in capfd.readouterr().out
    with pytest.raises(AssertionError, match="v too big"):
        run((2, 1, 1), [np.array([7], np.int32)])


def test_concurrent_launches_from_python_threads():
    import threading
    run, _, _ = compile_cpu(K.softmax(256))
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((300, 200)).astype(np.float32) for _ in range(4)]
    outs = [np.zeros_like(x) for x in xs]

    def go(i):
        for _ in range(5):
            run((300, 1, 1), [xs[i], outs[i], 200, 200])
    ts = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for x, o in zip(xs, outs):
        e = np.exp(x - x.max(1, keepdims=True))
        np.testing.assert_allclose(o, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_plan_names_the_decisions():
    _, asm, _ = compile_cpu(K.softmax(1024))
    plan = asm["plan"]
    assert plan.startswith("// plan: CPU lowering decisions")
    assert "scratch 8192 bytes" in plan
    assert "buffer scratch[0:4096] (2 uses)" in plan          # the row, used by max and by sub
    assert "vector x16 store, fused producers" in plan
    _, asm, _ = compile_cpu(K.matmul(64, 64, 32))
    assert "micro-kernel 8x32" in asm["plan"] and "accumulates in place" in asm["plan"]


def test_resources_are_reported():
    """n_regs and friends come from the assembly (a tutorial divides by n_regs: never 0)."""
    import tilec
    _, _, md = compile_cpu(K.matmul(64, 64, 32))
    assert 8 <= md["num_regs"] <= 64 and md["vector_bytes"] in (16, 32, 64) and md["stack_bytes"] >= 0
    assert md["spill_stores"] >= 0
    from tilec.targets.cpu.resources import resources
    r = resources("\tvmovaps %ymm3, %ymm1\n\tsubq $96, %rsp\n\tmovl %eax, %r9d\n\tmovq %rax, 8(%rsp) # 8-byte Spill\n")
    assert r == {"num_regs": 5, "spill_stores": 1, "stack_bytes": 96, "vector_bytes": 32}


def test_shared_is_the_per_program_scratch():
    """metadata["shared"] is the scratch each program gets (what the launcher allocates), never 0: Triton's
    softmax tutorial divides the device's shared memory by it."""
    from tilec.targets.cpu.resources import scratch_per_program
    _, _, md = compile_cpu(K.vector_add(128))
    assert md["shared"] == scratch_per_program(md["scratch_size"]) >= 128
    _, _, md = compile_cpu(K.matmul(64, 64, 32))
    assert md["shared"] == scratch_per_program(md["scratch_size"]) > md["scratch_size"]
