"""python -m tilec.tools.compile -t hip:GFX / link without ROCm: the generated C embeds exactly the code object
tilec.compile makes for that target, declares the C signature the parameters ask for, compiles against a stub
hip/hip_runtime_api.h (declarations only), and, linked with a fake HIP runtime written in C, loads the images
it embeds and launches with the grid, block size, LDS bytes and kernel arguments the kernel needs."""
import json
import re
import shutil
import struct
import subprocess
import textwrap

import pytest

import tilec
from tilec.tools import compile as aot_compile
from tilec.tools import link as aot_link
from tilec.tools.aot.spec import load_kernel

from test_aot import KERNELS

#: typedefs and prototypes as ROCm's header has them; like it, it wants a platform macro
STUB_HEADER = textwrap.dedent('''
    #pragma once
    #if !defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_NVIDIA__)
    #error "Must define exactly one of __HIP_PLATFORM_AMD__ or __HIP_PLATFORM_NVIDIA__"
    #endif
    #include <stddef.h>
    typedef enum hipError_t { hipSuccess = 0, hipErrorInvalidValue = 1 } hipError_t;
    typedef struct ihipModule_t *hipModule_t;
    typedef struct ihipModuleSymbol_t *hipFunction_t;
    typedef struct ihipStream_t *hipStream_t;
    hipError_t hipModuleLoadData(hipModule_t *module, const void *image);
    hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname);
    hipError_t hipModuleUnload(hipModule_t module);
    hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                     unsigned int blockDimZ, unsigned int sharedMemBytes, hipStream_t stream,
                                     void **kernelParams, void **extra);
''')

#: a HIP runtime that records: hipModuleLoadData learns the image's length from its ELF headers only (as the real
#: one must: it is given no length) and a launch prints that image's FNV-1a hash, its geometry and arguments
FAKE_RUNTIME = textwrap.dedent('''
    #define __HIP_PLATFORM_AMD__
    #include <stdint.h>
    #include <stdio.h>
    #include <string.h>
    #include <hip/hip_runtime_api.h>

    struct ihipModule_t { const unsigned char *image; uint64_t size; int live; };
    static struct ihipModule_t modules[64];
    static int nmodules;
    void (*fake_show_args)(void **params);

    static uint64_t rd(const unsigned char *p, int n) { uint64_t v = 0; memcpy(&v, p, n); return v; }

    static uint64_t elf_size(const unsigned char *e) {
      uint64_t phoff = rd(e + 32, 8), shoff = rd(e + 40, 8), end = 0;
      unsigned phsz = rd(e + 54, 2), phnum = rd(e + 56, 2), shsz = rd(e + 58, 2), shnum = rd(e + 60, 2);
      end = shoff + (uint64_t)shsz * shnum;
      for (unsigned i = 0; i < phnum; i++) {
        const unsigned char *p = e + phoff + i * phsz;
        if (rd(p + 8, 8) + rd(p + 32, 8) > end) end = rd(p + 8, 8) + rd(p + 32, 8);
      }
      for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *s = e + shoff + i * shsz;
        if (rd(s + 4, 4) != 8 && rd(s + 24, 8) + rd(s + 32, 8) > end) end = rd(s + 24, 8) + rd(s + 32, 8);
      }
      return end;
    }

    hipError_t hipModuleLoadData(hipModule_t *module, const void *image) {
      const unsigned char *e = image;
      if (memcmp(e, "\\x7f" "ELF", 4) != 0 || e[4] != 2 || nmodules == 64) return hipErrorInvalidValue;
      modules[nmodules].image = e;
      modules[nmodules].size = elf_size(e);
      modules[nmodules].live = 1;
      *module = &modules[nmodules++];
      return hipSuccess;
    }

    hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname) {
      printf("function %s\\n", kname);
      *function = (hipFunction_t)(void *)module;
      return hipSuccess;
    }

    hipError_t hipModuleUnload(hipModule_t module) {
      if (!module->live) return hipErrorInvalidValue;
      module->live = 0;
      printf("unload\\n");
      return hipSuccess;
    }

    hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                     unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                     hipStream_t stream, void **params, void **extra) {
      struct ihipModule_t *m = (struct ihipModule_t *)(void *)f;
      uint64_t h = 14695981039346656037ull;
      if (!m->live || extra != NULL) return hipErrorInvalidValue;
      for (uint64_t i = 0; i < m->size; i++) h = (h ^ m->image[i]) * 1099511628211ull;
      printf("launch image %016llx size %llu grid %u %u %u block %u %u %u lds %u stream %llu args",
             (unsigned long long)h, (unsigned long long)m->size, gx, gy, gz, bx, by, bz, shared,
             (unsigned long long)(uintptr_t)stream);
      fake_show_args(params);
      printf("\\n");
      return hipSuccess;
    }
''')

