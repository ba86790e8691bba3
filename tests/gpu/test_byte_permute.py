"""``GpuTarget.byte_permute``'s generic form (shifts of the 64-bit pair), run on the host through llvmlite's JIT,
against the byte selection it defines (that of PTX's ``prmt``, which the CUDA target emits instead)."""
import ctypes

import llvmlite.binding as llvm
import llvmlite.ir as ir
from hypothesis import given, settings, strategies as st

from tilec.gpu.target import GpuTarget

I32 = ir.IntType(32)
_keep = []


def _jit():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    m = ir.Module("m")
    m.triple = llvm.get_process_triple()
    fn = ir.Function(m, ir.FunctionType(I32, [I32, I32, I32]), "permute")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(GpuTarget.byte_permute(None, b, *fn.args))
    mod = llvm.parse_assembly(str(m))
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    _keep.append(engine)
    return ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32)(
        engine.get_function_address("permute"))


PERMUTE = _jit()


def _want(x, y, sel):
    pool = (x | y << 32).to_bytes(8, "little")
    return int.from_bytes(bytes(pool[(sel >> 4 * i) & 7] for i in range(4)), "little")


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1),
       st.lists(st.integers(0, 7), min_size=4, max_size=4))
def test_generic_byte_permute_picks_the_selected_bytes(x, y, picks):
    sel = sum(p << 4 * i for i, p in enumerate(picks))
    assert PERMUTE(x, y, sel) == _want(x, y, sel)


def test_the_exchanges_selectors():
    x, y = 0x33221100, 0x77665544
    assert PERMUTE(x, y, 0x5410) == 0x55441100  # row m, lane 2t's pair first
    assert PERMUTE(x, y, 0x1054) == 0x11005544
    assert PERMUTE(x, y, 0x7632) == 0x77663322  # row m + 8
