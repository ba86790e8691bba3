"""Every op class has a meaning wherever it can appear: the reference evaluator runs it, the interpreter runs it,
the CPU lowering and the generic GPU lowering lower it; or :data:`REFUSED` says, per place, why not.

What counts is the per-class tables themselves (``OpTable`` lookups and the elementwise tables beneath them), so
a new op class without an entry fails here before any kernel meets it. A refusal that has become stale (the place
now has an entry) fails too, so the table stays the truth."""
import pytest

import tilec.gpu.lowering  # noqa: F401  (registers the GPU lowerings)
import tilec.targets.cpu.backend  # noqa: F401  (registers the CPU lowerings)
from tilec.codegen.elementwise import ELEMENTWISE as CPU_ELEMENTWISE
from tilec.gpu import ops as G
from tilec.gpu.lowering import scalar as gpu_scalar
from tilec.gpu.lowering.registry import LOWERINGS as GPU
from tilec.ir import ops as O
from tilec.ir.core import OP_REGISTRY
from tilec.ir.evaluator import EVALUATION
from tilec.targets.cpu.registry import LOWERINGS as CPU
from tilec.targets.cuda.nvvm_math import LIBRARY as CUDA_MATH
from tilec.targets.hip.math import LIBRARY as HIP_MATH

PLACES = ("evaluator", "interpreter", "cpu", "gpu")

_TERMINATOR = "a terminator: the op that holds its region reads its operands"
_CONTAINER = "a container: each place walks the functions of a module itself"
_EXPANDED = ("expand-descriptors turns it into the masked pointer access it means first (TMA targets: "
             "gpu-descriptor-copies into tma_copy/tma_store)")
_GIR = "gir only: made by the GPU passes, after the frontend and the CPU pipeline"
_ASM = "inline GPU assembly has no meaning on the host (EvalBuilder.inline_asm refuses it with a message)"
_GIR_OPS = (G.AsyncCommitOp, G.AsyncCopyOp, G.AsyncWaitOp, G.FenceAsyncSharedOp, G.LocalAllocOp, G.LocalDeallocOp,
            G.LocalIndexOp, G.LocalLoadOp, G.LocalStoreOp, G.LocalTransOp, G.MBarrierInitOp, G.MBarrierInvalOp,
            G.MBarrierWaitOp, G.TensormapCreateOp, G.TmaCopyOp, G.TmaStoreOp, G.WarpGroupDotOp,
            G.WarpGroupDotWaitOp)

# op class -> {place: why the place has no entry for it}
REFUSED = {
    O.YieldOp: dict.fromkeys(PLACES, _TERMINATOR),
    O.ConditionOp: dict.fromkeys(PLACES, _TERMINATOR),
    O.ReturnOp: dict.fromkeys(("evaluator", "interpreter", "gpu"), _TERMINATOR),
    O.FuncOp: dict.fromkeys(PLACES, _CONTAINER),
    O.ModuleOp: dict.fromkeys(PLACES, _CONTAINER),
    O.DescriptorLoadOp: dict.fromkeys(("cpu", "gpu"), _EXPANDED),
    O.DescriptorStoreOp: dict.fromkeys(("cpu", "gpu"), _EXPANDED),
    O.InlineAsmOp: dict.fromkeys(("evaluator", "interpreter"), _ASM),
    O.InlineAsmSideEffectOp: dict.fromkeys(("evaluator", "interpreter"), _ASM),
    G.ConvertLayoutOp: {"cpu": _GIR},
    **{c: dict.fromkeys(("evaluator", "interpreter", "cpu"), _GIR) for c in _GIR_OPS},
}


def _evaluates(cls) -> bool:
    """An evaluator entry and, for elementwise ops (one entry for all), the op's own numpy meaning."""
    if EVALUATION.lookup_class(cls) is None:
        return False
    if issubclass(cls, O.ElementwiseOp):
        if issubclass(cls, (O.BinaryOp, O.UnaryOp)):
            return cls.numpy is not None
        return cls.compute is not O.ElementwiseOp.compute or cls.evaluate is not O.ElementwiseOp.evaluate
    return True


