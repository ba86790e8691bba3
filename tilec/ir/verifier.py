"""Structural verification of tir: the generic invariants every op shares, then each op's own ``verify_``.

Generic checks live here (not on the ops) because they need context an op does not have: which values are
visible at a point (dominance in structured regions), what the enclosing op expects a terminator to carry, and
the module's symbol table for calls. Region contracts of the structured ops are a table keyed by op class
(:data:`REGION_RULES`) so a new region-holding op adds one entry.
"""
from __future__ import annotations

from .core import Block, BlockArgument, IRError, OP_REGISTRY, Operation, OpResult
from .ops import CallOp, ForOp, FuncOp, IfOp, ModuleOp, ReduceOp, ScanOp, WhileOp
from .types import FunctionType, Type, i1
from . import ops as O

# Attributes declared in attr_types without a default that an op may nevertheless omit.
OPTIONAL_ATTRS = {ForOp: {"num_stages", "flatten"}, FuncOp: {"arg_divisibility"}}


class VerifyError(IRError):
    """An op breaks an invariant; the message names the op and its location."""


def _where(op: Operation) -> str:
    loc = f"{op.loc.file}:{op.loc.line}:{op.loc.col}: " if op.loc is not None else ""
    return f"{loc}'{op.name}' op"


def _fail(op: Operation, msg: str):
    raise VerifyError(f"{_where(op)} {msg}")


def _types(values) -> list:
    return [v.type for v in values]


def _fmt(types) -> str:
    return "(" + ", ".join(map(str, types)) + ")"


# -- region contracts ---------------------------------------------------------------------------------------
def _elem_types(values):
    return [v.type.element for v in values]


def _term(op, block, name, expected, what):
    """The block ends in ``name`` whose operand types are ``expected``."""
    t = block.ops[-1] if block.ops else None
    if t is None or t.name != name:
        _fail(op, f"{what} must end in '{name}', got {repr(t.name) if t else 'an empty block'}")
    got = _types(t.operands)
    if got != list(expected):
        _fail(op, f"{what} '{name}' carries {_fmt(got)}, expected {_fmt(expected)}")
    return t


def _args(op, block, expected, what):
    got = _types(block.args)
    if got != list(expected):
        _fail(op, f"{what} arguments are {_fmt(got)}, expected {_fmt(expected)}")


def _rules_for(op: ForOp):
    b = op.regions[0].block
    _args(op, b, [op.operands[0].type] + _types(op.operands[3:]), "body")
    _term(op, b, "yield", _types(op.operands[3:]), "body")


def _rules_if(op: IfOp):
    then, els = op.regions[0].block, op.regions[1].block
    res = _types(op.results)
    _args(op, then, [], "then region")
    _args(op, els, [], "else region")
    _term(op, then, "yield", res, "then region")
    if res or els.ops:
        _term(op, els, "yield", res, "else region")


def _rules_while(op: WhileOp):
    before, after = op.regions[0].block, op.regions[1].block
    carried = _types(op.operands)
    _args(op, before, carried, "before region")
    t = before.ops[-1] if before.ops else None
    if t is None or not isinstance(t, O.ConditionOp):
        _fail(op, "before region must end in 'condition'")
    if not t.operands or t.operands[0].type != i1:
        _fail(op, "'condition' needs a scalar i1 first operand")
    fwd = _types(t.operands[1:])
    if fwd != _types(after.args):
        _fail(op, f"'condition' forwards {_fmt(fwd)} but the after region takes {_fmt(_types(after.args))}")
    if fwd != _types(op.results):
        _fail(op, f"'condition' forwards {_fmt(fwd)} but the results are {_fmt(_types(op.results))}")
    _term(op, after, "yield", carried, "after region")


def _rules_combine(op):
    b = op.regions[0].block
    el = _elem_types(op.operands)
    _args(op, b, el + el, "combine region")
    _term(op, b, "yield", el, "combine region")
    if isinstance(op, ScanOp):
        if _types(op.results) != _types(op.operands):
            _fail(op, "results must have the operands' types")
        ax = op.attrs.get("axis")
        for o in op.operands:
            if not (o.type.is_tile and 0 <= ax < len(o.type.shape)):
                _fail(op, f"axis {ax} out of range for {o.type}")
    else:
        exp = ReduceOp.infer_result_types(op.operands, op.attrs) if op.operands else []
        if [t.without_layout() for t in _types(op.results)] != [t.without_layout() for t in exp]:
            _fail(op, f"results are {_fmt(_types(op.results))}, expected {_fmt(exp)}")


