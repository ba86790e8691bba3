"""NVIDIA's tensor memory accelerator (sm_90a): descriptors built in the kernel, bulk tensor copies into
shared memory, and the shared-memory barriers (``mbarrier``) that say when a copy has landed.

- A descriptor (128 bytes, opaque) is written by thread 0 into the program's slot of the launch's global
  scratch: zeros, then ``tensormap.replace`` of every field, then a release proxy fence; after a warp barrier,
  warp 0 (whose elected lane issues the copies) acquires it, so the copy engine (the tensormap proxy) sees the
  generic writes. Dimensions go innermost first; the stride of dimension ``i + 1`` is in bytes.
- The element type field only matters for the out-of-bounds fill: unsigned integers of the element's width
  move the bits, and f16/f32 (whose codes PTX and the driver agree on) take the NaN fill.
- A copy: one elected lane of warp 0 announces the stage's bytes on its barrier (``mbarrier.arrive.expect_tx``) and issues one
  ``cp.async.bulk.tensor`` per column block of the buffer's layout; the phase completes when all bytes landed.
- Everybody waits with ``mbarrier.try_wait.parity`` on the phase's parity.

PTX 8.3 or later (``tensormap.replace``). The stride field takes bytes: checked on an H100 with the CUDA 13
driver's JIT (Triton shifts it right by 4 for PTX <= 8.5, for an older ptxas; that shift gives wrong blocks here).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...gpu.passes.axis_info import AxisAnalysis
from ...ir import ops as O
from ...ir.core import BlockArgument, OpResult
from ...ir.types import PointerType
from . import nvvm
from .copies import _asm

I32, I64 = ir.IntType(32), ir.IntType(64)
_SWIZZLE_MODE = {0: 0, 32: 1, 64: 2, 128: 3}
_UINT_OF_BYTES = {1: 0, 2: 1, 4: 2, 8: 4}  # u8, u16, u32, u64
_FLOAT_CODES = {"f16": 6, "f32": 7}  # same code in PTX's tensormap and the driver's enumeration


def _c(v, t=I32):
    return ir.Constant(t, v)


# -- which descriptor loads the copy engine takes ---------------------------------------------------------------
def _outside(v, loop) -> bool:
    if isinstance(v, BlockArgument):
        return not loop.is_ancestor_of(v.block.parent_op) and v.block.parent_op is not loop
    return isinstance(v, OpResult) and not loop.is_ancestor_of(v.op)


def _constant(v):
    op = getattr(v, "op", None)
    return op.attrs.get("value") if isinstance(op, O.ConstantOp) else None


def _func_of(op):
    while not isinstance(op, O.FuncOp):
        if op.parent is None:
            return None
        op = op.parent_op
    return op


def _aligned(op, eb) -> bool:
    """Base, row stride and row length 16-byte aligned (what the specialisation proves, or constants), last
    stride 1."""
    if _constant(op.strides[-1]) != 1:
        return False
    func = _func_of(op)
    if func is None:
        return False
    info = AxisAnalysis(func).info
    # the innermost extent too: stores through a descriptor whose rows end off a 16-byte boundary wrote the
    # rest of that 16-byte chunk (measured on an H100), so out-of-bounds handling is only trusted on whole chunks
    return info(op.base).divisibility[0] >= 16 and info(op.strides[0]).divisibility[0] * eb % 16 == 0 and \
        info(op.shape[-1]).divisibility[0] * eb % 16 == 0


def _box_ok(rows, cols, eb) -> bool:
    row_bytes = cols * eb
    return rows <= 256 and row_bytes >= 16 and not (row_bytes > 128 and row_bytes % 128) and \
        (row_bytes > 128 or cols <= 256)


def keeps_descriptor(op, options) -> bool:
    """Loads: a 2-d descriptor load in a pipelined loop whose block the copy engine can move (boxes of at most
    256 per dimension, rows of 16+ bytes cut into 128-byte column blocks), feeding only dot operands, with its
    descriptor computed outside the loop. Stores: a 2-d descriptor store outside loops (the epilogue), its
    block under the same box rules. Both need a 16-byte aligned base and row stride (what the specialisation
    proves, or constants): the copy engine faults on misaligned descriptors, so anything unproven takes the
    pointer path."""
    if op.rank != 2:
        return False
    store = isinstance(op, O.DescriptorStoreOp)
    elt = op.base.type.pointee
    eb = 8 if isinstance(elt, PointerType) else elt.bytes
    if eb not in (1, 2, 4) or not _box_ok(*op.attrs["block_shape"], eb):
        return False
    loop = op.parent.parent_op if op.parent is not None else None
    if store:
        a = op
        while a is not None and not isinstance(a, O.FuncOp):
            if isinstance(a, (O.ForOp, O.WhileOp)) and a is not op:
                return False
            a = a.parent_op if a.parent is not None else None
        return _aligned(op, eb)
    if op.attrs["padding"] == "nan" and elt.name not in _FLOAT_CODES:
        return False
    if not isinstance(loop, O.ForOp):
        return False
    if loop.attrs.get("num_stages", options.num_stages) < 2:
        return False
    if not _feeds_dots(op.result):
        return False
    if not all(_outside(v, loop) for v in (op.base, *op.shape, *op.strides)):
        return False
    return _aligned(op, eb)


def _feeds_dots(v) -> bool:
    """Every use of ``v`` is a dot operand, directly or through transposes (which cost nothing once the block
    is in shared memory)."""
    if not v.uses:
        return False
    for u, i in v.uses:
        if isinstance(u, O.TransOp):
            if not _feeds_dots(u.result):
                return False
        elif not (isinstance(u, O.DotOp) and i in (0, 1)):
            return False
    return True


def encode_for_launch(entry, values) -> bytes:
    """The descriptor ``entry`` of ``metadata["launch_tensormaps"]`` (``gpu/launch_tensormaps.py``) with its leaf
    ``values`` (base address, shape, strides in elements), encoded by the driver as :func:`tensormap_create` would
    write it in the kernel."""
    from . import driver as drv  # local: this module generates code, only launches reach the driver
    box = entry["box"]
    n = len(box)
    base, shape, strides = values[0], values[1:1 + n], values[1 + n:1 + 2 * n]
    eb = entry["elem_bytes"]
    nan = entry["padding"] == "nan"
    code = _FLOAT_CODES[entry["elem"]] if nan else _UINT_OF_BYTES[eb]
    bstrides = [s * eb for s in reversed(strides)][1:]
    return drv.encode_tensormap(code, base, list(reversed(shape)), bstrides, list(reversed(box)),
                                _SWIZZLE_MODE[entry["swizzle"]], nan)


# -- lowering -----------------------------------------------------------------------------------------------
def tensormap_create(L, op, addr):
    """Thread 0 writes ``op``'s descriptor at global address ``addr`` (i64) and fences it for its own copies."""
    b = L.b
    box = list(op.attrs["box"])
    n = len(box)
    elt = op.base.type.pointee
    eb = elt.bytes
    shape, strides = op.dims[:n], op.dims[n:]
    dims = [b.trunc(L.get(v), I32) for v in reversed(shape)]  # innermost first
    bstrides = []
    for v in list(reversed(strides))[1:]:  # dimension i + 1's stride, in bytes
        bstrides.append(b.mul(L.get(v), _c(eb, I64)))
    nan = op.attrs["padding"] == "nan"
    code = _FLOAT_CODES[elt.name] if nan else _UINT_OF_BYTES[eb]
    base = b.ptrtoint(L.get(op.base), I64)
    args = [L.tid, addr, base] + dims + bstrides
    k = 3
    r = "tensormap.replace.tile"
    lines = ["{", ".reg .pred p;", ".reg .b32 z;", "setp.eq.u32 p, $0, 0;", "mov.b32 z, 0;"]
    lines += [f"@p st.global.v4.b32 [$1+{16 * i}], {{z, z, z, z}};" for i in range(8)]
    lines += [f"@p {r}.global_address.global.b1024.b64 [$1], $2;", f"@p {r}.rank.global.b1024.b32 [$1], {n - 1};"]
    for i, bx in enumerate(reversed(box)):
        lines.append(f"@p {r}.box_dim.global.b1024.b32 [$1], {i}, {bx};")
    for i in range(n):
        lines.append(f"@p {r}.global_dim.global.b1024.b32 [$1], {i}, ${k + i};")
    k += n
    for i in range(n - 1):
        lines.append(f"@p {r}.global_stride.global.b1024.b64 [$1], {i}, ${k + i};")
    for i in range(n):
        lines.append(f"@p {r}.element_stride.global.b1024.b32 [$1], {i}, 1;")
    lines += [f"@p {r}.elemtype.global.b1024.b32 [$1], {code};",
              f"@p {r}.interleave_layout.global.b1024.b32 [$1], 0;",
              f"@p {r}.swizzle_mode.global.b1024.b32 [$1], {_SWIZZLE_MODE[op.attrs['swizzle']]};",
              f"@p {r}.fill_mode.global.b1024.b32 [$1], {1 if nan else 0};",
              "@p fence.proxy.tensormap::generic.release.gpu;", "bar.warp.sync 0xffffffff;",
              f"@w fence.proxy.tensormap::generic.acquire.gpu [$1], 128;", "}"]
    lines.insert(2, f"setp.ne.b32 w, ${len(args)}, 0;")
    lines[1] = ".reg .pred p, w;"
    args.append(b.zext(b.icmp_unsigned("==", nvvm.uniform_warp(L), _c(0)), I32))
    cons = ",".join(["r", "l", "l"] + ["r"] * n + ["l"] * (n - 1) + ["r"]) + ",~{memory}"
    _asm(b, "\n".join(lines), cons, args)


