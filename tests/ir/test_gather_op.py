"""The ``gather`` op: its text form (printed, parsed back, verified), the verifier's shape and type rules, its
reference semantics (numpy's ``take_along_axis``, indices wrapping modulo the axis), and the kernel a language
``tl.gather``/``tl.flip`` becomes (one op, visible in ``TILEC_DUMP_IR``)."""
import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec.ir import IRError
from tilec.ir import ops as O
from tilec.ir.parser import parse_module
from tilec.ir.printer import print_ir
from tilec.ir.verifier import verify
from tilec.passes.pointer_origins import origins

from .evalhelp import one_op

TEXT = """\
module {
  func @k(%x: ptr<f32>, %i: ptr<i16>, %z: ptr<f32>) {kernel = true} {
    %o = arange {start = 0, end = 8} : tile<8xi32>
    %0 = splat %x : tile<8xptr<f32>>
    %1 = addptr %0, %o : tile<8xptr<f32>>
    %v = load %1 : tile<8xf32>
    %2 = splat %i : tile<8xptr<i16>>
    %3 = addptr %2, %o : tile<8xptr<i16>>
    %k = load %3 : tile<8xi16>
    %g = gather %v, %k {axis = 0} : tile<8xf32>
    %4 = splat %z : tile<8xptr<f32>>
    %5 = addptr %4, %o : tile<8xptr<f32>>
    store %5, %g
    return
  }
}
"""


def test_prints_parses_back_and_verifies():
    m = parse_module(TEXT)
    verify(m)
    assert print_ir(m) == TEXT
    g = next(op for op in m.walk() if isinstance(op, O.GatherOp))
    assert g.attrs == {"axis": 0} and g.src.type.element.name == "f32" and g.index.type.element.name == "i16"
    assert g.is_pure and not g.reads_memory


def _gather_text(src, index, result, axis):
    return (f"func @f(%s: {src}, %i: {index}) -> ({result}) {{\n"
            f"  %r = gather %s, %i {{axis = {axis}}} : {result}\n  return %r\n}}\n")


@pytest.mark.parametrize("src,index,result,axis,message", [
    ("tile<4x8xf32>", "tile<8xi32>", "tile<8xf32>", 0, "must be tiles of one rank"),
    ("tile<4x8xf32>", "tile<4x8xf32>", "tile<4x8xf32>", 1, "index must be an integer tile"),
    ("tile<4x8xf32>", "tile<4x8xi1>", "tile<4x8xf32>", 1, "index must be an integer tile"),
    ("tile<4x8xf32>", "tile<2x8xi32>", "tile<2x8xf32>", 1, "differ in dimension 0"),
    ("tile<4x8xf32>", "tile<4x2xi32>", "tile<4x8xf32>", 1, "result must be a tile of index's shape"),
    ("tile<4x8xf32>", "tile<4x2xi32>", "tile<4x2xf16>", 1, "result must be a tile of index's shape"),
    ("tile<4x8xf32>", "tile<4x8xi32>", "tile<4x8xf32>", 2, "axis 2 out of range"),
])
def test_verifier_rules(src, index, result, axis, message):
    with pytest.raises(IRError, match=message):
        verify(parse_module(_gather_text(src, index, result, axis)))


def test_index_and_source_may_differ_along_the_axis_only():
    verify(parse_module(_gather_text("tile<4x8xf32>", "tile<16x8xu8>", "tile<16x8xf32>", 0)))
    verify(parse_module(_gather_text("tile<4x8xptr<f32>>", "tile<4x2xi64>", "tile<4x2xptr<f32>>", 1)))


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("itype,np_index", [("i32", np.int32), ("i8", np.int8), ("u16", np.uint16),
                                             ("i64", np.int64)])
def test_evaluator_is_take_along_axis(axis, itype, np_index):
    r = np.random.default_rng(axis)
    x = r.standard_normal((4, 8, 2)).astype(np.float32)
    ishape = list(x.shape)
    ishape[axis] = 16
    idx = r.integers(0, x.shape[axis], ishape).astype(np_index)
    src = "tile<4x8x2xf32>"
    index = f"tile<{'x'.join(map(str, ishape))}x{itype}>"
    result = f"tile<{'x'.join(map(str, ishape))}xf32>"
    got = one_op("gather", [src, index], result, [x, idx], f"axis = {axis}")
    np.testing.assert_array_equal(got, np.take_along_axis(x, idx.astype(np.int64), axis))


def test_out_of_range_indices_wrap_modulo_the_axis():
    x = np.arange(8, dtype=np.int16)
    idx = np.array([-1, 8, 9, -8, -9, 1000, 7, 0], np.int32)
    got = one_op("gather", ["tile<8xi16>", "tile<8xi32>"], "tile<8xi16>", [x, idx], "axis = 0")
    np.testing.assert_array_equal(got, x[idx % 8])
    big = np.array([2 ** 64 - 1, 2 ** 63, 5, 2 ** 32 + 3] * 2, np.uint64)
    got = one_op("gather", ["tile<8xi16>", "tile<8xu64>"], "tile<8xi16>", [x, big], "axis = 0")
    np.testing.assert_array_equal(got, x[(big % 8).astype(np.int64)])


def test_gathered_pointers_come_from_the_source():
    m = parse_module("""\
module {
  func @k(%x: ptr<f32>, %y: ptr<f32>, %i: tile<8xi32>) {kernel = true} {
    %o = arange {start = 0, end = 8} : tile<8xi32>
    %0 = splat %x : tile<8xptr<f32>>
    %1 = addptr %0, %o : tile<8xptr<f32>>
    %g = gather %1, %i {axis = 0} : tile<8xptr<f32>>
    %v = load %g : tile<8xf32>
    return
  }
}
""")
    g = next(op for op in m.walk() if isinstance(op, O.GatherOp))
    assert origins(g.result, m.funcs[0]) == {0}


@tilec.jit
def flip_rows(X, Z, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(Z + offs, tl.flip(tl.load(X + offs), 0))


def test_flip_is_one_gather_op_in_the_dumped_ir(monkeypatch, capsys):
    monkeypatch.setenv("TILEC_DUMP_IR", "flip_rows")
    monkeypatch.setenv("TILEC_ALWAYS_COMPILE", "1")
    monkeypatch.delenv("TILEC_DUMP_DIR", raising=False)
    src = tilec.ASTSource(flip_rows, signature="*fp32,*fp32", constexprs={"M": 64, "N": 16})
    k = tilec.compile(src, target=tilec.Target("cpu"))
    err = capsys.readouterr().err
    assert "// -----// IR before the pipeline on flip_rows" in err
    assert " = gather " in err and "{axis = 0}" in err
    tir = k.asm["tir"]
    assert tir.count(" = gather ") == 1 and " = reduce " not in tir
    assert parse_module(tir) is not None