def _rules_func(op: FuncOp):
    ft = op.attrs.get("function_type")
    b = op.regions[0].block
    _args(op, b, ft.inputs, f"function @{op.attrs.get('sym_name')}")
    _term(op, b, "return", ft.results, f"function @{op.attrs.get('sym_name')}")
    div = op.attrs.get("arg_divisibility")
    if div is not None and len(div) != len(ft.inputs):
        _fail(op, f"arg_divisibility has {len(div)} entries for {len(ft.inputs)} parameters")
    for d in div or ():
        if not isinstance(d, int) or isinstance(d, bool) or d < 1 or d & (d - 1):
            _fail(op, f"arg_divisibility entries must be powers of two, got {d!r}")


def _rules_module(op: ModuleOp):
    seen = set()
    for f in op.regions[0].block.ops:
        if isinstance(f, FuncOp):
            if f.attrs.get("sym_name") in seen:
                _fail(f, f"redefinition of function @{f.attrs.get('sym_name')}")
            seen.add(f.attrs.get("sym_name"))


REGION_RULES = {ForOp: _rules_for, IfOp: _rules_if, WhileOp: _rules_while, ReduceOp: _rules_combine,
                ScanOp: _rules_combine, FuncOp: _rules_func, ModuleOp: _rules_module}

# terminator op class -> the op classes whose regions it may end
TERMINATOR_PARENTS = {O.YieldOp: (ForOp, IfOp, WhileOp, ReduceOp, ScanOp), O.ConditionOp: (WhileOp,),
                      O.ReturnOp: (FuncOp,)}


# -- generic checks -----------------------------------------------------------------------------------------
def _check_operand_count(op: Operation):
    specs = op.operand_names
    fixed = sum(1 for s in specs if not s.startswith("*") and not s.endswith("?"))
    optional = sum(1 for s in specs if s.endswith("?"))
    variadic = any(s.startswith("*") for s in specs)
    n = len(op.operands)
    if n < fixed or (not variadic and n > fixed + optional):
        want = f"{fixed}" if not optional and not variadic else f"{fixed}+"
        if optional and not variadic:
            want = f"{fixed} to {fixed + optional}"
        _fail(op, f"expects {want} operand(s), got {n}")


def _attr_ok(v, spec) -> bool:
    specs = spec if isinstance(spec, tuple) else (spec,)
    for s in specs:
        if s is int and isinstance(v, bool):
            continue
        if s is float and isinstance(v, int) and not isinstance(v, bool):
            return True
        if isinstance(v, s):
            return True
    return False


def _check_attrs(op: Operation):
    optional = OPTIONAL_ATTRS.get(type(op), ())
    for k, spec in op.attr_types.items():
        if k not in op.attrs:
            if k not in op.attr_defaults and k not in optional:
                _fail(op, f"requires attribute '{k}'")
            continue
        v = op.attrs[k]
        if not _attr_ok(v, spec):
            names = "/".join(s.__name__ for s in (spec if isinstance(spec, tuple) else (spec,)))
            _fail(op, f"attribute '{k}' must be {names}, got {v!r}")


def _check_types(op: Operation):
    for v in list(op.results) + list(op.operands):
        if not isinstance(v.type, Type) or isinstance(v.type, FunctionType):
            _fail(op, f"value of non-value type {v.type!r}")