def _per_box(b, op, smem, coords, args, instruction) -> list:
    """The lines of a stage's bulk tensor copies, one per column block (box) of the stage at shared ``smem``: each
    box's shared address and coordinates (innermost first, the innermost moved on by the box's columns) are
    appended to ``args``, and ``instruction(rank, "$k", "$k+1, ...")`` writes its copy from their operand
    numbers. Loads and stores split a stage alike; only the instruction differs."""
    bt = op.buffer.type
    shape = bt.tile_shape
    w = bt.layout.block_cols(shape)
    blocks = shape[-1] // w
    block_bytes = bt.tile_numel // blocks * bt.element.bytes
    n = len(shape)
    inner = list(reversed(coords))
    lines = []
    for j in range(blocks):
        k = len(args)
        args.append(b.add(smem, _c(j * block_bytes)))
        args.append(b.add(inner[0], _c(j * w)) if j else inner[0])
        args.extend(inner[1:])
        lines.append(instruction(n, f"${k}", ", ".join(f"${k + 1 + i}" for i in range(n))))
    return lines


def tma_copy(L, op, dst, bar, desc, pred, coords):
    """Thread 0 (where ``pred``) announces the stage's bytes and copies it, one box per column block."""
    b = L.b
    bt = op.buffer.type
    # warp 0 (an index ptxas sees is warp-uniform), one lane of it chosen by an unpredicated elect.sync and
    # the warp's condition: ptxas then issues each copy once as a uniform instruction (an elect.sync under a
    # predicate made it loop over the lanes around every copy)
    warp0 = b.icmp_unsigned("==", nvvm.uniform_warp(L), _c(0))
    go = b.zext(b.and_(warp0, pred), I32)
    args = [go, bar, desc]
    announce = op.attrs.get("announce", -1)
    announce = bt.tile_numel * bt.element.bytes if announce < 0 else announce
    lines = ["{", ".reg .pred w, p;", "setp.ne.b32 w, $0, 0;", "elect.sync _|p, 0xffffffff;", "and.pred p, p, w;"]
    if announce:
        lines.append(f"@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], {announce};")
    lines += _per_box(b, op, dst, coords, args, lambda n, smem, cs: (
        f"@p cp.async.bulk.tensor.{n}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
        f"[{smem}], [$2, {{{cs}}}], [$1];"))
    lines.append("}")
    cons = ",".join(["r", "r", "l"] + ["r"] * (len(args) - 3)) + ",~{memory}"
    _asm(b, "\n".join(lines), cons, args)


