"""``tl.inline_asm_elementwise`` kernels run on a CUDA device against numpy (skipped without a GPU)."""
import numpy as np
import pytest

from gpu_helpers import compile_jit, device_arch, runtime_args, to_device
from inline_asm_kernels import CASES

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("num_warps", [1, 4])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy(name, num_warps):
    kernel, args, constexprs, grid, outs, refs = CASES[name]()
    k = compile_jit(kernel, args, device_arch(), {"num_warps": num_warps}, **constexprs)
    dev = to_device(args)
    k.run(grid, runtime_args(kernel, dev))
    for i, ref in zip(outs, refs):
        np.testing.assert_array_equal(dev[i].numpy(), ref, err_msg=name)
