"""2-d tiles: reductions and scans along either axis, argmax-style multi-operand reduce, trans/reshape views,
dot with transposed operands, compared with numpy on masked, non-power-of-two data."""
import numpy as np
import pytest

from tilec.ir.parser import parse_module

from .helpers import compile_cpu

rng = np.random.default_rng(3)
R, C = 16, 64        # tile
r, c = 13, 50        # live data


def _prologue(t="f32", other="0.0"):
    return f"""    %i = arange {{start = 0, end = {R}}} : tile<{R}xi32>
    %j = arange {{start = 0, end = {C}}} : tile<{C}xi32>
    %ie = expand_dims %i {{axis = 1}} : tile<{R}x1xi32>
    %je = expand_dims %j {{axis = 0}} : tile<1x{C}xi32>
    %ib = broadcast %ie : tile<{R}x{C}xi32>
    %jb = broadcast %je : tile<{R}x{C}xi32>
    %cs = splat %ncols : tile<{R}x{C}xi32>
    %rowoff = mul %ib, %cs : tile<{R}x{C}xi32>
    %off = add %rowoff, %jb : tile<{R}x{C}xi32>
    %rs = splat %nrows : tile<{R}x{C}xi32>
    %m1 = cmp %ib, %rs {{predicate = "lt"}} : tile<{R}x{C}xi1>
    %m2 = cmp %jb, %cs {{predicate = "lt"}} : tile<{R}x{C}xi1>
    %m = and %m1, %m2 : tile<{R}x{C}xi1>
    %xs = splat %x : tile<{R}x{C}xptr<{t}>>
    %xp = addptr %xs, %off : tile<{R}x{C}xptr<{t}>>
    %oc = constant {{value = {other}}} : {t}
    %ot = splat %oc : tile<{R}x{C}x{t}>
    %v = load %xp, %m, %ot : tile<{R}x{C}x{t}>
"""


def _module(body, t="f32", out_t="f32"):
    return parse_module(f"""module {{
  func @k(%x: ptr<{t}>, %o: ptr<{out_t}>, %nrows: i32, %ncols: i32) {{kernel = true}} {{
{_prologue(t)}{body}    return
  }}
}}""")


def _store_1d(n, name="%red", t="f32", mask_by="%nrows"):
    return f"""    %k = arange {{start = 0, end = {n}}} : tile<{n}xi32>
    %km = splat {mask_by} : tile<{n}xi32>
    %kmask = cmp %k, %km {{predicate = "lt"}} : tile<{n}xi1>
    %os = splat %o : tile<{n}xptr<{t}>>
    %op = addptr %os, %k : tile<{n}xptr<{t}>>
    store %op, {name}, %kmask
"""


def _store_2d(name, t="f32"):
    return f"""    %os2 = splat %o : tile<{R}x{C}xptr<{t}>>
    %op2 = addptr %os2, %off : tile<{R}x{C}xptr<{t}>>
    store %op2, {name}, %m
"""


def _reduce(axis, comb, n_out):
    shape = f"tile<{n_out}xf32>"
    return f"""    %red = reduce %v {{axis = {axis}}} : {shape} {{
    ^bb(%a: f32, %b: f32):
      %s = {comb} %a, %b : f32
      yield %s
    }}
"""


def _run(m, x, nout):
    run, asm, _ = compile_cpu(m)
    out = np.full(nout, -7.0, x.dtype)
    run((1, 1, 1), [x, out, r, c])
    return out


