"""python -m tilec.tools.compile / link: AOT output that C programs build against and run (the CPU where a C
compiler is on PATH; CUDA with nvcc on a GPU machine), the dispatcher's choice among specialisations, and a
one-line error for each kind of bad input."""
import json
import os
import re
import shutil
import subprocess
import textwrap

import pytest

from tilec.tools import compile as aot_compile
from tilec.tools import link as aot_link

KERNELS = textwrap.dedent('''
    import tilec
    import tilec.language as tl


    @tilec.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


    @tilec.jit
    def axpb_kernel(x_ptr, out_ptr, rows, cols, a, b, BLOCK: tl.constexpr):
        r = tl.program_id(1)
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < cols
        x = tl.load(x_ptr + r * cols + offs, mask=mask)
        tl.store(out_ptr + r * cols + offs, (x * a + b).to(tl.float32), mask=mask)


    @tilec.jit
    def checked_kernel(x_ptr, n):
        v = tl.load(x_ptr + tl.program_id(0))
        tl.device_assert(v >= 0, "negative input")
''')

MAIN_C = textwrap.dedent('''
    #include <stdio.h>
    #include <stdlib.h>
    #include "dispatch.h"

    int main(int argc, char **argv) {
      int n = atoi(argv[1]), algo = atoi(argv[2]), off = atoi(argv[3]), m = n + 32;
      float *x = aligned_alloc(64, 4 * m), *y = aligned_alloc(64, 4 * m), *o = aligned_alloc(64, 4 * m);
      for (int i = 0; i < m; i++) { x[i] = (float)i; y[i] = 0.5f * i; o[i] = -1.0f; }
      int rc = add(x + off, y + off, o + off, n, algo);
      int bad = 0;
      for (int i = 0; i < m; i++) {
        float want = (i >= off && i < off + n) ? 1.5f * i : -1.0f;
        if (o[i] != want) bad++;
      }
      /* 3 rows of 50: out = x * 2 + 0.25 (a 2-d grid, an f32 and an f64 scalar) */
      float *o2 = aligned_alloc(64, 4 * 160);
      int rc2 = axpb(x, o2, 3, 50, 2.0f, 0.25, 0);
      for (int i = 0; i < 150; i++) if (o2[i] != 2.0f * i + 0.25f) bad++;
      float neg[4] = {1, 2, -3, 4};
      int rc3 = checked(neg, 4, 0);
      printf("rc %d %d %d algos %d bad %d\\n", rc, rc2, rc3, add_get_num_algos(), bad);
      return 0;
    }
''')


def _cc():
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def _compile(tmp_path, *args):
    src = tmp_path / "kernels.py"
    if not src.exists():
        src.write_text(KERNELS)
    assert aot_compile.main([str(src), *args]) == 0


def _cpu_aot(tmp_path):
    out = tmp_path / "out"
    add = ["-n", "add_kernel", "-g", "(n + 63) / 64", "-o", str(out / "add")]
    _compile(tmp_path, *add, "-s", "*fp32:16, *fp32:16, *fp32:16, i32, 64")
    _compile(tmp_path, *add, "-s", "*fp32, *fp32, *fp32, i32, 64")
    _compile(tmp_path, "-n", "add_kernel", "-g", "(n + 15) / 16", "-o", str(out / "add"), "-s",
             "*fp32, *fp32, *fp32, i32, 16")
    _compile(tmp_path, "-n", "axpb_kernel", "-g", "(cols + BLOCK - 1) / BLOCK, rows", "-o", str(out / "axpb"),
             "-s", "*fp32, *fp32, i32, i32, fp32, fp64, 32")
    _compile(tmp_path, "-n", "checked_kernel", "-g", "n", "-o", str(out / "checked"), "-s", "*fp32, i32",
             "--debug")
    headers = sorted(str(p) for p in out.glob("*.h"))
    assert aot_link.main(headers + ["-o", str(out / "dispatch")]) == 0
    return out