def _lowers_on_cpu(cls) -> bool:
    """A CPU lowering entry and, for elementwise ops (lowered through one entry), their LLVM code."""
    if CPU.lookup_class(cls) is None:
        return False
    return not issubclass(cls, O.ElementwiseOp) or CPU_ELEMENTWISE.lookup_class(cls) is not None


def _gpu_scalar_entry(cls) -> bool:
    """Binary and unary ops share one GPU lowering; their scalar code is in per-class tables for the element
    kinds of their domain (float unary math may come from the math library, by name)."""
    kinds = {"int": ("int",), "float": ("float",)}.get(cls.domain, ("int", "float"))
    if issubclass(cls, O.BinaryOp):
        tables = {"int": gpu_scalar.INT_BINARY, "float": gpu_scalar.FLOAT_BINARY}
        return all(cls in tables[k] for k in kinds)
    ok = True
    if "int" in kinds:
        ok &= cls in gpu_scalar.INT_UNARY
    if "float" in kinds:
        ok &= cls in gpu_scalar.FLOAT_UNARY or all(cls.name in m.f32 for m in (CUDA_MATH, HIP_MATH))
    return ok


def _lowers_on_gpu(cls) -> bool:
    if GPU.lookup_class(cls) is None:
        return False
    return not issubclass(cls, (O.BinaryOp, O.UnaryOp)) or _gpu_scalar_entry(cls)


def coverage(cls) -> dict:
    """Place -> whether it has an entry for op class ``cls``. The interpreter executes each op the frontend
    emits through the evaluator's table (control flow runs as Python, which needs no entry)."""
    ev = _evaluates(cls)
    return {"evaluator": ev, "interpreter": ev, "cpu": _lowers_on_cpu(cls), "gpu": _lowers_on_gpu(cls)}


def gaps(cls) -> list:
    """Places with neither an entry nor a listed refusal, and refusals listed where there is an entry."""
    refused = REFUSED.get(cls, {})
    out = []
    for place, has in coverage(cls).items():
        if not has and place not in refused:
            out.append(f"{place}: no entry and no refusal")
        if has and place in refused:
            out.append(f"{place}: has an entry but is listed as refused ({refused[place]})")
    return out


@pytest.mark.parametrize("name", sorted(OP_REGISTRY))
def test_every_op_class_is_covered_or_refused(name):
    assert gaps(OP_REGISTRY[name]) == []


def test_refusals_name_registered_op_classes_and_places():
    for cls, places in REFUSED.items():
        assert OP_REGISTRY.get(cls.name) is cls
        assert set(places) <= set(PLACES) and all(places.values())


@pytest.fixture
def synthetic():
    """Op classes made in a test, taken out of the registry afterwards (declaring one registers it)."""
    made = []
    yield made
    for cls in made:
        OP_REGISTRY.pop(cls.name, None)


def test_a_new_elementwise_op_without_entries_fails(synthetic):
    bare = O.arithmetic.binary("SyntheticBareOp", "synthetic_bare", None, "int")
    synthetic.append(bare)
    assert set(p.split(":")[0] for p in gaps(bare)) == set(PLACES)


def test_a_new_op_with_only_its_numpy_meaning_fails_in_the_backends(synthetic):
    import numpy as np
    from tilec.ir import semantics as S
    half = O.arithmetic.binary("SyntheticHalfOp", "synthetic_half", S.plain(np.add), "int")
    synthetic.append(half)
    assert coverage(half) == {"evaluator": True, "interpreter": True, "cpu": False, "gpu": False}
    assert [p.split(":")[0] for p in gaps(half)] == ["cpu", "gpu"]


def test_a_new_op_class_of_its_own_fails(synthetic):
    class SyntheticRegionOp(O.Operation):
        name = "synthetic_region"
    synthetic.append(SyntheticRegionOp)
    assert len(gaps(SyntheticRegionOp)) == len(PLACES)