MAIN_C = textwrap.dedent('''
    #include <stdint.h>
    #include <stdio.h>
    #include "dispatch.h"

    extern void (*fake_show_args)(void **params);
    #define P(i) ((unsigned long long)(uintptr_t)*(void **)params[i])

    static void show_add(void **params) {
      printf(" %llu %llu %llu %d", P(0), P(1), P(2), *(int32_t *)params[3]);
    }

    static void show_axpb(void **params) {
      printf(" %llu %llu %d %d %g %g", P(0), P(1), *(int32_t *)params[2], *(int32_t *)params[3],
             (double)*(float *)params[4], *(double *)params[5]);
    }

    int main(void) {
      hipStream_t stream = (hipStream_t)(uintptr_t)7;
      char *base = (char *)(uintptr_t)4096;
      printf("rc %d\\n", (int)load_add());
      fake_show_args = show_add;
      for (int algo = 0; algo < add_get_num_algos(); algo++)
        printf("rc %d\\n", (int)add(stream, base, base + 1024, base + 2048, 5000, algo));
      printf("rc %d\\n", (int)add_default(stream, base + 4, base + 1028, base + 2052, 4999));
      printf("rc %d\\n", (int)add(stream, base, base, base, 0, 0));
      printf("rc %d\\n", (int)add(stream, base, base, base, 10, 9));
      fake_show_args = show_axpb;
      printf("rc %d\\n", (int)axpb(stream, base, base + 8192, 3, 50, 2.5f, 0.25, 0));
      printf("rc %d %d\\n", (int)unload_add(), (int)unload_axpb());
      return 0;
    }
''')

ADD = [("*fp32:16, *fp32:16, *fp32:16, i32, 1024", 4), ("*fp32, *fp32, *fp32, i32, 1024", 4),
       ("*fp32, *fp32, *fp32, i32, 256", 2)]
AXPB = "*fp32, *fp32, i32, i32, fp32, fp64, 32"

ROWSUM = """

@tilec.jit
def rowsum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + tl.program_id(0), tl.sum(x, axis=0))
"""


def _cc():
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def _compile(tmp_path, *args):
    src = tmp_path / "kernels.py"
    if not src.exists():
        src.write_text(KERNELS)
    assert aot_compile.main([str(src), *args]) == 0


def _record(path):
    line = next(x for x in path.read_text().splitlines() if x.startswith("// tilec-aot "))
    return json.loads(line.split(" ", 2)[2])


def _embedded(c_file) -> bytes:
    text = c_file.read_text()
    m = re.search(r"_image\[(\d+)\] = \{(.*?)\};", text, re.S)
    data = bytes(int(b, 16) for b in re.findall(r"0x([0-9a-f]{2})", m.group(2)))
    assert len(data) == int(m.group(1))
    return data


def _reference(tmp_path, kernel, sig, num_warps, arch, warp):
    """What tilec.compile makes for this specialisation (the hsaco and the metadata)."""
    fn = load_kernel(str(tmp_path / "kernels.py"), kernel)
    *runtime, value = [e.strip() for e in sig.split(",")]
    cx = {p.name: int(value) for p in fn.params if p.is_constexpr}
    k = tilec.compile(tilec.ASTSource(fn, signature=",".join(runtime), constexprs=cx),
                      target=tilec.Target("hip", arch, warp), options={"num_warps": num_warps, "num_stages": 3})
    return bytes(k.asm["hsaco"]), k.metadata


def _fnv(data: bytes) -> str:
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & (2 ** 64 - 1)
    return f"{h:016x}"


