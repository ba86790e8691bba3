"""Early ``return`` inside runtime control flow: the syntactic facts the statement generator needs.

A ``return`` under a runtime ``if`` makes the rest of the enclosing statement list the continuation of the
branches that do not return: ``if pid >= n: return`` followed by ``S`` generates as ``if pid >= n: pass else: S``.
A ``return`` inside a runtime loop sets a hidden loop-carried flag (``DONE``) that ends the loop and skips what
follows it, since a structured loop has no exit edge. Inside those regions a returned value travels as the hidden
variable ``RET`` until the branches merge.
"""
from __future__ import annotations

import ast

DONE = "$returned"   # the hidden flag: a return happened inside a runtime loop
RET = "$return"      # the hidden variable carrying a returned value out of runtime branches


def contains_return(node) -> bool:
    """Whether ``node`` has a ``return`` of its own function (nested function definitions are not looked into)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Return):
            return True
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(c)
    return False


def always_returns(stmts) -> bool:
    """Whether every path through ``stmts`` ends in a ``return`` (syntactically: a final return, or a final
    ``if`` whose branches both always return)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


def done_name(node) -> ast.Name:
    """An AST reference to the hidden flag, located at ``node``."""
    return ast.copy_location(ast.Name(DONE, ast.Load()), node)


def guarded(stmts, node) -> list:
    """``stmts`` run only while no return has happened (the body of a loop that may return)."""
    test = ast.copy_location(ast.UnaryOp(ast.Not(), done_name(node)), node)
    return [ast.copy_location(ast.If(test, list(stmts), []), node)]


def return_if_done(node) -> ast.If:
    """``if <returned>: return``: what follows a loop that may return."""
    ret = ast.copy_location(ast.Return(None), node)
    return ast.copy_location(ast.If(done_name(node), [ret], []), node)


def while_test(node) -> ast.expr:
    """A while loop's test that also stops once a return happened."""
    test = ast.copy_location(ast.UnaryOp(ast.Not(), done_name(node)), node)
    return ast.copy_location(ast.BoolOp(ast.And(), [test, node.test]), node)
