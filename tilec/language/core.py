"""The language's types and values: Triton-named dtypes, ``constexpr``, and ``tensor``.

A ``tensor`` wraps a builder handle (an IR value when compiling, a numpy array in an interpreter) and its tl type.
Every operation on it goes through the current :class:`~tilec.language.semantic.Semantic`, so the dunders here
contain no semantics of their own: promotion, broadcasting and checks live in ``semantic.py`` only.
"""
from __future__ import annotations

import math

import threading

# ---------------------------------------------------------------------------------------------------------------
# the semantic context the builtins use (set by the code generator for the duration of one compilation)
# ---------------------------------------------------------------------------------------------------------------
_state = threading.local()


def current():
    """The active Semantic; builtins called outside a kernel get a clear error."""
    sem = getattr(_state, "semantic", None)
    if sem is None:
        raise RuntimeError("tilec.language functions can only be used inside a @tilec.jit function")
    return sem


class use_semantic:
    """Context manager installing a Semantic (nests: compiling a kernel from inside another compile is fine)."""

    def __init__(self, semantic):
        self.semantic = semantic

    def __enter__(self):
        self.saved = getattr(_state, "semantic", None)
        _state.semantic = self.semantic
        return self.semantic

    def __exit__(self, *exc):
        _state.semantic = self.saved


def builtin(fn):
    """Marks a tl function as callable from kernels (the code generator calls it with evaluated arguments)."""
    fn.__tilec_builtin__ = True
    return fn


def is_builtin(fn) -> bool:
    return getattr(fn, "__tilec_builtin__", False)


# ---------------------------------------------------------------------------------------------------------------
# types
# ---------------------------------------------------------------------------------------------------------------
class dtype:
    """A scalar element type. Instances are interned: ``tl.dtype("fp32") is tl.float32``."""

    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e5", "fp16", "bf16", "fp32", "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]
    OTHER_TYPES = ["void"]
    SINT = ("int1", "int8", "int16", "int32", "int64")
    UINT = ("uint8", "uint16", "uint32", "uint64")
    FP = ("fp8e4nv", "fp8e5", "fp16", "bf16", "fp32", "fp64")
    # name -> (kind, bits, mantissa bits, exponent bits, IR scalar name)
    _INFO = {
        "int1": ("bool", 1, 0, 0, "i1"), "int8": ("int", 8, 0, 0, "i8"), "int16": ("int", 16, 0, 0, "i16"),
        "int32": ("int", 32, 0, 0, "i32"), "int64": ("int", 64, 0, 0, "i64"),
        "uint8": ("uint", 8, 0, 0, "u8"), "uint16": ("uint", 16, 0, 0, "u16"),
        "uint32": ("uint", 32, 0, 0, "u32"), "uint64": ("uint", 64, 0, 0, "u64"),
        "fp8e4nv": ("float", 8, 3, 4, "f8e4m3"), "fp8e5": ("float", 8, 2, 5, "f8e5m2"),
        # Triton's fp8 with exponent bias 15 (every code finite): held in the IR as its uint8 code; the semantic
        # layer converts it through float16, which represents every value exactly (see semantic.py)
        "fp8e4b15": ("float", 8, 3, 4, "u8"),
        "fp16": ("float", 16, 10, 5, "f16"), "bf16": ("float", 16, 7, 8, "bf16"),
        "fp32": ("float", 32, 23, 8, "f32"), "fp64": ("float", 64, 52, 11, "f64"),
        "void": ("void", 0, 0, 0, None),
    }
    _interned: dict = {}

    def __new__(cls, *args, **kwargs):
        if cls is dtype:
            name = args[0] if args else kwargs["name"]
            t = dtype._interned.get(name)
            if t is not None:
                return t
            if name not in dtype._INFO:
                raise ValueError(f"unknown dtype {name!r}")
            t = object.__new__(cls)
            t.name = name
            t._kind, t.primitive_bitwidth, t.fp_mantissa_width, t.exponent_bits, t.ir_name = dtype._INFO[name]
            dtype._interned[name] = t
            return t
        return object.__new__(cls)

    # -- queries (Triton's names) ------------------------------------------------------------------------
    def is_floating(self):
        return self._kind == "float"

    def is_int(self):
        return self._kind in ("int", "uint", "bool")

    def is_int_signed(self):
        return self._kind in ("int", "bool")

    def is_int_unsigned(self):
        return self._kind == "uint"

    def is_bool(self):
        return self._kind == "bool"

    def is_ptr(self):
        return False

    def is_block(self):
        return False

    def is_void(self):
        return self._kind == "void"

    def is_fp8(self):
        return self.name in ("fp8e4nv", "fp8e5", "fp8e4b15")

    def is_fp8e4b15(self):
        return self.name == "fp8e4b15"

    def is_fp16(self):
        return self.name == "fp16"

    def is_bf16(self):
        return self.name == "bf16"

    def is_fp32(self):
        return self.name == "fp32"

    def is_fp64(self):
        return self.name == "fp64"

    @property
    def int_bitwidth(self):
        return self.primitive_bitwidth

    @property
    def exponent_bias(self) -> int:
        """The IEEE-style exponent bias of a floating-point type (15 for fp16, 127 for fp32, 7 for fp8e4nv)."""
        if not self.is_floating():
            raise TypeError(f"{self!r} is not a floating-point type")
        if self.name == "fp8e4b15":
            return 15
        return (1 << (self.exponent_bits - 1)) - 1

    @property
    def kind_rank(self) -> int:
        """bool < integer < float: a Python scalar of a kind at most the tensor's adopts the tensor's type."""
        return {"bool": 0, "uint": 1, "int": 1, "float": 2}.get(self._kind, -1)

    @property
    def scalar(self):
        return self

    @property
    def shape(self):
        return Shape()

    def with_element(self, elt):
        return elt

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"{REPR_MODULE[0]}.{_CANONICAL_NAME.get(self.name, self.name)}"

    def __hash__(self):
        return hash(("dtype", self.name))

    def __eq__(self, other):
        return type(other) is type(self) and other.name == self.name

    def __reduce__(self):
        return (dtype, (self.name,))

    def to(self, *a, **k):  # pragma: no cover - guard against a common typo
        raise TypeError(f"{self!r} is a type; did you mean tensor.to({self!r})?")


