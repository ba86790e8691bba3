"""Pattern rewriting: ``RewritePattern``, the ``PatternRewriter`` patterns mutate IR through, and one greedy
driver, ``apply_patterns_greedily``, shared by canonicalisation and the lowerings.

Patterns must make every change through the rewriter: that is how the driver learns which ops to revisit
(new ops, users of replaced values, producers of erased ops' operands), so one worklist reaches a fixed point
without re-scanning the whole module after each change.
"""
from __future__ import annotations

from collections import deque
from typing import ClassVar, Iterable

from ..ir.builder import Builder
from ..ir.core import OP_REGISTRY, Block, IRError, Operation, Value
from ..ir.ops import ConstantOp
from .utils import values_used_from_outside


class RewritePattern:
    """Matches one op and rewrites it. ``roots``: the op classes (or registered op names) it can match (None:
    any op), used for dispatch, subclasses included; ``benefit``: higher-benefit patterns are tried first."""

    roots: ClassVar[tuple | None] = None
    benefit: ClassVar[int] = 1

    def match_and_rewrite(self, op: Operation, rewriter: "PatternRewriter") -> bool:
        raise NotImplementedError

    @property
    def label(self) -> str:
        return type(self).__name__


class FunctionPattern(RewritePattern):
    """A pattern from a plain function ``fn(op, rewriter) -> bool``, for table-driven pattern sets."""

    def __init__(self, fn, roots=None, benefit=1):
        self.fn, self.roots, self.benefit = fn, (tuple(roots) if roots else None), benefit

    def match_and_rewrite(self, op, rewriter):
        return bool(self.fn(op, rewriter))

    @property
    def label(self):
        return self.fn.__name__


def pattern(*roots, benefit=1):
    """Decorator: ``@pattern("add", "sub") def f(op, rw): ...`` makes ``f`` a FunctionPattern."""
    def wrap(fn):
        return FunctionPattern(fn, roots or None, benefit)
    return wrap


class PatternRewriter:
    """The mutation API given to patterns. New ops are inserted before ``self.op`` (the op being rewritten)
    unless the insertion point is moved; each change is reported to ``listener`` (the driver)."""

    def __init__(self, listener=None):
        self.listener = listener
        self._builder = Builder()
        self._anchor: Operation | None = None  # insertion point "before this op", resolved on first use
        self.op: Operation | None = None

    # -- insertion point -----------------------------------------------------------------------------------
    @property
    def builder(self) -> Builder:
        """The builder at the current insertion point (for building nested regions by hand)."""
        if self._anchor is not None:
            self._builder.set_insertion_point_before(self._anchor)
            self._anchor = None
        return self._builder

    def set_insertion_point_before(self, op: Operation):
        self._anchor = op

    def set_insertion_point_after(self, op: Operation):
        self._anchor = None
        self._builder.set_insertion_point_after(op)

    def _at(self, op: Operation):
        self.op = op
        self._anchor = op  # finding op's index costs O(block size): only done when a pattern creates ops
        self._builder.loc = op.loc

    # -- creation ------------------------------------------------------------------------------------------
    def insert(self, op: Operation) -> Operation:
        self.builder.insert(op)
        self._notify("created", op)
        return op

    def create(self, op_cls, operands=(), result_types=None, attrs=None, regions=None) -> Operation:
        op = self.builder.create(op_cls, operands, result_types, attrs, regions)
        self._notify("created", op)
        return op

    def op_value(self, op_cls, *operands, result_type=None, **attrs) -> Value:
        """Create a single-result op and return its result."""
        rt = None if result_type is None else [result_type]
        return self.create(op_cls, operands, rt, attrs).result

    def constant(self, value, type) -> Value:
        return self.create(ConstantOp, (), [type], {"value": value}).result

    # -- replacement and erasure ---------------------------------------------------------------------------
    def replace_all_uses_with(self, old: Value, new: Value):
        if old is new:
            return
        users = [u for u, _ in old.uses]
        old.replace_all_uses_with(new)
        for u in users:
            self._notify("changed", u)

    def replace_op(self, op: Operation, values, check_types: bool = True):
        """Replace ``op``'s results with ``values`` (Values, or an op whose results to use) and erase it.
        Type-changing lowerings (layouts, for instance) pass ``check_types=False``."""
        if isinstance(values, Operation):
            values = values.results
        values = list(values)
        if len(values) != len(op.results):
            raise IRError(f"replacing {op.name} ({len(op.results)} results) with {len(values)} values")
        for r, v in zip(op.results, values):
            if check_types and r.type != v.type:
                raise IRError(f"replacing a {r.type} result of {op.name} with a {v.type} value")
            self.replace_all_uses_with(r, v)
        self.erase_op(op)

    def erase_op(self, op: Operation):
        producers = [o.op for o in values_used_from_outside(op) if hasattr(o, "op")]
        parent = op.parent_op
        self._notify("erased", op)
        op.erase()
        for p in producers + ([parent] if parent is not None else []):
            self._notify("changed", p)

    def modified(self, op: Operation):
        """Call after changing ``op`` in place (operands, attributes, regions)."""
        self._notify("changed", op)

    def inline_block_before(self, block: Block, before: Operation, arg_values=()) -> list[Value]:
        """Move ``block``'s ops (except its terminator) before ``before``, its arguments replaced by
        ``arg_values``; return the terminator's operands (the terminator is erased)."""
        for a, v in zip(block.args, arg_values):
            self.replace_all_uses_with(a, v)
        term = block.terminator
        results = list(term.operands) if term is not None else []
        if term is not None:
            term.erase()
        for op in list(block.ops):
            op.move_before(before)
            self._notify("created", op)
        return results

    def _notify(self, kind, op):
        if self.listener is not None:
            self.listener.notify(kind, op)