class _Verifier:
    def __init__(self):
        self.visible: set = set()
        self.modules: list = []

    def op(self, op: Operation):
        cls = OP_REGISTRY.get(op.name)
        if cls is None or not isinstance(op, cls):
            _fail(op, "is not a registered op")
        for i, v in enumerate(op.operands):
            if v not in self.visible:
                _fail(op, f"operand #{i} ({v.type}) is not visible here (used before its definition, "
                          "defined in another region, or from outside an isolated op)")
            if (op, i) not in v.uses:
                _fail(op, f"operand #{i} is missing from its value's use list")
        for i, r in enumerate(op.results):
            if not isinstance(r, OpResult) or r.op is not op or r.index != i:
                _fail(op, f"result #{i} does not point back at its op")
        _check_operand_count(op)
        _check_types(op)
        _check_attrs(op)
        if len(op.regions) != op.num_regions:
            _fail(op, f"expects {op.num_regions} region(s), got {len(op.regions)}")
        if op.regions:
            self.regions(op)
        rule = REGION_RULES.get(type(op))
        if rule is not None:
            rule(op)
        if isinstance(op, O.CallOp):
            self.call(op)
        try:
            op.verify_()
        except VerifyError:
            raise
        except IRError as e:
            msg = str(e)
            pre = f"'{op.name}' op "
            raise VerifyError(f"{_where(op)} {msg[len(pre):] if msg.startswith(pre) else msg}") from None
        except (AttributeError, KeyError, IndexError, TypeError) as e:
            _fail(op, f"is malformed ({type(e).__name__}: {e})")

    def regions(self, op: Operation):
        isolated = "isolated" in op.traits
        saved = self.visible
        if isolated:
            self.visible = set()
        if isinstance(op, ModuleOp):
            self.modules.append(op)
        try:
            for r in op.regions:
                if r.parent is not op:
                    _fail(op, "region does not point back at its op")
                if len(r.blocks) != 1:
                    _fail(op, f"each region needs exactly one block, got {len(r.blocks)}")
                self.block(op, r.blocks[0])
        finally:
            if isinstance(op, ModuleOp):
                self.modules.pop()
            self.visible = saved

    def block(self, parent: Operation, b: Block):
        added = []
        for i, a in enumerate(b.args):
            if not isinstance(a, BlockArgument) or a.block is not b or a.index != i:
                _fail(parent, f"block argument #{i} does not point back at its block")
            self.visible.add(a)
            added.append(a)
        try:
            for i, o in enumerate(b.ops):
                if o.parent is not b:
                    _fail(o, "does not point back at its block")
                term = "terminator" in o.traits
                if term and i != len(b.ops) - 1:
                    _fail(o, "is a terminator but is not last in its block")
                if term and type(parent) not in TERMINATOR_PARENTS.get(type(o), ()):
                    _fail(o, f"cannot terminate a region of '{parent.name}'")
                self.op(o)
                for r in o.results:
                    self.visible.add(r)
                    added.append(r)
        finally:
            for v in added:
                self.visible.discard(v)

    def call(self, op: CallOp):
        callee = op.attrs.get("callee")
        f = None
        for m in reversed(self.modules):
            f = m.lookup(callee)
            if f is not None:
                break
        if f is None and self.modules:
            _fail(op, f"calls undefined function @{callee}")
        if f is None:
            return
        ft = f.function_type
        # layouts aside: GPU passes choose them per function; call-boundaries makes them agree before lowering
        if _bare(_types(op.operands)) != _bare(ft.inputs):
            _fail(op, f"passes {_fmt(_types(op.operands))} to @{callee} which takes {_fmt(ft.inputs)}")
        if _bare(_types(op.results)) != _bare(ft.results):
            _fail(op, f"expects {_fmt(_types(op.results))} from @{callee} which returns {_fmt(ft.results)}")


def _bare(types) -> list:
    return [t.without_layout() if t.is_tile else t for t in types]


def _visible_before(op: Operation) -> set:
    """Values an op nested somewhere may use: what precedes it in each enclosing block, up to isolation."""
    out = set()
    while op.parent is not None:
        b = op.parent
        out.update(b.args)
        for o in b.ops:
            if o is op:
                break
            out.update(o.results)
        owner = b.parent_op
        if owner is None or "isolated" in owner.traits:
            break
        op = owner
    return out


def verify(op: Operation) -> Operation:
    """Check ``op`` (usually a module) and everything nested in it; raise :class:`VerifyError`. Returns op."""
    v = _Verifier()
    # Values defined outside a non-isolated root are taken as given (verifying a lone nested op).
    if "isolated" not in op.traits:
        v.visible.update(_visible_before(op))
    p = op.parent_op
    while p is not None:
        if isinstance(p, ModuleOp):
            v.modules.insert(0, p)
        p = p.parent_op
    v.op(op)
    return op
