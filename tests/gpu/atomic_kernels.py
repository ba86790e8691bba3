"""Atomics kernels whose machine code the CUDA and AMD tests read for their memory semantics and scope: every
``sem``/``scope`` pair, tile and scalar atomics, each element type an atomic takes."""
import tilec
import tilec.language as tl

SEMS = ("relaxed", "acquire", "release", "acq_rel")
SCOPES = ("cta", "gpu", "sys")


@tilec.jit
def rmw_kernel(Z, X, Old, n, KIND: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(X + o, mask=m)
    if KIND == "add":
        old = tl.atomic_add(Z + o, x, mask=m, sem=SEM, scope=SCOPE)
    elif KIND == "max":
        old = tl.atomic_max(Z + o, x, mask=m, sem=SEM, scope=SCOPE)
    elif KIND == "min":
        old = tl.atomic_min(Z + o, x, mask=m, sem=SEM, scope=SCOPE)
    elif KIND == "and":
        old = tl.atomic_and(Z + o, x, mask=m, sem=SEM, scope=SCOPE)
    elif KIND == "or":
        old = tl.atomic_or(Z + o, x, mask=m, sem=SEM, scope=SCOPE)
    elif KIND == "xor":
        old = tl.atomic_xor(Z + o, x, mask=m, sem=SEM, scope=SCOPE)
    else:
        old = tl.atomic_xchg(Z + o, x, mask=m, sem=SEM, scope=SCOPE)
    tl.store(Old + o, old, mask=m)


@tilec.jit
def default_rmw_kernel(Z, X):
    """Triton's defaults (acq_rel, gpu) on a scalar atomic, as test_core's atomics cases write it."""
    x = tl.load(X + tl.program_id(0))
    tl.atomic_add(Z, x)


@tilec.jit
def cas_kernel(X, Cmp, Val, Old, Lock, SEM: tl.constexpr, SCOPE: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Old + o, tl.atomic_cas(X + o, tl.load(Cmp + o), tl.load(Val + o), sem=SEM, scope=SCOPE))
    while tl.atomic_cas(Lock, 0, 1, sem=SEM, scope=SCOPE) == 1:
        pass
    tl.atomic_xchg(Lock, 0, sem=SEM, scope=SCOPE)


def rmw_source(kind, dtype, sem, scope, block=128):
    return tilec.ASTSource(rmw_kernel, f"*{dtype},*{dtype},*{dtype},i32",
                           constexprs={"KIND": kind, "SEM": sem, "SCOPE": scope, "BLOCK": block})


def cas_source(dtype, sem, scope, block=64):
    return tilec.ASTSource(cas_kernel, f"*{dtype},*{dtype},*{dtype},*{dtype},*i32",
                           constexprs={"SEM": sem, "SCOPE": scope, "BLOCK": block})
