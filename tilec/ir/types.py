"""Interned, immutable IR types.

Types are compared by identity: constructing the same type twice returns the same object, so passes can use
``is``/``==`` freely and types can key dictionaries cheaply.
"""
from __future__ import annotations

import numpy as np


class Type:
    """Base of every IR type. Subclasses intern on their constructor arguments."""

    __slots__ = ("__weakref__",)
    _interned: dict = {}

    def __new__(cls, *key):
        k = (cls, key)
        t = Type._interned.get(k)
        if t is None:
            t = object.__new__(cls)
            t._init(*key)
            Type._interned[k] = t
        return t

    def __reduce__(self):
        return (type(self), self._key())

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # -- common queries; overridden where they mean something --------------------------------------------
    @property
    def element(self) -> "Type":
        """Element type of a tile; a scalar or pointer is its own element."""
        return self

    @property
    def shape(self) -> tuple:
        return ()

    @property
    def is_tile(self) -> bool:
        return False

    @property
    def is_ptr(self) -> bool:
        return isinstance(self.element, PointerType)

    @property
    def is_int(self) -> bool:
        e = self.element
        return isinstance(e, ScalarType) and e.kind in ("int", "uint", "bool")

    @property
    def is_float(self) -> bool:
        e = self.element
        return isinstance(e, ScalarType) and e.kind == "float"

    @property
    def is_bool(self) -> bool:
        e = self.element
        return isinstance(e, ScalarType) and e.kind == "bool"

    @property
    def is_signed(self) -> bool:
        e = self.element
        return isinstance(e, ScalarType) and e.kind == "int"

    def with_element(self, element: "Type") -> "Type":
        return element

    def without_layout(self) -> "Type":
        """The type with any GPU layout dropped: what tir-level shape rules compare."""
        return self

    def with_shape(self, shape) -> "Type":
        return TileType(tuple(shape), self.element) if shape else self.element