@pytest.mark.parametrize("comb,fn", [("add", np.sum), ("max", np.max), ("min", np.min)])
def test_reduce_axis1_rows(comb, fn):
    x = rng.standard_normal((r, c)).astype(np.float32)
    m = _module(_reduce(1, comb, R) + _store_1d(R))
    out = _run(m, x, R)
    xp = np.zeros((r, C), np.float32)
    xp[:, :c] = x
    np.testing.assert_allclose(out[:r], fn(xp, axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("comb,fn", [("add", np.sum), ("max", np.max)])
def test_reduce_axis0_columns(comb, fn):
    x = rng.standard_normal((r, c)).astype(np.float32)
    m = _module(_reduce(0, comb, C) + _store_1d(C, mask_by="%ncols"))
    out = _run(m, x, C)
    xp = np.zeros((R, c), np.float32)
    xp[:r] = x
    np.testing.assert_allclose(out[:c], fn(xp, axis=0), rtol=1e-5, atol=1e-5)


def test_reduce_to_scalar_twice():
    x = rng.standard_normal((r, c)).astype(np.float32)
    body = _reduce(1, "add", R) + """    %tot = reduce %red {axis = 0} : f32 {
    ^bb(%a2: f32, %b2: f32):
      %s2 = add %a2, %b2 : f32
      yield %s2
    }
    store %o, %tot
"""
    out = _run(_module(body), x, 1)
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-5)


def test_argmax_two_operand_reduce():
    x = rng.standard_normal((r, c)).astype(np.float32)
    body = f"""    %red, %idx = reduce %v, %jb {{axis = 1}} : tile<{R}xf32>, tile<{R}xi32> {{
    ^bb(%av: f32, %ai: i32, %bv: f32, %bi: i32):
      %gt = cmp %bv, %av {{predicate = "gt"}} : i1
      %eq = cmp %bv, %av {{predicate = "eq"}} : i1
      %lt = cmp %bi, %ai {{predicate = "lt"}} : i1
      %tie = and %eq, %lt : i1
      %take = or %gt, %tie : i1
      %rv = select %take, %bv, %av : f32
      %ri = select %take, %bi, %ai : i32
      yield %rv, %ri
    }}
{_store_1d(R, "%idx", "i32")}"""
    m = _module(body, out_t="i32")
    run, _, _ = compile_cpu(m)
    out = np.full(R, -7, np.int32)
    run((1, 1, 1), [x, out, r, c])
    xp = np.zeros((r, C), np.float32)
    xp[:, :c] = x
    np.testing.assert_array_equal(out[:r], xp.argmax(1))


@pytest.mark.parametrize("axis,reverse", [(1, False), (0, False), (1, True), (0, True)])
def test_cumsum_scan(axis, reverse):
    x = rng.standard_normal((r, c)).astype(np.float32)
    body = f"""    %sc = scan %v {{axis = {axis}, reverse = {"true" if reverse else "false"}}} : tile<{R}x{C}xf32> {{
    ^bb(%a: f32, %b: f32):
      %s = add %a, %b : f32
      yield %s
    }}
{_store_2d("%sc")}"""
    m = _module(body)
    run, _, _ = compile_cpu(m)
    out = np.zeros((r, c), np.float32)
    run((1, 1, 1), [x, out, r, c])
    xp = np.zeros((R, C), np.float64)
    xp[:r, :c] = x
    ref = np.flip(np.cumsum(np.flip(xp, axis), axis), axis) if reverse else np.cumsum(xp, axis)
    np.testing.assert_allclose(out, ref[:r, :c], rtol=1e-5, atol=1e-5)


def test_trans_and_reshape():
    x = rng.standard_normal((r, c)).astype(np.float32)
    # transpose the square-ish part: o[j, i] = x[i, j] via trans then store with transposed offsets
    body = f"""    %t = trans %v {{order = [1, 0]}} : tile<{C}x{R}xf32>
    %e = exp %t : tile<{C}x{R}xf32>
    %flat = reshape %e : tile<{C * R}xf32>
    %k = arange {{start = 0, end = {C * R}}} : tile<{C * R}xi32>
    %os = splat %o : tile<{C * R}xptr<f32>>
    %op = addptr %os, %k : tile<{C * R}xptr<f32>>
    store %op, %flat
"""
    m = _module(body)
    run, _, _ = compile_cpu(m)
    out = np.zeros(C * R, np.float32)
    run((1, 1, 1), [x, out, r, c])
    xp = np.zeros((R, C), np.float64)
    xp[:r, :c] = x
    np.testing.assert_allclose(out.reshape(C, R), np.exp(xp).T, rtol=1e-6)


def test_dot_with_transposed_operand_and_bias():
    x = rng.standard_normal((r, c)).astype(np.float32)
    body = f"""    %t = trans %v {{order = [1, 0]}} : tile<{C}x{R}xf32>
    %z = constant {{value = 1.5}} : f32
    %acc = splat %z : tile<{R}x{R}xf32>
    %d = dot %v, %t, %acc : tile<{R}x{R}xf32>
    %k = arange {{start = 0, end = {R * R}}} : tile<{R * R}xi32>
    %flat = reshape %d : tile<{R * R}xf32>
    %os = splat %o : tile<{R * R}xptr<f32>>
    %op = addptr %os, %k : tile<{R * R}xptr<f32>>
    store %op, %flat
"""
    m = _module(body)
    run, _, _ = compile_cpu(m)
    out = np.zeros(R * R, np.float32)
    run((1, 1, 1), [x, out, r, c])
    xp = np.zeros((R, C), np.float64)
    xp[:r, :c] = x
    np.testing.assert_allclose(out.reshape(R, R), xp @ xp.T + 1.5, rtol=1e-5, atol=1e-5)


def test_batched_dot_3d():
    m = parse_module("""module {
  func @k(%x: ptr<f32>, %o: ptr<f32>) {kernel = true} {
    %i = arange {start = 0, end = 96} : tile<96xi32>
    %xs = splat %x : tile<96xptr<f32>>
    %xp = addptr %xs, %i : tile<96xptr<f32>>
    %v = load %xp : tile<96xf32>
    %a = reshape %v : tile<3x4x8xf32>
    %b = reshape %v : tile<3x8x4xf32>
    %z = constant {value = 0.25} : f32
    %acc = splat %z : tile<3x4x4xf32>
    %d = dot %a, %b, %acc : tile<3x4x4xf32>
    %flat = reshape %d : tile<48xf32>
    %k = arange {start = 0, end = 48} : tile<48xi32>
    %os = splat %o : tile<48xptr<f32>>
    %op = addptr %os, %k : tile<48xptr<f32>>
    store %op, %flat
    return
  }
}""")
    run, _, _ = compile_cpu(m)
    x = rng.standard_normal(96).astype(np.float32)
    out = np.zeros(48, np.float32)
    run((1, 1, 1), [x, out])
    xd = x.astype(np.float64)
    np.testing.assert_allclose(out.reshape(3, 4, 4), xd.reshape(3, 4, 8) @ xd.reshape(3, 8, 4) + 0.25, rtol=1e-5)


def test_long_row_reductions_use_independent_chains():
    """512-wide rows: 32 vector chunks reduced in 4 interleaved chains (sum, and argmax with index ties)."""
    n = 512
    m = parse_module(f"""module {{
  func @k(%x: ptr<f32>, %o: ptr<f32>, %oi: ptr<i32>) {{kernel = true}} {{
    %i = arange {{start = 0, end = {n}}} : tile<{n}xi32>
    %xs = splat %x : tile<{n}xptr<f32>>
    %xp = addptr %xs, %i : tile<{n}xptr<f32>>
    %v = load %xp : tile<{n}xf32>
    %s = reduce %v {{axis = 0}} : f32 {{
    ^bb(%a: f32, %b: f32):
      %c = add %a, %b : f32
      yield %c
    }}
    store %o, %s
    %mv, %mi = reduce %v, %i {{axis = 0}} : f32, i32 {{
    ^bb(%av: f32, %ai: i32, %bv: f32, %bi: i32):
      %gt = cmp %bv, %av {{predicate = "gt"}} : i1
      %eq = cmp %bv, %av {{predicate = "eq"}} : i1
      %lt = cmp %bi, %ai {{predicate = "lt"}} : i1
      %tie = and %eq, %lt : i1
      %take = or %gt, %tie : i1
      %rv = select %take, %bv, %av : f32
      %ri = select %take, %bi, %ai : i32
      yield %rv, %ri
    }}
    store %oi, %mi
    return
  }}
}}""")
    run, _, _ = compile_cpu(m)
    x = np.round(rng.standard_normal(n).astype(np.float32) * 4)  # many ties
    o, oi = np.zeros(1, np.float32), np.zeros(1, np.int32)
    run((1, 1, 1), [x, o, oi])
    np.testing.assert_allclose(o[0], x.astype(np.float64).sum(), rtol=1e-6)
    assert oi[0] == int(np.argmax(x))