@pytest.fixture(scope="module")
def hip_out(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hipaot")
    out = tmp / "out"
    for sig, w in ADD:
        _compile(tmp, "-n", "add_kernel", "-g", "(n + BLOCK - 1) / BLOCK", "-t", "hip:gfx942", "-w", str(w),
                 "-o", str(out / "add"), "-s", sig)
    _compile(tmp, "-n", "axpb_kernel", "-g", "(cols + BLOCK - 1) / BLOCK, rows", "-t", "hip:gfx942",
             "-o", str(out / "axpb"), "-s", AXPB)
    assert aot_link.main(sorted(str(p) for p in out.glob("*.h")) + ["-o", str(out / "dispatch")]) == 0
    inc = tmp / "include" / "hip"
    inc.mkdir(parents=True)
    (inc / "hip_runtime_api.h").write_text(STUB_HEADER)
    return tmp


def _specs(tmp):
    """(record, .c path, .h path) of every specialisation compiled in ``hip_out``."""
    return [(_record(h), h.with_suffix(".c"), h) for h in sorted((tmp / "out").glob("*.*.h"))]


def test_hip_sources_embed_tilec_compile_hsaco(hip_out):
    recs = {}
    for rec, c_file, h in _specs(hip_out):
        text = h.read_text()
        assert rec["target"] == "hip" and rec["arch"] == "gfx942"
        m = re.search(r"signature (\S+); BLOCK=(\d+); num_warps=(\d+)", text)
        kernel = rec["kernel"]
        sig = f"{m.group(1)},{m.group(2)}"
        image, md = _reference(hip_out, kernel, sig, int(m.group(3)), "gfx942", 64)
        assert _embedded(c_file) == image, f"{c_file.name} does not embed tilec.compile's code object"
        assert image[:4] == b"\x7fELF"
        src = c_file.read_text()
        assert f'hipModuleGetFunction(&{rec["func"]}_function, {rec["func"]}_module, "{kernel}")' in src
        threads = 64 * int(m.group(3))
        assert re.search(rf"hipModuleLaunchKernel\({rec['func']}_function, gx, gy, gz, {threads}, 1, 1, "
                         rf"{md['shared']}, stream, args, NULL\);", src)
        recs.setdefault(rec["name"], []).append(rec)
    assert len(recs["add"]) == 3 and len(recs["axpb"]) == 1


def test_hip_headers_declare_c_signatures(hip_out):
    for rec, c_file, h in _specs(hip_out):
        text = h.read_text()
        assert "#include <hip/hip_runtime_api.h>" in text
        f = rec["func"]
        if rec["name"] == "add":
            want = "void * x_ptr, void * y_ptr, void * out_ptr, int32_t n"
        else:
            want = "void * x_ptr, void * out_ptr, int32_t rows, int32_t cols, float a, double b"
        assert f"hipError_t {f}(hipStream_t stream, {want});" in text
        assert f"hipError_t load_{f}(void);" in text and f"hipError_t unload_{f}(void);" in text
    disp = (hip_out / "out" / "dispatch.h").read_text()
    assert ("hipError_t add(hipStream_t stream, void * x_ptr, void * y_ptr, void * out_ptr, int32_t n, "
            "int algo_id);") in disp
    assert "hipError_t load_add(void);" in disp and "int add_get_num_algos(void);" in disp
    src = (hip_out / "out" / "dispatch.c").read_text()
    assert "((uintptr_t)x_ptr % 16 == 0)" in src and "return hipErrorInvalidValue;" in src


@pytest.mark.skipif(_cc() is None, reason="no C compiler (cc, gcc or clang) on PATH")
def test_hip_sources_compile_against_stub_header(hip_out):
    out = hip_out / "out"
    srcs = sorted(str(p) for p in out.glob("*.c"))
    assert len(srcs) == 5  # four specialisations and the dispatcher
    flags = ["-Wall", "-Wextra", "-Werror", "-c", "-I", str(hip_out / "include"), "-I", str(out)]
    r = subprocess.run([_cc(), "-std=c11", *flags, *srcs], capture_output=True, text=True, cwd=hip_out)
    assert r.returncode == 0, r.stderr
    if shutil.which("c++"):  # hipcc users may build the sources as C++
        r = subprocess.run(["c++", "-x", "c++", *flags, *srcs], capture_output=True, text=True, cwd=hip_out)
        assert r.returncode == 0, r.stderr


@pytest.mark.skipif(_cc() is None, reason="no C compiler (cc, gcc or clang) on PATH")
def test_hip_program_against_fake_runtime(hip_out):
    """The dispatcher picks the specialisation the pointers' alignment allows; each launch goes to the image
    that specialisation embeds, with its grid, 64 * num_warps threads and the arguments in order."""
    out, tmp = hip_out / "out", hip_out
    (tmp / "fake_hip.c").write_text(FAKE_RUNTIME)
    (tmp / "main.c").write_text(MAIN_C)
    exe = tmp / "main"
    r = subprocess.run([_cc(), "-Wall", "-Werror", "-I", str(tmp / "include"), "-I", str(out), str(tmp / "main.c"),
                        str(tmp / "fake_hip.c"), *sorted(str(p) for p in out.glob("*.c")), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=60).stdout.splitlines()
    hashes = {}
    for rec, c_file, _ in _specs(tmp):
        hint = rec["params"][0]["hint"]
        key = (rec["name"], rec["algo"].split(";")[0], hint)
        hashes[key] = (_fnv(_embedded(c_file)), len(_embedded(c_file)))
    launches = [ln for ln in lines if ln.startswith("launch")]

    def launch(key, grid, block, args):
        h, size = hashes[key]
        return f"launch image {h} size {size} grid {grid} block {block} 1 1 lds 0 stream 7 args {args}"
    # the algorithms in the dispatcher's order: BLOCK=1024 with 4 warps (two variants), BLOCK=256 with 2
    order = re.findall(r"/\* add algorithm \d+: (BLOCK=\d+);", (out / "dispatch.c").read_text())
    assert sorted(order) == ["BLOCK=1024", "BLOCK=256"]
    aligned = {"BLOCK=1024": ("add", "BLOCK=1024", 16), "BLOCK=256": ("add", "BLOCK=256", None)}
    geometry = {"BLOCK=1024": ("5 1 1", 256), "BLOCK=256": ("20 1 1", 128)}
    want = [launch(aligned[algo], *geometry[algo], "4096 5120 6144 5000") for algo in order]
    # misaligned pointers: algorithm 0's general variant
    general = ("add", order[0], None)
    want.append(launch(general, *geometry[order[0]], "4100 5124 6148 4999"))
    want.append(launch(("axpb", "BLOCK=32", None), "2 3 1", 256, "4096 12288 3 50 2.5 0.25"))  # 2-d; f32, f64
    assert launches == want, "\n".join(lines)
    rcs = [ln for ln in lines if ln.startswith("rc")]
    # n == 0 launches nothing; algorithm 9 does not exist (hipErrorInvalidValue)
    assert rcs == ["rc 0"] * 5 + ["rc 1", "rc 0", "rc 0 0"], "\n".join(lines)
    assert lines.count("function add_kernel") == 3 and lines.count("function axpb_kernel") == 1
    assert lines.count("unload") == 4


def test_hip_wave32_and_arch_features(tmp_path):
    out = tmp_path / "out"
    _compile(tmp_path, "-n", "add_kernel", "-g", "(n + 1023) / 1024", "-t", "hip:gfx1100", "-o", str(out / "add"),
             "-s", "*fp32, *fp32, *fp32, i32, 1024")
    (h,) = out.glob("add.*.h")
    rec = _record(h)
    assert rec["arch"] == "gfx1100" and "(hsaco, wave32)" in h.read_text()
    image, md = _reference(tmp_path, "add_kernel", "*fp32, *fp32, *fp32, i32, 1024", 4, "gfx1100", None)
    assert md["warp_size"] == 32 and _embedded(h.with_suffix(".c")) == image
    assert re.search(r"hipModuleLaunchKernel\(\w+, gx, gy, gz, 128, 1, 1, 0, stream, args, NULL\);",
                     h.with_suffix(".c").read_text())
    _compile(tmp_path, "-n", "add_kernel", "-g", "n", "-t", "hip:gfx90a:sramecc+:xnack-",
             "-o", str(tmp_path / "f" / "a"), "-s", "*fp32, *fp32, *fp32, i32, 64")
    (h,) = (tmp_path / "f").glob("a.*.h")
    assert _record(h)["arch"] == "gfx90a:sramecc+:xnack-"
    assert "256, 1, 1, 0, stream" in h.with_suffix(".c").read_text()


@pytest.mark.parametrize("arch, warp", [("gfx942", 64), ("gfx1100", 32)])
def test_hip_launch_passes_lds_bytes(tmp_path, arch, warp):
    """A cross-wave reduction uses LDS; the launch passes the bytes tilec.compile reports, as the launcher does."""
    (tmp_path / "kernels.py").write_text(KERNELS + ROWSUM)
    sig = "*fp32, *fp32, i32, 1024"
    _compile(tmp_path, "-n", "rowsum_kernel", "-g", "n", "-t", f"hip:{arch}", "-o", str(tmp_path / "o" / "rs"),
             "-s", sig)
    (c_file,) = (tmp_path / "o").glob("rs.*.c")
    image, md = _reference(tmp_path, "rowsum_kernel", sig, 4, arch, warp)
    assert md["shared"] > 0 and _embedded(c_file) == image
    assert f"gx, gy, gz, {4 * warp}, 1, 1, {md['shared']}, stream, args, NULL);" in c_file.read_text()


def test_link_refuses_cuda_with_hip_and_two_archs(tmp_path, capsys):
    common = ["-n", "add_kernel", "-g", "(n + 1023) / 1024", "-s", "*fp32, *fp32, *fp32, i32, 1024"]
    _compile(tmp_path, *common, "-t", "hip:gfx942", "-o", str(tmp_path / "hip" / "add"))
    _compile(tmp_path, *common, "-t", "hip:gfx1100", "-o", str(tmp_path / "rdna" / "add"))
    _compile(tmp_path, "-n", "checked_kernel", "-s", "*fp32, i32", "-t", "cuda:90",
             "-o", str(tmp_path / "cuda" / "chk"))
    (hip,), (rdna,), (cuda,) = ((tmp_path / d).glob("*.h") for d in ("hip", "rdna", "cuda"))
    assert aot_link.main([str(hip), str(cuda), "-o", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tilec: ") and "\n" not in err, err
    assert f"{hip.name} is for hip:gfx942 and {cuda.name} for cuda:90" in err, err
    assert not (tmp_path / "d.h").exists()
    assert aot_link.main([str(rdna), str(hip), "-o", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"add: {hip.name} is for hip:gfx942, {rdna.name} for hip:gfx1100" in err, err


@pytest.mark.parametrize("args, message, status", [
    (["-t", "hip:gfx9999"], "bad --target 'hip:gfx9999'", 2),
    (["-t", "hip:gfx942:xnack"], "unknown feature 'xnack'", 2),
    (["-t", "hip:gfx942", "-w", "32"], "num_warps must keep num_warps * 64 <= 1024 on gfx942", 1),
])
def test_hip_bad_input(tmp_path, capsys, args, message, status):
    (tmp_path / "kernels.py").write_text(KERNELS)
    rc = aot_compile.main([str(tmp_path / "kernels.py"), "-n", "add_kernel", "-s", "*fp32, *fp32, *fp32, i32, 64",
                           *args, "-o", str(tmp_path / "o" / "k")])
    err = capsys.readouterr().err.strip()
    assert rc == status and err.startswith("tilec: ") and message in err and "\n" not in err, err


HALF_MAIN_C = textwrap.dedent('''
    #include <stdint.h>
    #include <stdio.h>
    #include "dispatch.h"

    extern void (*fake_show_args)(void **params);

    static void show(void **params) {  /* a: the f32 the bf16 parameter is; b: the f16 parameter's bits */
      printf(" %.9g %u", (double)*(float *)params[4], (unsigned)*(uint16_t *)params[5]);
    }

    int main(void) {
      char *base = (char *)(uintptr_t)4096;
      fake_show_args = show;
      /* bf16 0x4049 is 3.140625; f16 0x3e00 is 1.5 */
      printf("rc %d\\n", (int)axpb(NULL, base, base + 8192, 3, 50, (uint16_t)0x4049, (uint16_t)0x3e00, 0));
      return 0;
    }
''')


@pytest.mark.skipif(_cc() is None, reason="no C compiler (cc, gcc or clang) on PATH")
def test_hip_16_bit_float_scalars_travel_as_the_kernel_takes_them(tmp_path):
    """A bf16 parameter is an f32 in the kernel (its bits widened), an f16 parameter its 16 bits: the code
    object's metadata and the C entry agree."""
    out = tmp_path / "out"
    _compile(tmp_path, "-n", "axpb_kernel", "-g", "(cols + BLOCK - 1) / BLOCK, rows", "-t", "hip:gfx942",
             "-o", str(out / "axpb"), "-s", "*fp32, *fp32, i32, i32, bf16, fp16, 32")
    assert aot_link.main(sorted(str(p) for p in out.glob("*.h")) + ["-o", str(out / "dispatch")]) == 0
    inc = tmp_path / "include" / "hip"
    inc.mkdir(parents=True)
    (inc / "hip_runtime_api.h").write_text(STUB_HEADER)
    (tmp_path / "fake_hip.c").write_text(FAKE_RUNTIME)
    (tmp_path / "main.c").write_text(HALF_MAIN_C)
    exe = tmp_path / "main"
    r = subprocess.run([_cc(), "-Wall", "-Werror", "-I", str(tmp_path / "include"), "-I", str(out),
                        str(tmp_path / "main.c"), str(tmp_path / "fake_hip.c"), *sorted(str(p) for p in out.glob("*.c")),
                        "-o", str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=60).stdout.splitlines()
    launch = next(ln for ln in lines if ln.startswith("launch"))
    assert launch.endswith("args 3.140625 15872"), lines
    from tilec.targets.hip.launcher import kernarg_layout
    c_file = next(out.glob("axpb.*.c"))
    layout, _ = kernarg_layout(_embedded(c_file), "axpb_kernel", ["ptr", "ptr", "i32", "i32", "bf16", "f16"])
    assert [ct.__name__ for _, ct in layout][4:] == ["c_float", "c_ushort"]