class _Driver:
    def __init__(self, root: Operation, patterns, erase_dead: bool):
        self.root = root
        self.erase_dead = erase_dead
        self.by_class: dict[type, list[RewritePattern]] = {}
        self.generic: list[RewritePattern] = []
        for p in patterns:
            if p.roots is None:
                self.generic.append(p)
            else:
                for r in p.roots:
                    self.by_class.setdefault(OP_REGISTRY[r] if isinstance(r, str) else r, []).append(p)
        self._cache: dict[type, list[RewritePattern]] = {}
        self.worklist: deque[Operation] = deque()
        self.queued: set[int] = set()
        self.changed = False

    def patterns_for(self, cls: type) -> list[RewritePattern]:
        ps = self._cache.get(cls)
        if ps is None:
            mine = [p for c in cls.__mro__ for p in self.by_class.get(c, ())]
            ps = sorted(dict.fromkeys(mine + self.generic), key=lambda p: -p.benefit)
            self._cache[cls] = ps
        return ps

    def push(self, op: Operation):
        if id(op) not in self.queued and op is not self.root:
            self.queued.add(id(op))
            self.worklist.append(op)

    def notify(self, kind: str, op: Operation):
        self.changed = True
        if kind == "erased":
            return
        if kind == "created":
            for o in op.walk():
                self.push(o)
            return
        self.push(op)
        for r in op.results:
            for u, _ in r.uses:
                self.push(u)
        parent = op.parent_op
        if parent is not None:
            self.push(parent)

    def attached(self, op: Operation) -> bool:
        while op is not self.root:
            b = op.parent
            if b is None or b.parent is None or b.parent.parent is None:
                return False
            op = b.parent.parent
        return True

    def run(self, max_rewrites: int) -> bool:
        for op in self.root.walk():
            self.push(op)
        rewriter = PatternRewriter(self)
        rewrites = 0
        while self.worklist:
            op = self.worklist.popleft()
            self.queued.discard(id(op))
            if not self.attached(op):
                continue
            if self.erase_dead and op.is_pure and op.results and not any(r.uses for r in op.results):
                rewriter.erase_op(op)
                continue
            for p in self.patterns_for(type(op)):
                rewriter._at(op)
                if p.match_and_rewrite(op, rewriter):
                    self.changed = True
                    rewrites += 1
                    if rewrites > max_rewrites:
                        raise IRError(f"pattern rewriting did not converge (last: {p.label} on '{op.name}')")
                    if self.attached(op):
                        self.notify("changed", op)
                    break
        return self.changed


def apply_patterns_greedily(root: Operation, patterns: Iterable[RewritePattern], erase_dead: bool = True,
                            max_rewrites: int | None = None) -> bool:
    """Apply ``patterns`` to every op under ``root`` until none matches; returns whether anything changed.

    Ops are visited producers-first (pre-order), so folded constants flow forward in one sweep; changed ops,
    their users and their parents are revisited. With ``erase_dead``, pure ops whose results are unused are
    erased on the way (which is what lets patterns leave dead producers behind)."""
    patterns = list(patterns)
    if max_rewrites is None:
        max_rewrites = 1000 + 50 * sum(1 for _ in root.walk())
    return _Driver(root, patterns, erase_dead).run(max_rewrites)