def tma_store(L, op, src, desc, coords):
    """One elected lane of warp 0 copies the stage at shared ``src`` out, one box per column block, and waits
    until the copies have read the stage (it may then be reused); the writes to global memory complete on their
    own, before the kernel is done."""
    b = L.b
    go = b.zext(b.icmp_unsigned("==", nvvm.uniform_warp(L), _c(0)), I32)
    args = [go, desc]
    lines = ["{", ".reg .pred w, p;", "setp.ne.b32 w, $0, 0;", "elect.sync _|p, 0xffffffff;", "and.pred p, p, w;"]
    lines += _per_box(b, op, src, coords, args, lambda n, smem, cs: (
        f"@p cp.async.bulk.tensor.{n}d.global.shared::cta.tile.bulk_group [$1, {{{cs}}}], [{smem}];"))
    lines += ["@p cp.async.bulk.commit_group;", "@p cp.async.bulk.wait_group.read 0;", "}"]
    cons = ",".join(["r", "l"] + ["r"] * (len(args) - 2)) + ",~{memory}"
    _asm(b, "\n".join(lines), cons, args)


def mbarrier(L, kind, bar, arg=None):
    b = L.b
    if kind == "wait":
        text = ("{\n.reg .pred done;\ntilec_wait_${:uid}:\n"
                "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
                "@!done bra.uni tilec_wait_${:uid};\n}")
        _asm(b, text, "r,r,~{memory}", [bar, arg])
        return
    if kind == "init":
        text = ("{\n.reg .pred p;\nsetp.eq.u32 p, $0, 0;\n"
                f"@p mbarrier.init.shared::cta.b64 [$1], {int(arg)};\n@p fence.mbarrier_init.release.cluster;\n}}")
    else:
        text = "{\n.reg .pred p;\nsetp.eq.u32 p, $0, 0;\n@p mbarrier.inval.shared::cta.b64 [$1];\n}"
    _asm(b, text, "r,r,~{memory}", [L.tid, bar])