def test_cpu_aot_outputs_and_records(tmp_path):
    out = _cpu_aot(tmp_path)
    objs = sorted(p.name for p in out.glob("*.o"))
    assert len(objs) == 5 and all(n.split(".")[0] in ("add", "axpb", "checked") for n in objs)
    recs = [json.loads(line.split(" ", 2)[2]) for h in out.glob("add.*.h")
            for line in h.read_text().splitlines() if line.startswith("// tilec-aot ")]
    assert len(recs) == 3
    assert {r["algo"].split(";")[0] for r in recs} == {"BLOCK=64", "BLOCK=16"}
    assert sorted((p["hint"] or 0) for r in recs for p in r["params"] if p["name"] == "x_ptr") == [0, 0, 16]
    src = (out / "dispatch.c").read_text()
    # the aligned specialisation is tried before the general one of the same algorithm
    aligned = next(r["func"] for r in recs if r["params"][0]["hint"] == 16)
    general = next(r["func"] for r in recs if r["params"][0]["hint"] is None and "BLOCK=64" in r["algo"])
    assert src.index(aligned) < src.index(general)
    assert "add_get_num_algos(void) { return 2; }" in src


@pytest.mark.skipif(_cc() is None, reason="no C compiler (cc, gcc or clang) on PATH")
def test_cpu_aot_c_program_runs(tmp_path):
    out = _cpu_aot(tmp_path)
    (tmp_path / "main.c").write_text(MAIN_C)
    exe = tmp_path / "main"
    subprocess.run([_cc(), "-O1", "-Wall", "-Werror", "-I", str(out), str(tmp_path / "main.c"),
                    str(out / "dispatch.c"), *map(str, sorted(out.glob("*.o"))), "-lm", "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    for algo, off in ((0, 0), (0, 1), (1, 3)):
        r = subprocess.run([str(exe), "1000", str(algo), str(off)], capture_output=True, text=True, check=True)
        # the assert kernel returns 1 and says which program failed; nothing else is wrong
        assert "rc 0 0 1 algos 2 bad 0" in r.stdout, r.stdout
        assert re.search(r"device-side assertion failed at pid \(2, 0, 0\): \S*kernels.py:\d+: negative input",
                         r.stdout), r.stdout
    r = subprocess.run([str(exe), "10", "7", "0"], capture_output=True, text=True, check=True)
    assert "rc -1 0 1 " in r.stdout, r.stdout  # no algorithm 7


@pytest.mark.parametrize("args, message", [
    (["-n", "nope", "-s", "i32"], "has no kernel named 'nope' (kernels: add_kernel, axpb_kernel, checked_kernel)"),
    (["-n", "add_kernel", "-s", "*fp32, *fp32, i32, 64"], "signature has 4 entries but add_kernel has 5"),
    (["-n", "add_kernel", "-s", "*fp32:8, *fp32, *fp32, i32, 64"], "unknown hint ':8'"),
    (["-n", "add_kernel", "-s", "*fp32, *fp32, *float99, i32, 64"], "unknown type '*float99'"),
    (["-n", "add_kernel", "-s", "*fp32:1, *fp32, *fp32, i32, 64"], "cannot be specialised as equal to 1"),
    (["-n", "add_kernel", "-s", "*fp32, *fp32, *fp32, i32, 64", "-g", "m / 64"], "'m' is not a parameter"),
    (["-n", "add_kernel", "-s", "*fp32, *fp32, *fp32, i32, 64", "-g", "x_ptr"], "'x_ptr' is not an integer"),
    (["-n", "add_kernel", "-s", "*fp32, *fp32, *fp32, i32, 64", "-g", "n; system(1)"], "unexpected ';"),
    (["-n", "add_kernel", "-s", "*fp32, *fp32, *fp32, i32, 64", "-g", "(n"], "not a valid expression"),
    (["-n", "add_kernel", "-s", "*fp32, *fp32, *fp32, i32, 64", "-t", "tpu"], "bad --target 'tpu'"),
    (["-n", "add_kernel", "-s", "*fp32, *fp32, *fp32, i32, 64", "-on", "my-add"], "not a C identifier"),
])
def test_compile_bad_input(tmp_path, capsys, args, message):
    (tmp_path / "kernels.py").write_text(KERNELS)
    assert aot_compile.main([str(tmp_path / "kernels.py"), *args, "-o", str(tmp_path / "o" / "k")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tilec: ") and message in err and "\n" not in err, err


def test_compile_missing_file_and_compiler_error(tmp_path, capsys):
    assert aot_compile.main([str(tmp_path / "none.py"), "-n", "k", "-s", "i32"]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "bad.py").write_text("import tilec\n@tilec.jit\ndef k(x):\n    y = undefined_name + x\n")
    assert aot_compile.main([str(tmp_path / "bad.py"), "-n", "k", "-s", "i32", "-o", str(tmp_path / "k")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tilec: compiling k failed:") and "undefined_name" in err


def test_link_bad_input(tmp_path, capsys):
    (tmp_path / "x.h").write_text("int x;\n")
    assert aot_link.main([str(tmp_path / "x.h"), "-o", str(tmp_path / "d")]) == 2
    assert "not a header written by python -m tilec.tools.compile" in capsys.readouterr().err
    assert aot_link.main([str(tmp_path / "missing.h")]) == 2
    assert "cannot read" in capsys.readouterr().err
    (tmp_path / "kernels.py").write_text(KERNELS)
    _compile(tmp_path, "-n", "add_kernel", "-s", "*fp32, *fp32, *fp32, i32, 64", "-o", str(tmp_path / "a" / "k"))
    _compile(tmp_path, "-n", "checked_kernel", "-s", "*fp32, i32", "-o", str(tmp_path / "a" / "k"))
    assert aot_link.main([str(p) for p in (tmp_path / "a").glob("*.h")] + ["-o", str(tmp_path / "d")]) == 2
    assert "take different parameters" in capsys.readouterr().err


GPU_MAIN_C = textwrap.dedent('''
    #include <stdio.h>
    #include <cuda.h>
    #include "dispatch.h"
    #define CK(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { printf("error %d at %s\\n", (int)e, #x); return 1; } } while (0)

    int main(void) {
      enum { N = 5000 };
      static float x[N], y[N], o[N];
      CUdevice dev; CUcontext ctx; CUdeviceptr dx, dy, dout;
      for (int i = 0; i < N; i++) { x[i] = (float)i; y[i] = 0.5f * i; }
      CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
      CK(cuMemAlloc(&dx, 4 * N + 16)); CK(cuMemAlloc(&dy, 4 * N + 16)); CK(cuMemAlloc(&dout, 4 * N + 16));
      CK(cuMemcpyHtoD(dx, x, 4 * N)); CK(cuMemcpyHtoD(dy, y, 4 * N));
      CK(load_add());
      int bad = 0;
      for (int algo = 0; algo < add_get_num_algos(); algo++) {
        CK(cuMemsetD32(dout, 0, N));
        CK(add(0, dx, dy, dout, N, algo));
        CK(cuCtxSynchronize());
        CK(cuMemcpyDtoH(o, dout, 4 * N));
        for (int i = 0; i < N; i++) if (o[i] != 1.5f * i) bad++;
      }
      /* misaligned pointers take the general specialisation */
      CK(add_default(0, dx + 4, dy + 4, dout + 4, N - 1));
      CK(cuCtxSynchronize());
      CK(cuMemcpyDtoH(o, dout + 4, 4 * (N - 1)));
      for (int i = 0; i < N - 1; i++) if (o[i] != 1.5f * (i + 1)) bad++;
      CK(unload_add());
      printf("algos %d bad %d\\n", add_get_num_algos(), bad);
      return 0;
    }
''')


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_cuda_aot_c_program_runs(tmp_path):
    from tilec.targets.cuda.driver import compute_capability
    arch = compute_capability(0)  # the device's own: a cubin runs only on its major version (TILEC_CUDA_ARCH aside)
    out = tmp_path / "out"
    common = ["-n", "add_kernel", "-g", "(n + BLOCK - 1) / BLOCK", "-t", f"cuda:{arch}", "-o", str(out / "add")]
    _compile(tmp_path, *common, "-s", "*fp32:16, *fp32:16, *fp32:16, i32, 1024", "-w", "4")
    _compile(tmp_path, *common, "-s", "*fp32, *fp32, *fp32, i32, 1024", "-w", "4")
    _compile(tmp_path, *common, "-s", "*fp32, *fp32, *fp32, i32, 256", "-w", "2")
    assert aot_link.main(sorted(str(p) for p in out.glob("*.h")) + ["-o", str(out / "dispatch")]) == 0
    (tmp_path / "main.c").write_text(GPU_MAIN_C)
    exe = tmp_path / "main"
    r = subprocess.run(["nvcc", "-I", str(out), str(tmp_path / "main.c"), str(out / "dispatch.c"),
                        *map(str, sorted(out.glob("add.*.c"))), "-lcuda", "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "algos 2 bad 0", r.stdout + r.stderr


def _cuda_include():
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and os.path.isfile(os.path.join(root, "include", "cuda.h")):
            return os.path.join(root, "include")
    return None


@pytest.mark.parametrize("with_ptxas", [True, False])
def test_cuda_aot_source_without_gpu(tmp_path, monkeypatch, with_ptxas):
    """Cross-compiled CUDA output: the cubin (or, without ptxas, the PTX text) is embedded, and the C compiles
    against cuda.h where a C compiler and the CUDA headers are there."""
    from tilec.targets.cuda import ptx
    if not with_ptxas:
        monkeypatch.setattr(ptx, "ptxas_path", lambda: None)
        monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    elif ptx.ptxas_path() is None:
        pytest.skip("ptxas is not on PATH")
    out = tmp_path / "out"
    _compile(tmp_path, "-n", "add_kernel", "-g", "(n + 1023) / 1024", "-t", "cuda:90", "-o", str(out / "add"),
             "-s", "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024")
    _compile(tmp_path, "-n", "add_kernel", "-g", "(n + 1023) / 1024", "-t", "cuda:90", "-o", str(out / "add"),
             "-s", "*fp32, *fp32, *fp32, i32, 1024")
    assert aot_link.main(sorted(str(p) for p in out.glob("*.h")) + ["-o", str(out / "dispatch")]) == 0
    srcs = sorted(out.glob("add.*.c"))
    text = srcs[0].read_text()
    kind = "cubin" if with_ptxas else "ptx"
    assert f"}};  /* {kind} */" in text and 'cuModuleGetFunction(&' in text and "cuLaunchKernel(" in text
    image = bytes(int(b, 16) for b in re.findall(r"0x([0-9a-f]{2})", text.split("= {", 1)[1].split("};")[0]))
    if with_ptxas:
        assert image[:4] == b"\x7fELF"
    else:  # PTX text, NUL-terminated for cuModuleLoadData
        assert image.endswith(b"\0") and b".entry add_kernel" in image and b".target sm_90" in image
    disp = (out / "dispatch.c").read_text()
    assert "(n % 16 == 0)" in disp and "(x_ptr % 16 == 0)" in disp and "CUresult load_add(void)" in disp
    inc = _cuda_include()
    if _cc() is None or inc is None:
        pytest.skip("no C compiler or no cuda.h to compile the generated C with")
    subprocess.run([_cc(), "-Wall", "-Werror", "-c", "-I", inc, "-I", str(out), str(out / "dispatch.c"), *map(str, srcs)],
                   check=True, capture_output=True, text=True, cwd=tmp_path)