class ScalarType(Type):
    """Integer (signed/unsigned), bool (i1) and floating-point scalars."""

    __slots__ = ("name", "kind", "bits", "np_dtype", "exponent_bits", "mantissa_bits")

    def _init(self, name):
        if name not in _SCALARS:
            raise ValueError(f"unknown scalar type {name!r}")
        self.name = name
        self.kind, self.bits, self.np_dtype, self.exponent_bits, self.mantissa_bits = _SCALARS[name]

    def _key(self):
        return (self.name,)

    def __str__(self):
        return self.name

    __repr__ = __str__

    @property
    def bytes(self) -> int:
        return max(1, self.bits // 8)

    @property
    def numpy(self):
        """numpy dtype holding this type's values (bf16/fp8 are held widened to float32)."""
        return np.dtype(self.np_dtype)


# name -> (kind, bits, numpy storage dtype, exponent bits, mantissa bits)
_SCALARS = {
    "i1": ("bool", 1, "bool", 0, 0),
    "i8": ("int", 8, "int8", 0, 0),
    "i16": ("int", 16, "int16", 0, 0),
    "i32": ("int", 32, "int32", 0, 0),
    "i64": ("int", 64, "int64", 0, 0),
    "u8": ("uint", 8, "uint8", 0, 0),
    "u16": ("uint", 16, "uint16", 0, 0),
    "u32": ("uint", 32, "uint32", 0, 0),
    "u64": ("uint", 64, "uint64", 0, 0),
    "f8e4m3": ("float", 8, "float32", 4, 3),
    "f8e5m2": ("float", 8, "float32", 5, 2),
    "f16": ("float", 16, "float16", 5, 10),
    "bf16": ("float", 16, "float32", 8, 7),
    "f32": ("float", 32, "float32", 8, 23),
    "f64": ("float", 64, "float64", 11, 52),
}


class PointerType(Type):
    """A pointer to ``pointee`` in an address space (1 = global, 3 = shared on GPUs)."""

    __slots__ = ("pointee", "address_space")

    def _init(self, pointee, address_space=1):
        self.pointee = pointee
        self.address_space = address_space

    def __new__(cls, pointee, address_space=1):
        return Type.__new__(cls, pointee, address_space)

    def _key(self):
        return (self.pointee, self.address_space)

    def __str__(self):
        if self.address_space == 1:
            return f"ptr<{self.pointee}>"
        return f"ptr<{self.pointee}, {self.address_space}>"

    __repr__ = __str__


class TileType(Type):
    """An N-d tile of scalars or pointers; ``layout`` is a GPU layout encoding (None in tir)."""

    __slots__ = ("_shape", "_element", "layout")

    def __new__(cls, shape, element, layout=None):
        return Type.__new__(cls, tuple(int(s) for s in shape), element, layout)

    def _init(self, shape, element, layout=None):
        if isinstance(element, TileType):
            raise TypeError("tile of tiles")
        self._shape = shape
        self._element = element
        self.layout = layout

    def _key(self):
        return (self._shape, self._element, self.layout)

    @property
    def element(self):
        return self._element

    @property
    def shape(self):
        return self._shape

    @property
    def is_tile(self):
        return True

    @property
    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    @property
    def rank(self) -> int:
        return len(self._shape)

    def with_element(self, element):
        return TileType(self._shape, element, self.layout)

    def with_shape(self, shape):
        return TileType(tuple(shape), self._element) if shape else self._element

    def with_layout(self, layout):
        return TileType(self._shape, self._element, layout)

    def without_layout(self):
        return TileType(self._shape, self._element) if self.layout is not None else self

    def __str__(self):
        dims = "".join(f"{s}x" for s in self._shape)
        lay = f", {self.layout}" if self.layout is not None else ""
        return f"tile<{dims}{self._element}{lay}>"

    __repr__ = __str__


class SharedBufferType(TileType):
    """A buffer of ``shape[0]`` tiles of ``shape[1:]`` in a GPU block's shared memory (gir only): what
    ``local_alloc`` makes and the asynchronous copies, ``local_load`` and the matrix units index by stage.
    ``layout`` (a shared encoding) places each tile's elements; printed ``smem<3x128x64xf16, #shared<...>>``.
    A memory object, not a tile of registers: ``is_tile`` is false, so tile rules never apply to it."""

    __slots__ = ()

    def _init(self, shape, element, layout=None):
        if len(shape) < 2:
            raise TypeError("a shared buffer has a stage dimension and at least one tile dimension")
        super()._init(shape, element, layout)

    @property
    def is_tile(self):
        return False

    @property
    def num_buffers(self) -> int:
        return self._shape[0]

    @property
    def tile_shape(self) -> tuple:
        return self._shape[1:]

    @property
    def tile_numel(self) -> int:
        return self.numel // self._shape[0]

    def with_element(self, element):
        return SharedBufferType(self._shape, element, self.layout)

    def with_layout(self, layout):
        return SharedBufferType(self._shape, self._element, layout)

    def without_layout(self):
        return SharedBufferType(self._shape, self._element) if self.layout is not None else self

    def with_shape(self, shape):
        return SharedBufferType(tuple(shape), self._element, self.layout)

    def __str__(self):
        return "smem" + super().__str__()[len("tile"):]

    __repr__ = __str__


class FunctionType(Type):
    __slots__ = ("inputs", "results")

    def __new__(cls, inputs, results):
        return Type.__new__(cls, tuple(inputs), tuple(results))

    def _init(self, inputs, results):
        self.inputs = inputs
        self.results = results

    def _key(self):
        return (self.inputs, self.results)

    def __str__(self):
        return f"({', '.join(map(str, self.inputs))}) -> ({', '.join(map(str, self.results))})"

    __repr__ = __str__


i1, i8, i16, i32, i64 = (ScalarType(n) for n in ("i1", "i8", "i16", "i32", "i64"))
u8, u16, u32, u64 = (ScalarType(n) for n in ("u8", "u16", "u32", "u64"))
f16, bf16, f32, f64 = (ScalarType(n) for n in ("f16", "bf16", "f32", "f64"))
f8e4m3, f8e5m2 = ScalarType("f8e4m3"), ScalarType("f8e5m2")
SCALAR_NAMES = tuple(_SCALARS)


def scalar(name: str) -> ScalarType:
    return ScalarType(name)