class pointer_type(dtype):
    """``*element``; ``tl.pointer_type(tl.float32)`` is the type of a float32 pointer argument."""

    def __init__(self, element_ty, address_space=1, const=False):
        if not isinstance(element_ty, dtype):
            raise TypeError(f"pointer_type needs a dtype, got {element_ty!r}")
        self.element_ty = element_ty
        self.address_space = address_space
        self.const = bool(const)  # a read-only pointer (a ``p: tl.const`` parameter): stores through it are errors
        self.name = f"pointer<{'const ' if const else ''}{element_ty}>"
        self._kind = "ptr"
        self.primitive_bitwidth = 64
        self.fp_mantissa_width = self.exponent_bits = 0

    def is_ptr(self):
        return True

    def is_const(self):
        return self.const

    def __str__(self):
        return f"*{'const ' if self.const else ''}{self.element_ty}"

    __repr__ = __str__

    def __eq__(self, other):
        return (isinstance(other, pointer_type) and other.element_ty == self.element_ty
                and other.address_space == self.address_space and other.const == self.const)

    def __hash__(self):
        return hash(("ptr", self.element_ty, self.address_space, self.const))

    def __reduce__(self):
        return (pointer_type, (self.element_ty, self.address_space, self.const))


class Shape(tuple):
    """A tile's shape: a tuple of ints that also compares equal to the same ints in a list (``x.shape == [1, N]``,
    as Triton's list-valued shapes do) and concatenates with lists."""
    __slots__ = ()

    def __eq__(self, other):
        if isinstance(other, list):
            other = tuple(_unwrap(o) for o in other)
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = tuple.__hash__

    def __add__(self, other):
        return Shape(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Shape(tuple(other) + tuple(self))

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Shape(r) if isinstance(i, slice) else r


#: the most elements a tile may hold (Triton's limit, under Triton's name)
TRITON_MAX_TENSOR_NUMEL = 1048576


class block_type(dtype):
    """The type of a tile: an element type (scalar or pointer) and a shape of ints; a tile holds at most
    :data:`TRITON_MAX_TENSOR_NUMEL` elements, refused with Triton's words wherever one is made."""

    def __init__(self, element_ty, shape):
        self.element_ty = element_ty
        self._shape = Shape(int(s) for s in shape)
        numel = 1
        for s in self._shape:
            numel *= s
        if numel > TRITON_MAX_TENSOR_NUMEL:
            raise ValueError(f"numel ({numel}) exceeds triton maximum tensor numel ({TRITON_MAX_TENSOR_NUMEL})")
        self.name = f"<{self._shape}, {element_ty}>"
        self._kind = "block"
        self.primitive_bitwidth = element_ty.primitive_bitwidth

    def is_block(self):
        return True

    def is_ptr(self):
        return False

    @property
    def scalar(self):
        return self.element_ty

    @property
    def shape(self):
        return self._shape

    @property
    def numel(self):
        n = 1
        for s in self._shape:
            n *= s
        return n

    def with_element(self, elt):
        return block_type(elt, self._shape)

    def __str__(self):
        return f"<{list(self._shape)}, {self.element_ty}>"

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, block_type) and other._shape == self._shape and other.element_ty == self.element_ty

    def __hash__(self):
        return hash(("block", self._shape, self.element_ty))

    def __reduce__(self):
        return (block_type, (self.element_ty, self._shape))


