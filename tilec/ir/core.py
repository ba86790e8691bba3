"""The IR core: values with use lists, operations, blocks with arguments, regions.

Ops are declared as small subclasses of :class:`Operation` (see the ``ops`` package): a name, operand/attribute
specs, traits, an optional ``verify_`` and ``fold``. Everything generic (use lists, cloning, walking, erasure)
lives here so that ops stay declarative.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterator

from .types import Type


class IRError(Exception):
    """Malformed IR (verifier failures, bad rewrites)."""


@dataclass(frozen=True)
class Location:
    file: str
    line: int
    col: int

    def __str__(self):
        return f'loc("{self.file}":{self.line}:{self.col})'


class Value:
    """An SSA value: an op result or a block argument. ``uses`` is a list of (op, operand index)."""

    __slots__ = ("type", "uses", "name_hint")

    def __init__(self, type: Type, name_hint: str | None = None):
        self.type = type
        self.uses: list[tuple[Operation, int]] = []
        self.name_hint = name_hint

    def replace_all_uses_with(self, other: "Value"):
        if other is self:
            return
        for op, i in list(self.uses):
            op.set_operand(i, other)

    @property
    def has_uses(self) -> bool:
        return bool(self.uses)

    @property
    def owner(self):
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} {self.name_hint or ''}: {self.type}>"


class OpResult(Value):
    __slots__ = ("op", "index")

    def __init__(self, type, op, index, name_hint=None):
        super().__init__(type, name_hint)
        self.op = op
        self.index = index

    @property
    def owner(self):
        return self.op


class BlockArgument(Value):
    __slots__ = ("block", "index")

    def __init__(self, type, block, index, name_hint=None):
        super().__init__(type, name_hint)
        self.block = block
        self.index = index

    @property
    def owner(self):
        return self.block


OP_REGISTRY: dict[str, type["Operation"]] = {}

# how modules and functions show themselves (their IR text): the printer, built on this module's classes,
# installs its ``print_ir`` here when imported (``tilec/ir/__init__.py`` imports it)
_ir_text = None


def show_ir_with(fn) -> None:
    """Have modules and functions show themselves as ``fn(op)`` (their IR text)."""
    global _ir_text
    _ir_text = fn


class Operation:
    """A generic operation. Subclasses declare:

    - ``name``: the textual name (registered in ``OP_REGISTRY``);
    - ``operand_names``: accessor names; a trailing ``?`` marks an optional trailing operand, a leading ``*`` a
      variadic tail (for example ``("lb", "ub", "step", "*inits")``);
    - ``attr_types``: attribute name -> Python type(s) accepted; ``attr_defaults`` the optional ones;
    - ``traits``: ``pure`` (no side effects, CSE/DCE-able), ``commutative``, ``terminator``, ``elementwise``,
      ``same_type`` (operands and results share one type), ``isolated`` (regions see no outer values),
      ``reads`` / ``writes`` (memory effects), ``loop`` (a region body that runs repeatedly), ``control``
      (structured control flow: its effects are those of its regions);
    - ``num_regions``;
    - ``canonicalization_patterns``: the rewrite patterns the canonicaliser applies to this op (the op's own
      knowledge, collected by ``passes/canonicalize.py``); ``fold()`` for constant folding.

    Passes ask the op (``op.is_loop``, ``op.writes_memory``, ``isinstance(op, ForOp)``), never its name: the
    flags below are derived from ``traits`` once per class.
    """

    name: ClassVar[str] = "<op>"
    operand_names: ClassVar[tuple] = ()
    attr_types: ClassVar[dict] = {}
    attr_defaults: ClassVar[dict] = {}
    traits: ClassVar[frozenset] = frozenset()
    num_regions: ClassVar[int] = 0
    canonicalization_patterns: ClassVar[tuple] = ()
    result_type_of: ClassVar[int | None] = None  # the one result has this operand's type
    # flags derived from ``traits`` (see __init_subclass__)
    is_terminator: ClassVar[bool] = False
    is_elementwise: ClassVar[bool] = False
    is_commutative: ClassVar[bool] = False
    is_loop: ClassVar[bool] = False
    is_control: ClassVar[bool] = False
    reads_memory: ClassVar[bool] = False
    writes_memory: ClassVar[bool] = False

    __slots__ = ("operands", "results", "attrs", "regions", "loc", "parent")

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "name" in cls.__dict__:
            OP_REGISTRY[cls.name] = cls
        t = cls.traits
        cls.is_terminator, cls.is_elementwise = "terminator" in t, "elementwise" in t
        cls.is_commutative, cls.is_loop, cls.is_control = "commutative" in t, "loop" in t, "control" in t or "loop" in t
        cls.reads_memory, cls.writes_memory = "reads" in t, "writes" in t
        for i, spec in enumerate(cls.__dict__.get("operand_names", ())):
            n = spec.strip("*?")
            if n in cls.__dict__:
                continue
            if spec.startswith("*"):
                setattr(cls, n, property(lambda self, i=i: tuple(self.operands[i:])))
            elif spec.endswith("?"):
                setattr(cls, n, property(lambda self, i=i: self.operands[i] if i < len(self.operands) else None))
            else:
                setattr(cls, n, property(lambda self, i=i: self.operands[i]))

    def __init__(self, operands=(), result_types=(), attrs=None, regions=None, loc=None, result_names=None):
        self.operands: list[Value] = []
        self.parent: Block | None = None
        self.loc: Location | None = loc
        a = dict(self.attr_defaults)
        if attrs:
            a.update(attrs)
        self.attrs: dict = a
        for v in operands:
            self._append_operand(v)
        names = result_names or [None] * len(result_types)
        self.results: list[OpResult] = [OpResult(t, self, i, names[i]) for i, t in enumerate(result_types)]
        if regions is None:
            regions = [Region() for _ in range(self.num_regions)]
        self.regions: list[Region] = []
        for r in regions:
            r.parent = self
            self.regions.append(r)

    # -- result type inference: ops that can derive their results override this --------------------------
    @classmethod
    def infer_result_types(cls, operands, attrs) -> list[Type]:
        if cls.result_type_of is not None:
            return [operands[cls.result_type_of].type]
        if "same_type" in cls.traits and operands:
            return [operands[0].type]
        raise IRError(f"{cls.name}: result types must be given")

    # -- operands ------------------------------------------------------------------------------------------
    def _append_operand(self, v: Value):
        if not isinstance(v, Value):
            raise IRError(f"{self.name}: operand {v!r} is not an IR value")
        v.uses.append((self, len(self.operands)))
        self.operands.append(v)

    def set_operand(self, i: int, v: Value):
        old = self.operands[i]
        old.uses.remove((self, i))
        self.operands[i] = v
        v.uses.append((self, i))

    def set_operands(self, values):
        self.drop_operands()
        for v in values:
            self._append_operand(v)

    def drop_operands(self):
        for i, v in enumerate(self.operands):
            v.uses.remove((self, i))
        self.operands = []

    # -- structure -----------------------------------------------------------------------------------------
    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise IRError(f"{self.name} has {len(self.results)} results")
        return self.results[0]

    @property
    def parent_op(self) -> "Operation | None":
        b = self.parent
        return b.parent.parent if b is not None and b.parent is not None else None

    def has_trait(self, t: str) -> bool:
        return t in self.traits

    @property
    def is_pure(self) -> bool:
        return "pure" in self.traits

    def walk(self, post_order: bool = False) -> Iterator["Operation"]:
        """Yield this op and every op nested in its regions (pre-order unless ``post_order``)."""
        if not post_order:
            yield self
        for r in self.regions:
            for b in r.blocks:
                for op in list(b.ops):
                    yield from op.walk(post_order)
        if post_order:
            yield self

    def is_ancestor_of(self, op: "Operation") -> bool:
        while op is not None:
            if op is self:
                return True
            op = op.parent_op
        return False

    def erase(self):
        """Detach from the parent block and drop operand uses (results must be unused)."""
        for r in self.results:
            if r.uses:
                raise IRError(f"erasing {self.name} whose result still has uses")
        for o in self.walk(post_order=True):
            o.drop_operands()
        if self.parent is not None:
            self.parent.ops.remove(self)
            self.parent = None

    def detach(self):
        if self.parent is not None:
            self.parent.ops.remove(self)
            self.parent = None
        return self

    def move_before(self, other: "Operation"):
        self.detach()
        b = other.parent
        b.ops.insert(b.ops.index(other), self)
        self.parent = b

    def replace_with(self, values):
        """Replace all result uses with ``values`` and erase this op."""
        for r, v in zip(self.results, values):
            r.replace_all_uses_with(v)
        self.erase()

    def clone(self, mapping: dict | None = None) -> "Operation":
        """Deep copy; operands are remapped through ``mapping`` (which is extended with the new values)."""
        mapping = {} if mapping is None else mapping
        ops = [mapping.get(v, v) for v in self.operands]
        regions = [r.clone(mapping) for r in self.regions]
        new = type(self).__new__(type(self))
        Operation.__init__(new, ops, [r.type for r in self.results], dict(self.attrs), regions, self.loc,
                           [r.name_hint for r in self.results])
        for a, b in zip(self.results, new.results):
            mapping[a] = b
        return new

    # -- verification hook ---------------------------------------------------------------------------------
    def verify_(self):
        """Op-specific invariants; raise IRError. Generic checks live in the verifier."""

    def fold(self):
        """Return replacement values (or Python constants) for the results, or None."""
        return None

    def __repr__(self):
        """Modules and functions show their IR text (``p module`` / ``print(module)`` at a ``TILEC_BREAK_BEFORE``
        stop); other ops a short ``<name types>``."""
        if "isolated" in self.traits and _ir_text is not None:
            return _ir_text(self)
        return f"<{self.name} {', '.join(str(r.type) for r in self.results)}>"


class Block:
    """A list of ops with typed block arguments. Structured ops own single-block regions."""

    __slots__ = ("args", "ops", "parent")

    def __init__(self, arg_types=(), arg_names=None):
        self.parent: Region | None = None
        self.ops: list[Operation] = []
        names = arg_names or [None] * len(arg_types)
        self.args: list[BlockArgument] = [BlockArgument(t, self, i, names[i]) for i, t in enumerate(arg_types)]

    def add_arg(self, t: Type, name=None) -> BlockArgument:
        a = BlockArgument(t, self, len(self.args), name)
        self.args.append(a)
        return a

    def erase_arg(self, i: int):
        a = self.args.pop(i)
        if a.uses:
            raise IRError("erasing a used block argument")
        for j, b in enumerate(self.args):
            b.index = j

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Operation) -> Operation:
        op.parent = self
        self.ops.insert(index, op)
        return op

    @property
    def terminator(self) -> Operation | None:
        if self.ops and self.ops[-1].is_terminator:
            return self.ops[-1]
        return None

    @property
    def parent_op(self) -> Operation | None:
        return self.parent.parent if self.parent is not None else None

    def clone(self, mapping) -> "Block":
        b = Block([a.type for a in self.args], [a.name_hint for a in self.args])
        for a, n in zip(self.args, b.args):
            mapping[a] = n
        for op in self.ops:
            b.append(op.clone(mapping))
        return b


class Region:
    __slots__ = ("blocks", "parent")

    def __init__(self, blocks=()):
        self.parent: Operation | None = None
        self.blocks: list[Block] = []
        for b in blocks:
            self.add_block(b)

    def add_block(self, b: Block) -> Block:
        b.parent = self
        self.blocks.append(b)
        return b

    @property
    def block(self) -> Block:
        """The single block of a structured op's region."""
        return self.blocks[0]

    def clone(self, mapping) -> "Region":
        return Region([b.clone(mapping) for b in self.blocks])


def defining_op(v: Value) -> Operation | None:
    return v.op if isinstance(v, OpResult) else None
