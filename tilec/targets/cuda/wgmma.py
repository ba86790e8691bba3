"""NVIDIA warpgroup matrix units (sm_90a): ``wgmma.mma_async.m64nNk16`` with B (and A, unless it comes in
registers) read from shared memory through 64-bit matrix descriptors.

The accumulator is the version-3 mma layout: with ``wm`` warps along rows, warp ``w`` holds rows
``16(w mod wm)..`` of each ``16 * wm``-row pass, in the m16n8 fragment pattern, which is exactly the order of the
instruction's ``d`` registers (per 8 columns: (row g, col 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)). Warpgroup
``w // 4`` issues the instructions for its 64 rows of each pass and, where warps also split N (a 64-row tile with
8 warps), for its own contiguous block of columns.

Descriptors (PTX ISA, "matrix descriptor"): start address, leading and stride byte offsets (all >> 4) and the
swizzle mode. Buffers come from :func:`tilec.gpu.layouts.shared_for_operand`: rows of at most 128 bytes along
the contiguous dimension, blocks of ``cols`` elements side by side, 16-byte units XOR-swizzled by the row, which
is the 128/64/32-byte swizzle the hardware applies to addresses when the buffer is 1024-byte aligned. K-major
operand (k contiguous): stride offset = 8 rows; the leading offset is unused, and a k-step inside the swizzle
row moves the start address. MN-major (the other dimension contiguous): stride offset = 8 k-rows, leading offset
= one ``cols``-wide block; a k-step moves 16 rows.
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...gpu.lowering.byte_operands import packed_word
from ...gpu.passes.common import is_zero
from ...gpu.lowering.types import I32, I64, to_memory
from ...gpu.lowering.values import ll_of
from ...ir.types import SharedBufferType
from . import nvvm

F32 = ir.FloatType()
_SWIZZLE = {128: 1, 64: 2, 32: 3}


def _c(v, t=I32):
    return ir.Constant(t, v)


def _asm(b, text, cons, args, ret):
    fty = ir.FunctionType(ret, [a.type for a in args])
    return b.call(ir.InlineAsm(fty, text, cons, side_effect=True), args)


class Operand:
    """A shared-memory operand of shape [rows, k] (``kdim`` says which buffer dimension is k)."""

    def __init__(self, L, value, kdim):
        t: SharedBufferType = value.type
        self.L, self.t, self.kdim = L, t, kdim
        self.base = L.get(value)  # i32 byte offset of the stage in the kernel's shared memory
        lay = t.layout
        shape = t.tile_shape
        self.eb = t.element.bytes
        self.fast = lay.order[0]
        self.w = lay.block_cols(shape)
        self.row_bytes = self.w * self.eb
        self.k_major = self.fast == kdim
        self.swizzle = _SWIZZLE.get(self.row_bytes, 0) if lay.max_phase > 1 or self.row_bytes == 16 else 0
        self.slow_extent = shape[1 - self.fast]
        # 8 rows to the next 8 rows; one block of the contiguous dimension to the next (K-major swizzled
        # descriptors ignore the latter)
        sbo, lbo = 8 * self.row_bytes, self.slow_extent * self.row_bytes
        self.const = ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | self.swizzle << 62

    def offset(self, row, k):
        """Element offset of (non-k index ``row``, ``k``), both multiples of 8; ``row`` may be an i32 value."""
        b = self.L.b
        coord = {self.kdim: k, 1 - self.kdim: row}
        fast, slow = coord[self.fast], coord[1 - self.fast]
        block_size = self.slow_extent * self.w
        if isinstance(fast, int):
            block, inner = divmod(fast, self.w)
            fast_off = _c(block * block_size + inner)
        else:  # a multiple of 8 known only at run time
            sh = self.w.bit_length() - 1
            fast_off = b.add(b.mul(b.lshr(fast, _c(sh)), _c(block_size)), b.and_(fast, _c(self.w - 1)))
        slow_off = _c(slow * self.w) if isinstance(slow, int) else b.mul(slow, _c(self.w))
        return b.add(fast_off, slow_off)

    def desc(self, row, k):
        """The descriptor of the 8-aligned block at (``row``, ``k``): the row's descriptor (built once per row
        value) plus the k offset, a constant added to the start-address field (offsets are per dimension)."""
        b = self.L.b
        key = row if isinstance(row, int) else id(row)
        d = self._rows.get(key) if hasattr(self, "_rows") else None
        if d is None:
            self._rows = getattr(self, "_rows", {})
            addr = b.add(b.add(b.ptrtoint(self.L.smem, I32), self.base), b.mul(self.offset(row, 0), _c(self.eb)))
            lo = b.zext(b.and_(b.lshr(addr, _c(4)), _c(0x3FFF)), I64)
            d = self._rows[key] = b.or_(lo, _c(self.const, I64))
        if not k:
            return d
        coord = {self.kdim: k, 1 - self.kdim: 0}
        block, inner = divmod(coord[self.fast], self.w)
        off = block * self.slow_extent * self.w + inner + coord[1 - self.fast] * self.w
        return b.add(d, _c((off * self.eb) >> 4, I64))


#: per input type: the instruction's name for it and k per instruction
KINDS = {"f16": ("f16", 16), "bf16": ("bf16", 16), "f8e4m3": ("e4m3", 32), "f8e5m2": ("e5m2", 32),
         "i8": ("s8", 32), "u8": ("u8", 32), "f32": ("tf32", 8)}


class Instruction:
    """The text of one ``wgmma.mma_async`` for a dot's types: m64nNkK, the accumulator's register kind, and
    the operands the form takes (16-bit inputs may be transposed while read; 8-bit and tf32 ones are k-major;
    integer forms have no input scales)."""

    def __init__(self, op, n_inst, a_shared, a_kmajor, b_kmajor):
        ea, eb = op.a.type.element.name, op.b.type.element.name
        (ka, self.k), (kb, _) = KINDS[ea], KINDS[eb]
        self.integer = ka in ("s8", "u8")
        acc = "s32" if self.integer else "f32"
        self.reg, self.ty = ("r", I32) if self.integer else ("f", F32)
        self.n_out = n_inst // 2
        n = self.n_out
        outs = ",".join(f"${i}" for i in range(n))
        a_text = f"${n}" if a_shared else "{" + ",".join(f"${n + i}" for i in range(4)) + "}"
        nb = n + (1 if a_shared else 4)
        tail = "" if self.integer else ", 1, 1"
        if ka in ("f16", "bf16"):
            tail += (f", {0 if a_kmajor else 1}" if a_shared else "") + f", {0 if b_kmajor else 1}"
        self.body = (f"wgmma.mma_async.sync.aligned.m64n{n_inst}k{self.k}.{acc}.{ka}.{kb} {{{outs}}}, {a_text}, "
                     f"${nb}, p{tail};")
        ins = [f"={self.reg}"] * n + (["l"] if a_shared else ["r"] * 4) + ["l"]
        self.fresh_cons = ",".join(ins)
        self.cons = ",".join(ins + [str(i) for i in range(n)])
        self.ret = ir.LiteralStructType([self.ty] * n)

    def text(self, accumulate):
        return self._scaled(int(accumulate))

    def text_flag(self, flag_index):
        """The accumulating form whose scale-d is the i32 input ``$flag_index`` (0: D = A B, the input
        accumulator's registers unread)."""
        return self._scaled(f"${flag_index}")

    def _scaled(self, scale_d):
        return "{\n.reg .pred p;\n" f"setp.ne.b32 p, {scale_d}, 0;\n{self.body}\n}}"


def lower_warp_group_dot(L, op):
    """``op`` as warpgroup instructions: per 64-row pass of the warpgroups and per N chunk of at most 256
    columns, a chain over k. With ``max_num_imprecise_acc`` (fp8: the units' own accumulation is less precise
    than f32) the chain restarts every that many k from a zero accumulator, and each partial sum is added to the
    accumulator in f32, as Triton does on this hardware."""
    b = L.b
    at, ct = op.a.type, op.acc.type
    M, N = ct.shape
    K = (at.tile_shape if isinstance(at, SharedBufferType) else at.shape)[1]
    c_ll = ll_of(ct)
    c_idx = {c: i for i, c in enumerate(c_ll.reg_coords())}
    acc = list(L.get(op.acc))
    wm, wn = ct.layout.warps_per_cta
    per_pass = 16 * wm
    cols = N // wn  # this warpgroup's block of columns
    n_inst = cols if cols <= 256 else 256
    wg_row, wg_col = _warpgroup_origin(L, wm, cols)
    B = Operand(L, op.b, 0)
    a_regs = None
    if isinstance(at, SharedBufferType):
        A = Operand(L, op.a, 1)
    else:
        A = None
        a_ll = ll_of(at)
        a_idx = {c: i for i, c in enumerate(a_ll.reg_coords())}
        a_regs = (L.get(op.a), a_idx, at)
    inst = Instruction(op, n_inst, A is not None, A is None or A.k_major, B.k_major)
    kstep = inst.k
    chunk = chunk_of(op, K)
    zero = is_zero(op.acc)  # the first step writes D without reading it: no registers to set up
    flag = L.get(op.use_acc) if op.use_acc is not None else None
    if flag is not None and chunk:  # partial sums restart anyway: the accumulator itself is selected
        acc = [b.select(flag, x, ir.Constant(x.type, 0)) for x in acc]
        flag = None
    flag32 = b.zext(flag, I32) if flag is not None else None
    # operands first: registers the units read must not be written between the fence and the last issue
    a_in, b_in = _operand_inputs(L, A, B, a_regs, (M // per_pass, per_pass), (cols // n_inst, n_inst), K, kstep,
                                 wg_row, wg_col)
    _asm(b, "wgmma.fence.sync.aligned;", "~{memory}", [], ir.VoidType())
    touched, partial = [], {}

    def regs_of(mp, nc):  # the accumulator registers one instruction writes
        return [c_idx[(mp * per_pass + 8 * ((i & 3) >> 1), nc * n_inst + 8 * (i >> 2) + (i & 1))]
                for i in range(inst.n_out)]

    for mp in range(M // per_pass):
        for nc in range(cols // n_inst):
            regs = regs_of(mp, nc)
            touched += regs
            part = None
            for kb in range(0, K, kstep):
                fresh = (zero and kb == 0) or (chunk and kb % chunk == 0)
                if chunk and kb and kb % chunk == 0:  # a chunk is done: into the f32 accumulator
                    partial.setdefault((mp, nc), []).append(part)
                if fresh:
                    r = _asm(b, inst.text(False), inst.fresh_cons, a_in[mp, kb] + b_in[nc, kb], inst.ret)
                elif flag32 is not None and kb == 0:
                    ins = a_in[mp, kb] + b_in[nc, kb] + [acc[i] for i in regs]
                    r = _asm(b, inst.text_flag(inst.n_out + len(ins)), inst.cons + ",r", ins + [flag32], inst.ret)
                else:
                    cur = part if chunk else [acc[i] for i in regs]
                    r = _asm(b, inst.text(True), inst.cons, a_in[mp, kb] + b_in[nc, kb] + cur, inst.ret)
                vals = [b.extract_value(r, j) for j in range(inst.n_out)]
                if chunk:
                    part = vals
                else:
                    for j, i in enumerate(regs):
                        acc[i] = vals[j]
            if chunk:
                partial.setdefault((mp, nc), []).append(part)
    _asm(b, "wgmma.commit_group.sync.aligned;", "~{memory}", [], ir.VoidType())
    if chunk:
        _add_chunks(b, acc, partial, regs_of, zero)
    else:
        _retire(b, acc, touched, op.attrs.get("pending", 0))
    L.bind(op.result, acc)


def _operand_inputs(L, A, B, a_regs, m_passes, n_chunks, K, kstep, wg_row, wg_col):
    """The instructions' operand inputs, keyed by (row pass, k) for A and (column chunk, k) for B: shared-memory
    descriptors, or A's register fragments."""
    b = L.b
    a_in, b_in = {}, {}
    for mp in range(m_passes[0]):
        for kb in range(0, K, kstep):
            a_in[mp, kb] = _a_fragment(b, a_regs, mp * m_passes[1], kb) if A is None else \
                [A.desc(b.add(wg_row, _c(mp * m_passes[1])), kb)]
    for nc in range(n_chunks[0]):
        col = nc * n_chunks[1] if wg_col is None else wg_col if nc == 0 else b.add(wg_col, _c(nc * n_chunks[1]))
        for kb in range(0, K, kstep):
            b_in[nc, kb] = [B.desc(col, kb)]
    return a_in, b_in


def _add_chunks(b, acc, partial, regs_of, zero):
    """The chunks' partial sums (``max_num_imprecise_acc``) added into the f32 accumulator, once every one of
    them is complete."""
    flat = [v for parts in partial.values() for p in parts for v in p]
    done = iter(wait(b, 0, flat))
    for (mp, nc), parts in partial.items():
        regs = regs_of(mp, nc)
        for j, p in enumerate(parts):
            vals = [next(done) for _ in p]
            for i, v in zip(regs, vals):
                # "contract": printed add.f32 as Triton's (nothing here to fuse with)
                acc[i] = v if (zero and j == 0) else b.fadd(acc[i], v, flags=("contract",))


def _retire(b, acc, touched, pending):
    """The end of a dot's issue: ``pending`` < 0 leaves it running (a later wait retires it); > 0 waits until at
    most that many groups are in flight (the accumulators stay in flight: only the next dot or a
    ``warp_group_dot_wait`` touches them); 0 waits for all and passes the accumulators through the wait."""
    if pending < 0:
        return
    if pending:
        _asm(b, f"wgmma.wait_group.sync.aligned {pending};", "~{memory}", [], ir.VoidType())
        return
    for i, v in zip(touched, wait(b, 0, [acc[i] for i in touched])):
        acc[i] = v


def _warpgroup_origin(L, wm, cols):
    """(first row, first column or None) of this warpgroup's part of the accumulator: warpgroups ``w // 4``
    take 64-row blocks first (``wm`` warps along rows), the rest ``cols``-wide column blocks. From a warp
    index ptxas can see is uniform, computed once in the entry block, so a dot in a loop does not shuffle it
    again every iteration."""
    key = ("warpgroup_origin", wm, cols)
    got = L.cache.get(key)
    if got is None:
        e = L.entry
        wg = e.lshr(nvvm.uniform_warp(L), _c(2))
        row_groups = wm // 4
        if L.num_warps == wm:
            got = (e.mul(wg, _c(64)), None)
        else:
            got = (e.mul(e.and_(wg, _c(row_groups - 1)), _c(64)),
                   e.mul(e.lshr(wg, _c(row_groups.bit_length() - 1)), _c(cols)))
        L.cache[key] = got
    return got


def chunk_of(op, K) -> int:
    """k per chunk when an fp8 dot accumulates imprecisely only up to ``max_num_imprecise_acc`` products (0:
    one chain over all of K into the accumulator itself)."""
    limit = op.attrs.get("max_num_imprecise_acc", 0) or 0
    if op.a.type.element.name not in ("f8e4m3", "f8e5m2") or limit <= 0:
        return 0
    return min(limit, K)


def wait(b, pending, values):
    """``wgmma.wait_group``; the values pass through it, so nothing reads them before the units are done.
    ``pending`` None: no instruction, the values only pass through (an earlier wait retired them)."""
    n = len(values)
    text = f"wgmma.wait_group.sync.aligned {pending};" if pending is not None else ""
    if not n:
        if text:
            _asm(b, text, "~{memory}", [], ir.VoidType())
        return []
    codes = ["r" if isinstance(v.type, ir.IntType) else "f" for v in values]
    r = _asm(b, text, ",".join([f"={c}" for c in codes] + [str(i) for i in range(n)]),
             list(values), ir.LiteralStructType([v.type for v in values]))
    return [b.extract_value(r, j) for j in range(n)]



def _a_fragment(b, a_regs, row0, kb):
    """The four b32 registers of A (registers, mma operand layout) for rows ``row0``.. (this warp's 16) and the
    instruction's k from ``kb``: 16-bit elements as pairs (g, 2t), (g+8, 2t), (g, 2t+8), (g+8, 2t+8); 8-bit ones
    as fours (g, 4t), (g+8, 4t), (g, 4t+16), (g+8, 4t+16), their codes in memory form."""
    av, a_idx, at = a_regs
    kw = at.layout.k_width
    out = []
    for r, k in ((0, 0), (8, 0), (0, 4 * kw), (8, 4 * kw)):
        elems = [av[a_idx[(row0 + r, kb + k + dk)]] for dk in range(kw)]
        if kw == 4:
            out.append(packed_word(b, [to_memory(b, at, v) for v in elems]))
            continue
        pair = [to_memory(b, at.element, v) if at.element.name == "bf16" else v for v in elems]
        vec = ir.Constant(ir.VectorType(pair[0].type, 2), ir.Undefined)
        for j, x in enumerate(pair):
            vec = b.insert_element(vec, x, _c(j))
        out.append(b.bitcast(vec, I32))
    return out
