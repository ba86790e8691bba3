"""Structured control flow, calls, functions and modules, and the ops kept for their effects (assert, assume,
print, barrier)."""
from __future__ import annotations

from ..core import Block, Operation, Region
from ..types import FunctionType, i1
from .base import _check


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
    attr_types = {"num_stages": int, "flatten": bool}
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