void = dtype("void")
int1 = dtype("int1")
int8, int16, int32, int64 = (dtype(n) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (dtype(n) for n in ("uint8", "uint16", "uint32", "uint64"))
float8e4nv, float8e5, float8e4b15 = dtype("fp8e4nv"), dtype("fp8e5"), dtype("fp8e4b15")
float16, bfloat16, float32, float64 = (dtype(n) for n in ("fp16", "bf16", "fp32", "fp64"))
pi32_t = pointer_type(int32)
#: how a dtype's repr names its module: an expression that evaluates back to the dtype where that name is bound
#: (``tl.int8``; ``triton.language.int8`` while ``tilec.compat`` makes ``import triton`` give tilec)
REPR_MODULE = ["tl"]

_CANONICAL_NAME = {"fp8e4nv": "float8e4nv", "fp8e5": "float8e5", "fp8e4b15": "float8e4b15", "fp16": "float16", "bf16": "bfloat16",
                   "fp32": "float32", "fp64": "float64"}

# Triton signature spellings ("i32", "fp16", "*fp32", "u8") -> dtype
_SIG_NAMES = {"i1": int1, "i8": int8, "i16": int16, "i32": int32, "i64": int64, "u1": int1, "u8": uint8,
              "u16": uint16, "u32": uint32, "u64": uint64, "fp8e4nv": float8e4nv, "fp8e5": float8e5, "fp8e4b15": float8e4b15,
              "fp16": float16, "bf16": bfloat16, "fp32": float32, "f32": float32, "fp64": float64,
              "B": int1}


def type_from_signature(s: str) -> dtype:
    """Parse one signature entry: ``"*fp32"``, ``"i32"``, ``"**fp16"``, or a dtype name (``"float32"``)."""
    s = s.strip()
    if s.startswith("*"):
        return pointer_type(type_from_signature(s[1:]))
    t = _SIG_NAMES.get(s)
    if t is not None:
        return t
    if s in dtype._INFO:
        return dtype(s)
    for k, v in _CANONICAL_NAME.items():
        if v == s:
            return dtype(k)
    raise ValueError(f"unknown type {s!r} in signature")


def signature_name(t: dtype) -> str:
    """The inverse of :func:`type_from_signature` (Triton's short names)."""
    if isinstance(t, pointer_type):
        return "*" + signature_name(t.element_ty)
    for k, v in _SIG_NAMES.items():
        if v is t and k not in ("u1", "f32", "B"):
            return k
    return t.name


# ---------------------------------------------------------------------------------------------------------------
# constexpr
# ---------------------------------------------------------------------------------------------------------------
class constexpr:
    """A compile-time value. As a parameter annotation (``BLOCK: tl.constexpr``) it makes the parameter a
    specialisation constant; inside kernels the code generator works on the plain Python value."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __hash__(self):
        return hash(self.value)

    def __bool__(self):
        return bool(self.value)

    def __index__(self):
        return self.value.__index__()

    def __int__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)

    def __eq__(self, other):
        return self.value == _unwrap(other)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)


def _unwrap(v):
    return v.value if isinstance(v, constexpr) else v


def _cx_binary(name):
    def f(self, other):
        return constexpr(getattr(self.value, name)(_unwrap(other)))
    f.__name__ = name
    return f


for _n in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
           "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__lshift__",
           "__rlshift__", "__rshift__", "__rrshift__", "__and__", "__rand__", "__or__", "__ror__", "__xor__",
           "__rxor__", "__lt__", "__le__", "__gt__", "__ge__", "__ne__"):
    setattr(constexpr, _n, _cx_binary(_n))
constexpr.__neg__ = lambda self: constexpr(-self.value)
constexpr.__pos__ = lambda self: self
constexpr.__invert__ = lambda self: constexpr(~self.value)


# ---------------------------------------------------------------------------------------------------------------
# tensor
# ---------------------------------------------------------------------------------------------------------------
class tensor:
    """A value inside a kernel: ``handle`` (the builder's value) and ``type`` (a dtype or block_type)."""

    __slots__ = ("handle", "type")

    def __init__(self, handle, type):
        self.handle = handle
        self.type = type

    @property
    def dtype(self) -> dtype:
        """The element type (``tl.float32``; a ``pointer_type`` for pointers)."""
        return self.type.scalar

    @property
    def shape(self) -> tuple:
        return self.type.shape

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def __repr__(self):
        v = getattr(self.handle, "v", None)  # an interpreted value
        return f"tensor({self.type})" if v is None else f"tensor({v!r}, {self.type})"

    def __bool__(self):
        return current().to_bool(self)

    def __index__(self):
        return current().to_index(self)

    __int__ = __index__

    def __iter__(self):
        raise TypeError("tensors are not iterable")

    def __len__(self):
        raise TypeError("len() of a tensor; use .shape")

    # -- conversions -------------------------------------------------------------------------------------
    def to(self, dtype, fp_downcast_rounding=None, bitcast=False):
        return current().cast(self, _unwrap(dtype), fp_downcast_rounding=_unwrap(fp_downcast_rounding),
                              bitcast=_unwrap(bitcast))

    def cast(self, dtype, fp_downcast_rounding=None, bitcast=False):
        """The same as :meth:`to` (Triton spells it both ways)."""
        return self.to(dtype, fp_downcast_rounding, bitcast)

    def __getitem__(self, slices):
        return current().getitem(self, slices)

    @property
    def T(self):
        return current().trans(self, None)

    # -- unary -------------------------------------------------------------------------------------------
    def __neg__(self):
        return current().neg(self)

    def __pos__(self):
        return self

    def __invert__(self):
        return current().invert(self)

    def __abs__(self):
        return current().abs(self)


def _binary_dunder(method, reflected):
    if reflected:
        def f(self, other):
            return getattr(current(), method)(_unwrap(other), self)
    else:
        def f(self, other):
            return getattr(current(), method)(self, _unwrap(other))
    return f


# dunder -> Semantic method. Reflected forms swap operands so the semantic sees them in source order.
_BINARY_DUNDERS = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "truediv", "floordiv": "floordiv", "mod": "mod",
    "pow": "pow", "and": "and_", "or": "or_", "xor": "xor_", "lshift": "shl", "rshift": "shr",
}
for _d, _m in _BINARY_DUNDERS.items():
    setattr(tensor, f"__{_d}__", _binary_dunder(_m, False))
    setattr(tensor, f"__r{_d}__", _binary_dunder(_m, True))
for _d, _p in {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne"}.items():
    setattr(tensor, f"__{_d}__", (lambda p: lambda self, other: current().compare(p, self, _unwrap(other)))(_p))
tensor.__hash__ = object.__hash__


class block_ptr:
    """A block pointer (``tl.make_block_ptr``): a base pointer, the parent tensor's shape and strides, the current
    offsets of the block and its static shape. Loads and stores expand it into a tile of pointers plus a bounds
    mask; in runtime control flow it travels as its tensors (see ``frontend/values.py``)."""

    def __init__(self, base, shape, strides, offsets, block_shape, order):
        self.base, self.shape, self.strides, self.offsets = base, tuple(shape), tuple(strides), tuple(offsets)
        self.block_shape, self.order = tuple(block_shape), tuple(order)

    def __tilec_flatten__(self):
        return [self.base, *self.shape, *self.strides, *self.offsets], (self.block_shape, self.order)

    @classmethod
    def __tilec_unflatten__(cls, static, children):
        block_shape, order = static
        n = len(block_shape)
        return cls(children[0], children[1:1 + n], children[1 + n:1 + 2 * n], children[1 + 2 * n:], block_shape,
                   order)

    @property
    def dtype(self):
        return self.base.dtype.element_ty

    def __repr__(self):
        return f"block_ptr<{list(self.block_shape)}, {self.dtype}>"


def tensor_method(fn):
    """Also expose a tl function as a tensor method (``x.sum(axis=0)``, ``x.exp()``)."""
    setattr(tensor, fn.__name__, fn)
    return fn


class _Namespace:
    """A read-only bag of compile-time constants kernels may read (``tl.PropagateNan.ALL``)."""
    __tilec_attr_ok__ = True

    def __init__(self, name, **values):
        self.__name__ = name
        self.__dict__.update(values)

    def __repr__(self):
        return f"tl.{self.__name__}"


PropagateNan = _Namespace("PropagateNan", NONE=0, ALL=0xFFFF)


def scalar_tensor_attribute(value, name: str):
    """``name`` read from a Python number in a kernel: tensor methods and properties (``value.dtype``,
    ``acc.to(tl.int64)``) apply to the number as the scalar tensor it becomes, as in Triton."""
    if isinstance(value, constexpr):
        value = value.value
    if isinstance(value, (bool, int, float)) and not hasattr(type(value), name) and hasattr(tensor, name):
        return getattr(current().to_tensor(value), name)
    return getattr(value, name)
