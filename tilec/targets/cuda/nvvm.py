"""NVVM building blocks: special registers, barriers, warp shuffles and predicated vector global accesses.

Global loads/stores go through inline PTX so that a whole 4/8/16-byte vector is one instruction under one
predicate, with masked-off lanes keeping their ``other`` value (moved in before the predicated load), and with the
access's cache operator, eviction priority or volatility (``access_modifiers``).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ...codegen.intrinsics import call as intrinsic
from ...codegen.llvm_types import byte_size
from ...errors import BackendError
from ...gpu.lowering.shuffle import widened
from ...gpu.lowering.types import F16, I16, I32, VOID


def sreg(b, name: str):
    """``tid.x``, ``ctaid.y``, ``nctaid.z``..."""
    return intrinsic(b, f"llvm.nvvm.read.ptx.sreg.{name}", I32, [])


def barrier(b):
    intrinsic(b, "llvm.nvvm.barrier0", VOID, [])


def warp_uniform(b, v):
    """``v`` (an i32 every lane of the warp holds alike, such as the warp index) read from lane 0 with
    ``shfl.sync.idx``: ptxas then knows it is warp-uniform and keeps what is computed from it (wgmma
    descriptors) in uniform registers instead of moving it over with an ``R2UR`` before each use."""
    return intrinsic(b, "llvm.nvvm.shfl.sync.idx.i32", I32, [ir.Constant(I32, 0xFFFFFFFF), v, ir.Constant(I32, 0),
                                                             ir.Constant(I32, 0x1F)])


def uniform_warp(L):
    """The warp index as :func:`warp_uniform` gives it, computed once per kernel in the entry block (uses in a
    loop would otherwise shuffle it again every iteration)."""
    w = L.cache.get("uniform_warp")
    if w is None:
        w = L.cache["uniform_warp"] = warp_uniform(L.entry, L.warp)
    return w


def shfl_xor(b, v, lane_mask: int):
    """Value of ``v`` in the lane whose index differs in ``lane_mask``, for any scalar type (``shfl.sync.bfly``
    moves 32 bits; :func:`~tilec.gpu.lowering.shuffle.widened` carries the other types through it)."""
    full, mask, clamp = ir.Constant(I32, 0xFFFFFFFF), ir.Constant(I32, lane_mask), ir.Constant(I32, 0x1F)
    return widened(b, v, lambda x32: intrinsic(b, "llvm.nvvm.shfl.sync.bfly.i32", I32, [full, x32, mask, clamp]))


def shfl_idx(b, x32, lane):
    """i32 ``x32`` of lane ``lane`` (``shfl.sync.idx``, the whole warp taking part)."""
    full, clamp = ir.Constant(I32, 0xFFFFFFFF), ir.Constant(I32, 0x1F)
    return intrinsic(b, "llvm.nvvm.shfl.sync.idx.i32", I32, [full, x32, lane, clamp])


def prmt(b, x, y, selector):
    """``prmt.b32``: bytes of the pair (``x`` low, ``y`` high) picked by the nibbles of i32 ``selector``."""
    fty = ir.FunctionType(I32, [I32, I32, I32])
    return b.call(ir.InlineAsm(fty, "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r"), [x, y, selector])


# ---------------------------------------------------------------------------------------------------------------
# predicated vector global memory access
# ---------------------------------------------------------------------------------------------------------------
def _words(nbytes: int):
    """(number of registers, their type, constraint, PTX type) moving a vector of ``nbytes``: 32-bit words from 4
    bytes on, else one 16-bit register (a single byte travels zero-extended in it, ``.u8``)."""
    if nbytes >= 4:
        return nbytes // 4, I32, "r", "b32"
    if nbytes == 2:
        return 1, I16, "h", "b16"
    return 1, I16, "h", "u8"


def _pack(b, values, word_t, nwords):
    """Memory-typed element values -> ``nwords`` words of ``word_t``."""
    et = values[0].type
    n = len(values)
    if n == 1 and isinstance(et, ir.IntType) and et.width < word_t.width:
        return [b.zext(values[0], word_t)]
    vec = ir.VectorType(et, n)
    acc = ir.Constant(vec, ir.Undefined)
    for i, v in enumerate(values):
        acc = b.insert_element(acc, v, ir.Constant(I32, i))
    if nwords == 1:
        return [b.bitcast(acc, word_t)]
    words = b.bitcast(acc, ir.VectorType(word_t, nwords))
    return [b.extract_element(words, ir.Constant(I32, i)) for i in range(nwords)]


def _unpack(b, words, et, n):
    nw = len(words)
    if nw == 1:
        w = words[0]
        if n == 1 and isinstance(et, ir.IntType) and et.width < w.type.width:
            return [b.trunc(w, et)]
        v = b.bitcast(w, ir.VectorType(et, n)) if n > 1 else b.bitcast(w, et)
        return [b.extract_element(v, ir.Constant(I32, i)) for i in range(n)] if n > 1 else [v]
    acc = ir.Constant(ir.VectorType(words[0].type, nw), ir.Undefined)
    for i, w in enumerate(words):
        acc = b.insert_element(acc, w, ir.Constant(I32, i))
    v = b.bitcast(acc, ir.VectorType(et, n))
    return [b.extract_element(v, ir.Constant(I32, i)) for i in range(n)]


LOAD_CACHE = ("ca", "cg", "cs", "lu", "cv")
STORE_CACHE = ("wb", "cg", "cs", "wt")
EVICTION = ("evict_normal", "evict_first", "evict_last", "evict_unchanged", "no_allocate")


def access_modifiers(hints, store: bool, arch: int):
    """(PTX qualifiers after ``.global``, the ``createpolicy`` line or "") for an access with ``hints`` (a
    ``gpu.target.AccessHints``), as NVIDIA's instruction forms allow them: a cache operator
    (``ld.global.cg``); an L1 eviction priority with, from sm_80 on, an L2 policy that says the same
    (``ld.global.L1::evict_last.L2::cache_hint ..., policy``); both at once as the cache operator with the L2
    policy (``ld.global.cg.L2::cache_hint``: PTX has no form with a cache operator and an L1 priority); or a
    volatile load, which takes neither (volatility is semantics, the others are hints, so it wins)."""
    if hints is None or not hints:
        return "", ""
    if hints.volatile:
        if store:
            raise BackendError("volatile applies to loads only")
        return "volatile", ""
    cop = ""
    if hints.cache:
        allowed = STORE_CACHE if store else LOAD_CACHE
        if hints.cache not in allowed:
            raise BackendError(f"cache modifier '.{hints.cache}' is not a PTX {'store' if store else 'load'} "
                               f"cache operator (one of {', '.join('.' + c for c in allowed)})")
        cop = "." + hints.cache
    ev = hints.eviction
    if ev and ev not in EVICTION:
        raise BackendError(f"eviction policy '{ev}' is not one of {', '.join(EVICTION)}")
    if not ev or ev == "evict_normal" or arch < 70:
        return cop, ""  # the default priority, or before sm_70 (priorities are hints: dropped)
    policy = f"createpolicy.fractional.L2::{ev}.b64 %policy, 1.0;"
    if arch >= 80 and ev in ("evict_first", "evict_last"):
        return (cop or f".L1::{ev}") + ".L2::cache_hint", policy
    return cop or f".L1::{ev}", ""


def _asm_access(guard: str, text: str, policy: str) -> str:
    """An access instruction under ``guard``, with its L2 cache policy made in a register of its own scope when
    it takes one."""
    if not policy:
        return guard + text
    return "{\n\t.reg .b64 %policy;\n\t" + policy + "\n\t" + guard + text.rstrip(";") + ", %policy;\n\t}"


def vector_load(b, ptr, et, n: int, pred=None, others=None, hints=None, arch: int = 80):
    """Load ``n`` consecutive elements of memory type ``et`` at ``ptr`` (aligned to the whole vector) as one
    instruction; where ``pred`` is false the results are ``others`` (or zero). ``hints`` (AccessHints): cache
    operator, eviction priority or volatile, as ``access_modifiers`` spells them."""
    nbytes = n * byte_size(et)
    nw, wt, cons, bits = _words(nbytes)
    mods, policy = access_modifiers(hints, False, arch)
    if not mods and n == 1 and nbytes < 4 and et != I16 and et != F16:
        return [_scalar_load(b, ptr, et, pred, others[0] if others else None)]
    if others is None:
        others = [ir.Constant(et, None)] * n  # zero
    other_words = _pack(b, others, wt, nw)
    outs = ",".join(f"${i}" for i in range(nw))
    addr = f"${nw}"
    mov = "b16" if bits == "u8" else bits
    lines = [f"mov.{mov} ${i}, ${nw + 2 + i};" for i in range(nw)] if pred is not None else []
    vec = f".v{nw}" if nw > 1 else ""
    dst = "{" + outs + "}" if nw > 1 else "$0"
    guard = f"@${nw + 1} " if pred is not None else ""
    space = "volatile.global" if mods == "volatile" else "global" + mods
    lines.append(_asm_access(guard, f"ld.{space}{vec}.{bits} {dst}, [{addr}];", policy))
    cons_list = [f"={cons}"] * nw + ["l"]
    args = [ptr]
    if pred is not None:
        cons_list += ["b"] + [cons] * nw
        args += [pred] + other_words
    ret = ir.LiteralStructType([wt] * nw) if nw > 1 else wt
    fty = ir.FunctionType(ret, [a.type for a in args])
    asm = ir.InlineAsm(fty, "\n\t".join(lines), ",".join(cons_list), side_effect=True)
    r = b.call(asm, args)
    words = [b.extract_value(r, i) for i in range(nw)] if nw > 1 else [r]
    return _unpack(b, words, et, n)


def vector_store(b, ptr, values, pred=None, hints=None, arch: int = 80):
    et = values[0].type
    n = len(values)
    nbytes = n * byte_size(et)
    nw, wt, cons, bits = _words(nbytes)
    mods, policy = access_modifiers(hints, True, arch)
    if not mods and n == 1 and nbytes < 4 and et != I16 and et != F16:
        return _scalar_store(b, ptr, values[0], pred)
    if bits == "u8":
        bits = "b8"
    words = _pack(b, values, wt, nw)
    vec = f".v{nw}" if nw > 1 else ""
    src = "{" + ",".join(f"${i + 1}" for i in range(nw)) + "}" if nw > 1 else "$1"
    guard = f"@${nw + 1} " if pred is not None else ""
    text = _asm_access(guard, f"st.global{mods}{vec}.{bits} [$0], {src};", policy)
    cons_list = ["l"] + [cons] * nw
    args = [ptr] + words
    if pred is not None:
        cons_list.append("b")
        args.append(pred)
    fty = ir.FunctionType(VOID, [a.type for a in args])
    b.call(ir.InlineAsm(fty, text, ",".join(cons_list), side_effect=True), args)


def _scalar_load(b, ptr, et, pred, other):
    if pred is None:
        return b.load(ptr, typ=et)
    if other is None:
        other = ir.Constant(et, None)  # zero or null
    start = b.block
    with b.if_then(pred):
        v = b.load(ptr, typ=et)
        inner = b.block
    phi = b.phi(et)
    phi.add_incoming(v, inner)
    phi.add_incoming(other, start)
    return phi


def _scalar_store(b, ptr, value, pred):
    if pred is None:
        b.store(value, ptr)
        return
    with b.if_then(pred):
        b.store(value, ptr)


__all__ = ["sreg", "barrier", "warp_uniform", "shfl_xor", "vector_load", "vector_store", "intrinsic"]
