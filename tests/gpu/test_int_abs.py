"""``tl.abs`` of int8/int16 on CUDA wraps as numpy does (``abs(int16(-32768)) == -32768``), in what is stored and in
what later compares and widenings see: ptxas widens PTX ``abs.s16`` to a 32-bit absolute value that compares as
32768 (fuzz seed 404474), and LLVM folds every IR rewrite back to it, so the CUDA target computes it with
``sad.s32`` (``tilec/targets/cuda/int_abs.py``). Checked here in the PTX and, with ``cuobjdump`` on PATH, in the
SASS: the compare reads the 32-bit result re-extended from the narrow type. The GPU-marked test runs it."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import tilec
import tilec.language as tl

from gpu_helpers import ARCHS, HAVE_PTXAS

HAVE_CUOBJDUMP = shutil.which("cuobjdump") is not None
# PRMT selectors that sign-extend the low 2 bytes / the low byte of a register
SEXT = {"i16": "0x9910", "i8": "0x8880"}


@tilec.jit
def abs_compare(x_ptr, a_ptr, c_ptr, w_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    m = o < n
    a = tl.abs(tl.load(x_ptr + o, mask=m, other=0))
    tl.store(a_ptr + o, a, mask=m)
    tl.store(c_ptr + o, (a >= 12).to(tl.int8), mask=m)  # -32768 / -128 are below 12
    tl.store(w_ptr + o, a.to(tl.int32), mask=m)  # and widen to themselves


def _compile(dt, arch):
    src = tilec.ASTSource(abs_compare, f"*{dt},*{dt},*i8,*i32,i32", constexprs={"B": 128})
    return tilec.compile(src, tilec.Target("cuda", arch, 32), {"num_warps": 4})


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dt", ["i8", "i16"])
def test_narrow_abs_is_not_ptx_abs(dt, arch):
    ptx = _compile(dt, arch).asm["ptx"]
    assert not re.search(r"\babs\.s(8|16)\b", ptx) and re.search(r"\bsad\.s32\b", ptx)


@pytest.mark.skipif(not HAVE_PTXAS, reason="needs ptxas on PATH")
@pytest.mark.skipif(not HAVE_CUOBJDUMP, reason="needs cuobjdump on PATH (pip install nvidia-cuda-cuobjdump)")
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dt", ["i8", "i16"])
def test_compare_reads_the_wrapped_value_in_sass(dt, arch, tmp_path):
    path = tmp_path / "k.cubin"
    path.write_bytes(_compile(dt, arch).asm["cubin"])
    sass = subprocess.run(["cuobjdump", "--dump-sass", str(path)], capture_output=True, text=True, check=True).stdout
    code = [line.split("*/", 1)[1].split(";")[0].strip() for line in sass.splitlines()
            if re.match(r"\s*/\*[0-9a-f]{4}\*/", line)]
    assert not any(re.search(r"\bIABS\b", c) for c in code)
    absolute = {m.group(1) for c in code if (m := re.match(r"VABSDIFF (R\d+),", c))}
    assert absolute, code
    wrapped = {m.group(1) for c in code if (m := re.match(rf"(?:@!?P\d )?PRMT (R\d+), (R\d+)(?:\.reuse)?, "
                                                          rf"{SEXT[dt]}, RZ", c)) and m.group(2) in absolute}
    compares = [c for c in code if re.search(r"ISETP\.GT\.AND P\d, PT, R\d+, 0xb", c)]
    assert compares and all(re.search(r", (R\d+), 0xb", c).group(1) in wrapped for c in compares), code


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int8, np.int16])
def test_narrow_abs_on_the_device(dtype):
    torch = pytest.importorskip("torch")
    info = np.iinfo(dtype)
    x = np.array([info.min, info.min + 1, -12, -11, -1, 0, 1, 11, 12, info.max] * 4, dtype)
    n = x.size
    a = np.abs(x)  # wraps: abs(min) == min
    dev = lambda v: torch.from_numpy(v).cuda()  # noqa: E731
    outs = [dev(np.zeros(n, dtype)), dev(np.zeros(n, np.int8)), dev(np.zeros(n, np.int32))]
    abs_compare[(1,)](dev(x), *outs, n, B=64)
    got_a, got_c, got_w = (o.cpu().numpy() for o in outs)
    np.testing.assert_array_equal(got_a, a)
    np.testing.assert_array_equal(got_c, (a >= 12).astype(np.int8))
    np.testing.assert_array_equal(got_w, a.astype(np.int32))
