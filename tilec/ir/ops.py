"""The tile IR's operations, declared as small classes.

Shape rules are strict: elementwise ops take operands of one shape (the frontend inserts ``splat``/``broadcast``),
so passes and lowerings never re-derive broadcasting. Element types of scalar/tile operands drive the semantics:
``div`` is C-style truncating division on integers (signedness from the type) and true division on floats,
``shr`` is arithmetic on signed and logical on unsigned integers, ``rem`` follows C (sign of the dividend).
"""
from __future__ import annotations

from .core import IRError, Operation, Region, Block
from .types import FunctionType, PointerType, ScalarType, TileType, Type, i1, i32, i64

PURE = frozenset({"pure"})


def _check(cond, op, msg):
    if not cond:
        raise IRError(f"'{op.name}' op {msg}")


# ---------------------------------------------------------------------------------------------------------------
# constants, ranges, program ids
# ---------------------------------------------------------------------------------------------------------------
class ConstantOp(Operation):
    """A scalar constant, or a tile with every element equal to ``value``."""
    name = "constant"
    attr_types = {"value": (int, float, bool)}
    traits = PURE

    def verify_(self):
        t = self.result.type
        _check(isinstance(self.attrs.get("value"), (int, float, bool)), self, "needs a numeric 'value'")
        _check(not t.is_ptr, self, "cannot produce pointers")

    def fold(self):
        return None


class ArangeOp(Operation):
    """``tile<(end-start) x i32>`` holding start, start+1, ..., end-1."""
    name = "arange"
    attr_types = {"start": int, "end": int}
    traits = PURE

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [TileType((attrs["end"] - attrs["start"],), i32)]

    def verify_(self):
        n = self.attrs["end"] - self.attrs["start"]
        _check(self.result.type.shape == (n,), self, "result size mismatch")
        _check(self.result.type.is_int, self, "result must be integer")


class ProgramIdOp(Operation):
    name = "program_id"
    attr_types = {"axis": int}
    traits = PURE

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [i32]

    def verify_(self):
        _check(self.attrs["axis"] in (0, 1, 2), self, "axis must be 0, 1 or 2")


class NumProgramsOp(ProgramIdOp):
    name = "num_programs"


# ---------------------------------------------------------------------------------------------------------------
# elementwise arithmetic
# ---------------------------------------------------------------------------------------------------------------
class ElementwiseOp(Operation):
    """Operands share one shape; results have that shape. ``same_type`` ops also share the element type."""
    traits = frozenset({"pure", "elementwise", "same_type"})

    def verify_(self):
        shapes = {o.type.shape for o in self.operands} | {r.type.shape for r in self.results}
        _check(len(shapes) == 1, self, f"operands/results must have one shape, got {sorted(shapes)}")
        if "same_type" in self.traits:
            types = {o.type for o in self.operands} | {r.type for r in self.results}
            _check(len(types) == 1, self, f"operands/results must have one type, got {sorted(map(str, types))}")


class BinaryOp(ElementwiseOp):
    operand_names = ("lhs", "rhs")
    domain = "any"  # "int", "float" or "any": which element types the op accepts

    def verify_(self):
        super().verify_()
        t = self.lhs.type
        _check(not t.is_ptr, self, "does not take pointers (use addptr)")
        if self.domain == "int":
            _check(t.is_int, self, f"needs integer operands, got {t}")
        elif self.domain == "float":
            _check(t.is_float, self, f"needs floating-point operands, got {t}")


def _binary(cls_name, op_name, domain="any", commutative=False, attrs=None):
    traits = BinaryOp.traits | ({"commutative"} if commutative else set())
    ns = {"name": op_name, "domain": domain, "traits": frozenset(traits)}
    if attrs:
        ns["attr_types"] = {k: type(v) for k, v in attrs.items()}
        ns["attr_defaults"] = dict(attrs)
    return type(cls_name, (BinaryOp,), ns)


AddOp = _binary("AddOp", "add", commutative=True)
SubOp = _binary("SubOp", "sub")
MulOp = _binary("MulOp", "mul", commutative=True)
DivOp = _binary("DivOp", "div")            # int: truncating (C); float: true division
RemOp = _binary("RemOp", "rem")            # int: C remainder; float: fmod
AndOp = _binary("AndOp", "and", "int", commutative=True)
OrOp = _binary("OrOp", "or", "int", commutative=True)
XorOp = _binary("XorOp", "xor", "int", commutative=True)
ShlOp = _binary("ShlOp", "shl", "int")
ShrOp = _binary("ShrOp", "shr", "int")     # arithmetic for signed, logical for unsigned
MaxOp = _binary("MaxOp", "max", commutative=True, attrs={"propagate_nan": False})
MinOp = _binary("MinOp", "min", commutative=True, attrs={"propagate_nan": False})
PowOp = _binary("PowOp", "pow", "float")
Atan2Op = _binary("Atan2Op", "atan2", "float")
UMulHiOp = _binary("UMulHiOp", "umulhi", "int")
FDivOp = _binary("FDivOp", "fdiv", "float", attrs={"ieee_rounding": False})

BINARY_OPS = {c.name: c for c in (AddOp, SubOp, MulOp, DivOp, RemOp, AndOp, OrOp, XorOp, ShlOp, ShrOp, MaxOp,
                                  MinOp, PowOp, Atan2Op, UMulHiOp, FDivOp)}


class UnaryOp(ElementwiseOp):
    operand_names = ("src",)
    domain = "any"

    def verify_(self):
        super().verify_()
        t = self.src.type
        _check(not t.is_ptr, self, "does not take pointers")
        if self.domain == "int":
            _check(t.is_int, self, f"needs integer operands, got {t}")
        elif self.domain == "float":
            _check(t.is_float, self, f"needs floating-point operands, got {t}")


# name -> domain. Adding a math function is one line here plus its numpy/LLVM semantics.
UNARY_DOMAINS = {
    "neg": "any", "not": "int", "abs": "any",
    "exp": "float", "exp2": "float", "log": "float", "log2": "float", "sqrt": "float", "rsqrt": "float",
    "sin": "float", "cos": "float", "tan": "float", "tanh": "float", "floor": "float", "ceil": "float",
    "erf": "float", "log1p": "float", "expm1": "float", "sigmoid": "float", "round": "float", "trunc": "float",
    "sqrt_rn": "float", "popc": "int", "clz": "int",
}
UNARY_OPS = {
    n: type(f"{n.capitalize()}Op", (UnaryOp,), {"name": n, "domain": d}) for n, d in UNARY_DOMAINS.items()
}


class FmaOp(ElementwiseOp):
    name = "fma"
    operand_names = ("a", "b", "c")

    def verify_(self):
        super().verify_()
        _check(self.a.type.is_float, self, "needs floating-point operands")


class CmpOp(ElementwiseOp):
    """Comparison; floats compare ordered except ``ne`` (true when either side is NaN), like Python."""
    name = "cmp"
    operand_names = ("lhs", "rhs")
    attr_types = {"predicate": str}
    traits = frozenset({"pure", "elementwise"})
    PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [operands[0].type.with_element(i1)]

    def verify_(self):
        super().verify_()
        _check(self.lhs.type == self.rhs.type, self, "operands must have one type")
        _check(self.attrs["predicate"] in self.PREDICATES, self, f"bad predicate {self.attrs['predicate']!r}")
        _check(self.result.type.element == i1, self, "result must be i1")


class SelectOp(ElementwiseOp):
    name = "select"
    operand_names = ("cond", "true_value", "false_value")
    traits = frozenset({"pure", "elementwise"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [operands[1].type]

    def verify_(self):
        super().verify_()
        _check(self.cond.type.element == i1, self, "condition must be i1")
        _check(self.true_value.type == self.false_value.type == self.result.type, self, "value types must match")


class CastOp(ElementwiseOp):
    """Value conversion between scalar element types (int<->int by the source's signedness, int<->float,
    float<->float with ``rounding`` 'rtne' or 'rtz'); pointers convert to/from i64 and other pointer types."""
    name = "cast"
    operand_names = ("src",)
    attr_types = {"rounding": str}
    attr_defaults = {"rounding": "rtne"}
    traits = frozenset({"pure", "elementwise"})


class BitcastOp(ElementwiseOp):
    """Reinterpret bits; source and result elements have the same width."""
    name = "bitcast"
    operand_names = ("src",)
    traits = frozenset({"pure", "elementwise"})

    def verify_(self):
        super().verify_()
        s, d = self.src.type.element, self.result.type.element
        if isinstance(s, ScalarType) and isinstance(d, ScalarType):
            _check(s.bits == d.bits, self, f"bitcast between widths {s.bits} and {d.bits}")


class AddPtrOp(ElementwiseOp):
    """``ptr + offset`` in units of the pointee (like C pointer arithmetic)."""
    name = "addptr"
    operand_names = ("ptr", "offset")
    traits = frozenset({"pure", "elementwise"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [operands[0].type]

    def verify_(self):
        super().verify_()
        _check(self.ptr.type.is_ptr, self, "first operand must be a pointer")
        _check(self.offset.type.is_int, self, "offset must be an integer")
        _check(self.result.type == self.ptr.type, self, "result must have the pointer's type")


class HintOp(Operation):
    """Identity carrying facts for the axis analysis: per-dimension ``divisibility`` (tl.multiple_of),
    ``contiguity`` (tl.max_contiguous) and ``constancy`` (tl.max_constancy); empty tuples mean no fact."""
    name = "hint"
    operand_names = ("src",)
    attr_types = {"divisibility": tuple, "contiguity": tuple, "constancy": tuple}
    attr_defaults = {"divisibility": (), "contiguity": (), "constancy": ()}
    traits = frozenset({"pure", "same_type"})


def asm_bits(t: Type) -> int:
    """Bits an element of ``t`` has as an inline-assembly operand: its memory form (bool: 8, pointer: 64)."""
    e = t.element
    if isinstance(e, PointerType):
        return 64
    return 8 if e.bits == 1 else e.bits


class InlineAsmOp(Operation):
    """Target assembly (``tl.inline_asm_elementwise``) run once per ``pack`` elements: operands and results share
    one shape (or are all scalars); ``constraints`` lists the outputs, then the inputs, then clobbers, by the
    rules of ``asm_operands``. Pure: its results depend on its operands only, so it may be merged or removed;
    ``inline_asm_sideeffect`` is the one that may not. Only GPU targets give it a meaning."""
    name = "inline_asm"
    operand_names = ("*args",)
    attr_types = {"asm": str, "constraints": str, "pack": int}
    traits = frozenset({"pure", "elementwise"})

    def verify_(self):
        from .asm_operands import check_counts, check_packing, parse_constraints
        _check(self.results, self, "needs at least one result")
        vals = list(self.operands) + list(self.results)
        shapes = {v.type.shape if v.type.is_tile else None for v in vals}
        _check(len(shapes) == 1, self, "operands and results must share one shape (or all be scalars)")
        pack = self.attrs["pack"]
        _check(isinstance(pack, int) and pack >= 1, self, f"pack must be a positive int, got {pack!r}")
        shape = shapes.pop()
        numel = 1 if shape is None else self.results[0].type.numel
        _check(numel % pack == 0, self, f"pack={pack} does not divide the {numel} elements")
        try:
            for v in vals:
                check_packing(asm_bits(v.type), pack, str(v.type.element))
            c = parse_constraints(self.attrs["constraints"])
            check_counts(c, [asm_bits(o.type) for o in self.operands], [asm_bits(r.type) for r in self.results],
                         pack, self.attrs["constraints"])
        except ValueError as e:
            raise IRError(f"'{self.name}' op {e}") from None


class InlineAsmSideEffectOp(InlineAsmOp):
    """``inline_asm`` that may have effects beyond its results (``is_pure=False``): never merged, removed or
    assumed to give equal results for equal operands."""
    name = "inline_asm_sideeffect"
    traits = frozenset({"elementwise", "reads", "writes"})


# ---------------------------------------------------------------------------------------------------------------
# shape manipulation
# ---------------------------------------------------------------------------------------------------------------
class SplatOp(Operation):
    """Scalar -> tile with every element equal to it."""
    name = "splat"
    operand_names = ("src",)
    traits = PURE

    def verify_(self):
        _check(not self.src.type.is_tile, self, "operand must be a scalar")
        _check(self.result.type.is_tile and self.result.type.element == self.src.type, self,
               "result must be a tile of the operand's type")


class BroadcastOp(Operation):
    """Tile -> tile of the same rank, size-1 dimensions repeated to the result's size."""
    name = "broadcast"
    operand_names = ("src",)
    traits = PURE

    def verify_(self):
        s, d = self.src.type, self.result.type
        _check(s.is_tile and d.is_tile and s.element == d.element and len(s.shape) == len(d.shape), self,
               f"cannot broadcast {s} to {d}")
        for a, b in zip(s.shape, d.shape):
            _check(a == b or a == 1, self, f"cannot broadcast {s} to {d}")


class ExpandDimsOp(Operation):
    name = "expand_dims"
    operand_names = ("src",)
    attr_types = {"axis": int}
    traits = PURE

    @classmethod
    def infer_result_types(cls, operands, attrs):
        t = operands[0].type
        shape = list(t.shape)
        shape.insert(attrs["axis"], 1)
        return [TileType(shape, t.element)]

    def verify_(self):
        exp = self.infer_result_types(self.operands, self.attrs)[0]
        _check(self.result.type.without_layout() == exp.without_layout(), self, "bad result shape")


class ReshapeOp(Operation):
    """Row-major reshape to the result's shape (same number of elements)."""
    name = "reshape"
    operand_names = ("src",)
    traits = PURE

    def verify_(self):
        s, d = self.src.type, self.result.type
        _check(s.element == d.element, self, "element type must not change")
        n = lambda t: t.numel if t.is_tile else 1  # noqa: E731
        _check(n(s) == n(d), self, f"cannot reshape {s} to {d}")


class TransOp(Operation):
    """Permute dimensions: result dim i is source dim ``order[i]``."""
    name = "trans"
    operand_names = ("src",)
    attr_types = {"order": tuple}
    traits = PURE

    @classmethod
    def infer_result_types(cls, operands, attrs):
        t = operands[0].type
        return [TileType([t.shape[i] for i in attrs["order"]], t.element)]

    def verify_(self):
        _check(sorted(self.attrs["order"]) == list(range(len(self.src.type.shape))), self, "bad permutation")
        exp = self.infer_result_types(self.operands, self.attrs)[0]
        _check(self.result.type.without_layout() == exp.without_layout(), self, "bad result type")


class GatherOp(Operation):
    """``result[..., i, ...] = src[..., index[..., i, ...] mod n, ...]`` along ``axis`` (``n`` = ``src``'s size
    there); ``src`` and ``index`` differ at most along ``axis`` and the result has ``index``'s shape.

    An op of its own (not a compare-and-pick reduction) so that backends do one indexed read per element instead
    of ``n`` compares. Indices out of ``[0, n)`` are undefined in the language; here they wrap modulo ``n``
    (tiles are powers of two, so a backend masks the low bits: never a read outside the source tile, and -1 is
    the last element as in numpy). Debug builds and the interpreter in debug mode report them instead."""
    name = "gather"
    operand_names = ("src", "index")
    attr_types = {"axis": int}
    traits = PURE

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [operands[1].type.with_element(operands[0].type.element)]

    def verify_(self):
        s, i, r = self.src.type, self.index.type, self.result.type
        ax = self.attrs["axis"]
        _check(s.is_tile and i.is_tile and len(s.shape) == len(i.shape), self,
               f"src {s} and index {i} must be tiles of one rank")
        _check(0 <= ax < len(s.shape), self, f"axis {ax} out of range for {s}")
        _check(i.is_int and not i.is_bool, self, f"index must be an integer tile, got {i}")
        for d, (p, q) in enumerate(zip(s.shape, i.shape)):
            _check(d == ax or p == q, self, f"src {s} and index {i} differ in dimension {d}")
        _check(r.is_tile and r.shape == i.shape and r.element == s.element, self,
               f"result must be a tile of index's shape and src's element type, got {r}")

    def fold(self):
        """Gathering from a constant tile (every element equal) gives that constant, whatever the indices."""
        d = getattr(self.src, "op", None)
        return [d.attrs["value"]] if isinstance(d, ConstantOp) else None

    @staticmethod
    def bad_index_text(index: int, n: int, axis: int) -> str:
        """How debug builds and the debugging interpreter word an index outside the axis (one wording)."""
        return f"index {index} outside [0, {n}) along axis {axis}"


# ---------------------------------------------------------------------------------------------------------------
# memory
# ---------------------------------------------------------------------------------------------------------------
class LoadOp(Operation):
    """Gather from pointers; masked-off lanes read nothing and give ``other`` (undefined if absent)."""
    name = "load"
    operand_names = ("ptr", "mask?", "other?")
    attr_types = {"cache": str, "eviction": str, "volatile": bool}
    attr_defaults = {"cache": "", "eviction": "", "volatile": False}
    traits = frozenset({"reads"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        t = operands[0].type
        return [t.with_element(t.element.pointee)]

    def verify_(self):
        p = self.ptr.type
        _check(p.is_ptr, self, f"needs pointers, got {p}")
        _check(self.result.type == p.with_element(p.element.pointee), self, "result must match the pointee")
        if self.mask is not None:
            _check(self.mask.type == p.with_element(i1), self, "mask must be i1 of the pointer's shape")
        if self.other is not None:
            _check(self.other.type == self.result.type, self, "other must match the result type")


def _descriptor_block(b, op):
    """The pointer tile and in-bounds mask of a descriptor op's block: element ``(i, j, ...)`` is at
    ``base + sum((offset_d + i_d) * stride_d)`` and in bounds where every ``0 <= offset_d + i_d < shape_d``."""
    shape = tuple(op.attrs["block_shape"])
    n = len(shape)
    ptr = b.op(SplatOp, op.base, result_type=TileType(shape, op.base.type))
    ok = None
    for d in range(n):
        idx = b.op(ArangeOp, start=0, end=shape[d])
        idx = b.op(AddOp, idx, b.op(SplatOp, op.offsets[d], result_type=TileType((shape[d],), i32)))
        for ax in range(n):  # size-1 axes everywhere but d
            if ax != d:
                idx = b.op(ExpandDimsOp, idx, axis=ax)
        idx = b.op(BroadcastOp, idx, result_type=TileType(shape, i32))
        wide = b.op(CastOp, idx, result_type=TileType(shape, i64))
        ptr = b.op(AddPtrOp, ptr, b.op(MulOp, wide, b.op(SplatOp, op.strides[d], result_type=TileType(shape, i64))))
        inside = b.op(AndOp, b.op(CmpOp, idx, b.constant(0, TileType(shape, i32)), predicate="ge"),
                      b.op(CmpOp, wide, b.op(SplatOp, op.shape[d], result_type=TileType(shape, i64)),
                           predicate="lt"))
        ok = inside if ok is None else b.op(AndOp, ok, inside)
    return ptr, ok


class DescriptorLoadOp(Operation):
    """One ``block_shape`` block of the tensor that ``base``, ``shape`` and ``strides`` describe
    (``tl.make_tensor_descriptor``), read at ``offsets``; elements outside ``[0, shape)`` in any dimension read
    ``padding`` (zero or NaN) and touch no memory. Operands: ``base``, then ``shape`` (i64), ``strides`` (i64,
    in elements) and ``offsets`` (i32), one each per dimension. A target with a tensor copy engine moves the
    block whole (TMA); ``expand-descriptors`` turns the others into the masked pointer load it means."""
    name = "descriptor_load"
    operand_names = ("base", "*dims")
    attr_types = {"block_shape": tuple, "padding": str}
    attr_defaults = {"padding": "zero"}
    traits = frozenset({"reads"})

    @property
    def rank(self) -> int:
        return len(self.attrs["block_shape"])

    @property
    def shape(self):
        return self.operands[1:1 + self.rank]

    @property
    def strides(self):
        return self.operands[1 + self.rank:1 + 2 * self.rank]

    @property
    def offsets(self):
        return self.operands[1 + 2 * self.rank:]

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [TileType(attrs["block_shape"], operands[0].type.pointee)]

    def decompose(self, b):
        """Build, at builder ``b`` (placed before this op), the masked pointer load this op means; returns
        its result."""
        ptr, ok = _descriptor_block(b, self)
        shape, elt = tuple(self.attrs["block_shape"]), self.base.type.pointee
        nan = self.attrs["padding"] == "nan" and elt.kind == "float"
        other = b.constant(float("nan") if nan else (0.0 if elt.kind == "float" else 0), TileType(shape, elt))
        return b.op(LoadOp, ptr, ok, other)

    def verify_(self):
        b, n = self.base.type, self.rank
        _check(isinstance(b, PointerType), self, f"needs a scalar pointer base, got {b}")
        _check(len(self.operands) == 1 + 3 * n, self, f"needs base + {3 * n} shape/stride/offset operands")
        _check(all(v.type == i64 for v in self.shape + self.strides), self, "shape and strides must be i64")
        _check(all(v.type == i32 for v in self.offsets), self, "offsets must be i32")
        _check(self.attrs["padding"] in ("zero", "nan"), self, "padding must be 'zero' or 'nan'")
        r = self.result.type
        _check(r.is_tile and tuple(r.shape) == tuple(self.attrs["block_shape"]) and r.element == b.pointee, self,
               f"result must be a {list(self.attrs['block_shape'])} tile of {b.pointee}")


class DescriptorStoreOp(Operation):
    """``value`` (a ``block_shape`` tile) stored as the block at ``offsets`` of the tensor ``base``,
    ``shape`` and ``strides`` describe; elements outside ``[0, shape)`` are dropped. Operands: ``base``,
    ``value``, then shape, strides and offsets as in ``descriptor_load``."""
    name = "descriptor_store"
    operand_names = ("base", "value", "*dims")
    attr_types = {"block_shape": tuple}
    attr_defaults = {}
    traits = frozenset({"writes"})

    @property
    def rank(self) -> int:
        return len(self.attrs["block_shape"])

    @property
    def shape(self):
        return self.operands[2:2 + self.rank]

    @property
    def strides(self):
        return self.operands[2 + self.rank:2 + 2 * self.rank]

    @property
    def offsets(self):
        return self.operands[2 + 2 * self.rank:]

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return []

    def decompose(self, b):
        ptr, ok = _descriptor_block(b, self)
        b.create(StoreOp, [ptr, self.value, ok], [])

    def verify_(self):
        b, n = self.base.type, self.rank
        _check(isinstance(b, PointerType), self, f"needs a scalar pointer base, got {b}")
        _check(len(self.operands) == 2 + 3 * n, self, f"needs base, value + {3 * n} shape/stride/offset operands")
        _check(all(v.type == i64 for v in self.shape + self.strides), self, "shape and strides must be i64")
        _check(all(v.type == i32 for v in self.offsets), self, "offsets must be i32")
        v = self.value.type
        _check(v.is_tile and tuple(v.shape) == tuple(self.attrs["block_shape"]) and v.element == b.pointee, self,
               f"value must be a {list(self.attrs['block_shape'])} tile of {b.pointee}")


class StoreOp(Operation):
    name = "store"
    operand_names = ("ptr", "value", "mask?")
    attr_types = {"cache": str, "eviction": str}
    attr_defaults = {"cache": "", "eviction": ""}
    traits = frozenset({"writes"})

    def verify_(self):
        p = self.ptr.type
        _check(p.is_ptr, self, f"needs pointers, got {p}")
        _check(self.value.type == p.with_element(p.element.pointee), self,
               f"value {self.value.type} does not match pointers {p}")
        if self.mask is not None:
            _check(self.mask.type == p.with_element(i1), self, "mask must be i1 of the pointer's shape")


class AtomicRMWOp(Operation):
    """Atomic read-modify-write; returns the old values. ``kind``: add, max, min, and, or, xor, xchg."""
    name = "atomic_rmw"
    operand_names = ("ptr", "value", "mask?")
    attr_types = {"kind": str, "sem": str, "scope": str}
    attr_defaults = {"sem": "acq_rel", "scope": "gpu"}
    traits = frozenset({"reads", "writes"})
    KINDS = ("add", "max", "min", "and", "or", "xor", "xchg")

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [operands[1].type]

    def verify_(self):
        _check(self.attrs["kind"] in self.KINDS, self, f"bad kind {self.attrs['kind']!r}")
        p = self.ptr.type
        _check(p.is_ptr and self.value.type == p.with_element(p.element.pointee), self, "value/pointer mismatch")


class AtomicCASOp(Operation):
    name = "atomic_cas"
    operand_names = ("ptr", "cmp", "value")
    attr_types = {"sem": str, "scope": str}
    attr_defaults = {"sem": "acq_rel", "scope": "gpu"}
    traits = frozenset({"reads", "writes"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [operands[2].type]


# ---------------------------------------------------------------------------------------------------------------
# reductions, scans, dot
# ---------------------------------------------------------------------------------------------------------------
class ReduceOp(Operation):
    """Reduce N tiles along ``axis`` with the combine region: block args (acc_0..acc_N-1, x_0..x_N-1) of the
    element types; it yields N values. The combine function must be associative; the order is unspecified."""
    name = "reduce"
    operand_names = ("*srcs",)
    attr_types = {"axis": int}
    num_regions = 1
    traits = frozenset({"pure"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        out = []
        for o in operands:
            shape = list(o.type.shape)
            del shape[attrs["axis"]]
            out.append(o.type.with_shape(shape))
        return out

    def verify_(self):
        ax = self.attrs["axis"]
        for o in self.operands:
            _check(o.type.is_tile and 0 <= ax < len(o.type.shape), self, f"axis {ax} out of range for {o.type}")
        b = self.regions[0].block
        n = len(self.operands)
        _check(len(b.args) == 2 * n, self, "combine region needs 2 arguments per operand")
        _check(len(self.results) == n, self, "one result per operand")


class ScanOp(Operation):
    """Inclusive scan of N tiles along ``axis`` with a combine region like ``reduce``'s."""
    name = "scan"
    operand_names = ("*srcs",)
    attr_types = {"axis": int, "reverse": bool}
    attr_defaults = {"reverse": False}
    num_regions = 1
    traits = frozenset({"pure"})

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [o.type for o in operands]


class DotOp(Operation):
    """``acc + a @ b`` for 2-d (or batched 3-d) tiles. ``input_precision``: ieee, tf32, tf32x3."""
    name = "dot"
    operand_names = ("a", "b", "acc")
    attr_types = {"input_precision": str, "max_num_imprecise_acc": int}
    attr_defaults = {"input_precision": "ieee", "max_num_imprecise_acc": 0}
    traits = PURE

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [operands[2].type]

    def verify_(self):
        a, b, c = self.a.type, self.b.type, self.acc.type
        _check(a.is_tile and b.is_tile and c.is_tile, self, "operands must be tiles")
        _check(len(a.shape) == len(b.shape) == len(c.shape) in (2, 3), self, "operands must be 2-d or 3-d")
        _check(a.shape[-1] == b.shape[-2] and c.shape[-2:] == (a.shape[-2], b.shape[-1]), self,
               f"shape mismatch {a} x {b} -> {c}")
        _check(self.result.type == c, self, "result must match acc")


# ---------------------------------------------------------------------------------------------------------------
# structured control flow and calls
# ---------------------------------------------------------------------------------------------------------------
class YieldOp(Operation):
    name = "yield"
    operand_names = ("*values",)
    traits = frozenset({"terminator"})


class ConditionOp(Operation):
    """Terminates a ``while`` before-region: continue with ``values`` while ``cond`` holds."""
    name = "condition"
    operand_names = ("cond", "*values")
    traits = frozenset({"terminator"})


class ReturnOp(Operation):
    name = "return"
    operand_names = ("*values",)
    traits = frozenset({"terminator"})


class ForOp(Operation):
    """``for iv in range(lb, ub, step)`` with loop-carried values. Region block args: (iv, *iter_args); the body
    yields the next iter values; results are the final ones. ``step`` may be negative (Python semantics)."""
    name = "for"
    traits = frozenset({"loop"})
    operand_names = ("lb", "ub", "step", "*inits")
    attr_types = {"num_stages": int}
    num_regions = 1

    @classmethod
    def infer_result_types(cls, operands, attrs):
        return [o.type for o in operands[3:]]

    @property
    def body(self) -> Block:
        return self.regions[0].block

    @property
    def induction_var(self):
        return self.body.args[0]

    @property
    def iter_args(self):
        return self.body.args[1:]

    def verify_(self):
        t = self.lb.type
        _check(t.is_int and not t.is_tile and self.ub.type == t and self.step.type == t, self,
               "bounds and step must be integer scalars of one type")
        b = self.body
        _check([a.type for a in b.args] == [t] + [o.type for o in self.inits], self, "block arguments mismatch")
        _check([r.type for r in self.results] == [o.type for o in self.inits], self, "result types mismatch")


class IfOp(Operation):
    """Two single-block regions (then, else); each yields the results (else may be empty when no results)."""
    name = "if"
    traits = frozenset({"control"})
    operand_names = ("cond",)
    num_regions = 2

    def verify_(self):
        _check(self.cond.type == i1, self, "condition must be a scalar i1")


class WhileOp(Operation):
    """``before`` region (args: carried values) ends in ``condition``; ``after`` region (args: the values
    forwarded by ``condition``) yields the next carried values. Results are the values forwarded on exit."""
    name = "while"
    traits = frozenset({"loop"})
    operand_names = ("*inits",)
    num_regions = 2


class CallOp(Operation):
    name = "call"
    operand_names = ("*args",)
    attr_types = {"callee": str}


class AssertOp(Operation):
    name = "assert"
    operand_names = ("cond",)
    attr_types = {"message": str}
    attr_defaults = {"message": ""}
    traits = frozenset({"writes"})


class AssumeOp(Operation):
    """``tl.assume(cond)``: the program promises that the i1 scalar ``cond`` holds here. It reaches LLVM as
    ``llvm.assume``; the GPU axis analysis reads ``x % D == 0`` promises as divisibility of ``x``. Kept like an
    effect so that the promise is not dropped with its (otherwise unused) condition."""
    name = "assume"
    operand_names = ("cond",)
    traits = frozenset({"writes"})  # an effect, like assert: the promise stays where it is made

    def verify_(self):
        _check(self.cond.type == i1, self, f"needs an i1 scalar condition, got {self.cond.type}")


class PrintOp(Operation):
    name = "print"
    operand_names = ("*values",)
    attr_types = {"prefix": str, "hex": bool}
    attr_defaults = {"prefix": "", "hex": False}
    traits = frozenset({"writes"})


class BarrierOp(Operation):
    name = "barrier"
    traits = frozenset({"writes"})


class FuncOp(Operation):
    """A function: ``sym_name``, ``function_type``; its region's block args are the parameters.
    ``arg_divisibility`` holds the specialisation's known power-of-two divisor per parameter (1 = unknown)."""
    name = "func"
    attr_types = {"sym_name": str, "function_type": FunctionType, "arg_divisibility": tuple, "noinline": bool,
                  "kernel": bool}
    attr_defaults = {"noinline": False, "kernel": False}
    num_regions = 1
    traits = frozenset({"isolated"})

    @property
    def sym_name(self) -> str:
        return self.attrs["sym_name"]

    @property
    def function_type(self) -> FunctionType:
        return self.attrs["function_type"]

    @property
    def body(self) -> Block:
        return self.regions[0].block

    @property
    def args(self):
        return self.body.args

    @classmethod
    def create(cls, name, arg_types, result_types=(), arg_names=None, loc=None, **attrs):
        r = Region([Block(arg_types, arg_names)])
        a = {"sym_name": name, "function_type": FunctionType(arg_types, result_types)}
        a.update(attrs)
        return cls([], [], a, [r], loc)


class ModuleOp(Operation):
    name = "module"
    num_regions = 1
    traits = frozenset({"isolated"})

    @classmethod
    def create(cls, funcs=()):
        m = cls([], [], {}, [Region([Block()])])
        for f in funcs:
            m.body.append(f)
        return m

    @property
    def body(self) -> Block:
        return self.regions[0].block

    @property
    def funcs(self) -> list[FuncOp]:
        return [o for o in self.body.ops if isinstance(o, FuncOp)]

    def lookup(self, name: str) -> FuncOp | None:
        for f in self.body.ops:
            if isinstance(f, FuncOp) and f.sym_name == name:
                return f
        return None


def op_class(name: str):
    from .core import OP_REGISTRY
    try:
        return OP_REGISTRY[name]
    except KeyError:
        raise IRError(f"unknown op '{name}'") from None
