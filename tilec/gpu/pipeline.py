"""The GPU pass list every GPU backend runs after the tir pipeline (one PassManager runs both, see
``tilec/pipeline.py``), and ``run_gpu_passes`` for tools and tests that start from tir.

- ``inline-all`` first: every call is inlined except those to ``noinline`` functions on a target that calls
  device functions (``device_calls``; not in debug builds, nor for functions with tensor descriptors);
  ``expand-descriptors`` then turns the tensor-descriptor loads the target cannot move whole into masked
  pointer loads, and the tir cleanups (canonicalize, cse, licm, dce) hoist and share their address arithmetic.
- ``convert-to-gir`` gives every tile a blocked layout; ``coalesce`` picks layouts that make global accesses
  contiguous per thread; ``accelerate-dot`` moves dots to the target's matrix-unit layouts; then
  ``remove-layout-conversions`` cleans up the conversions those choices left; ``call-boundaries`` then fixes the
  layouts tiles have where they cross a call to a device function.
- ``stage-operands`` puts every matrix-unit operand that does not come straight from registers into shared
  memory as a value (``local_alloc`` of the producer, transposes as views, ``local_load`` at the dot);
  ``software-pipeline`` (num_stages) turns each load whose only user is such an allocation in a loop into
  asynchronous copies into a ring of stages; ``descriptor-copies`` stages kept descriptor stores through the
  copy engine and expands kept descriptor loads no pipeline took; ``warpgroup-dot`` hands shared operands to
  warpgroup matrix units.
- ``cse`` and ``dce`` clean up what the rewrites left (duplicate indices, dead conversions and their scratch
  memory) before ``allocate-shared`` places every shared-memory buffer and scratch space and ``insert-barriers``
  orders shared-memory accesses across threads.
"""
from __future__ import annotations

from ..ir import ops as O
from ..passes.cse import CSE
from ..passes.dce import DCE
from ..passes.inline import InlineAll
from ..passes.expand_descriptors import ExpandDescriptors
from ..passes.manager import PassManager, cleanup_passes
from .passes.accelerate_dot import AccelerateDot
from .passes.allocate_shared import AllocateShared
from .passes.call_boundaries import CallBoundaries
from .passes.coalesce import Coalesce
from .passes.convert_to_gir import ConvertToGIR
from .passes.descriptor_copies import DescriptorCopies
from .passes.insert_barriers import InsertBarriers
from .passes.software_pipeline import SoftwarePipeline
from .passes.stage_operands import StageOperands
from .passes.warpgroup_dot import WarpGroupDot
from .passes.remove_layout_conversions import RemoveLayoutConversions
from .passes.verify_gir import verify_gir

#: how a GPU backend wants the frontend to compose functions that have several forms (``frontend_options``):
#: sort/topk as bitonic networks, linear in the tile per step (a GPU's code is unrolled per thread, so a
#: quadratic ``n x n`` intermediate would be ``n * n / threads`` registers each)
FRONTEND_OPTIONS = {"sort_network": True}

GPU_PASSES = ("inline-all", "expand-descriptors", "canonicalize", "cse", "licm", "canonicalize", "cse", "dce",
              "convert-to-gir", "coalesce", "accelerate-dot", "remove-layout-conversions", "call-boundaries",
              "stage-operands", "software-pipeline", "descriptor-copies", "warpgroup-dot",
              "cse", "dce", "allocate-shared", "insert-barriers")


def device_callable(func) -> bool:
    """A ``noinline`` function the GPU lowering can emit as a device function: one without tensor descriptors
    (their copy-engine descriptors live in the kernel's launch scratch)."""
    return not any(isinstance(op, (O.DescriptorLoadOp, O.DescriptorStoreOp)) for op in func.walk())


def gpu_passes(num_warps: int, warp_size: int = 32, arch: int = 80, num_stages: int = 3, keep_descriptor=None,
               dot_layouts=None, shared_limit: int = 0, async_copies: bool = True, device_calls: bool = False,
               target: str = ""):
    """The GPU passes, in order (each a ``Pass`` with a ``name`` and ``run``). ``arch`` is the matrix-unit
    generation accelerate-dot targets; ``dot_layouts`` (a target's ``GpuTarget.dot_layouts``) replaces that
    choice with the target's own; ``keep_descriptor`` says which ``descriptor_load`` ops the target moves whole
    (the others are expanded); ``shared_limit`` (bytes, 0: none) bounds what the pipeliner's rings take;
    ``async_copies``: the target copies global -> shared asynchronously (else loads are pipelined through
    registers); ``device_calls``: ``noinline`` functions stay functions, called for real; ``target``
    (``"<backend>:<arch>"``) is recorded on every function of the gir."""
    keep = device_callable if device_calls else None
    return [InlineAll(keep), ExpandDescriptors(keep_descriptor), *cleanup_passes(),
            ConvertToGIR(num_warps, warp_size, target), Coalesce(num_warps, warp_size),
            AccelerateDot(arch, num_warps, dot_layouts), RemoveLayoutConversions(), CallBoundaries(num_warps, warp_size),
            StageOperands(), SoftwarePipeline(num_stages, shared_limit, async_copies), DescriptorCopies(),
            WarpGroupDot(), CSE(), DCE(), AllocateShared(), InsertBarriers()]


def run_gpu_passes(module, num_warps: int, warp_size: int = 32, kernel_name: str | None = None, arch: int = 80,
                   num_stages: int = 3):
    """Run the GPU passes over a tir module in place, through a PassManager (dumps, timing, verification)."""
    name = kernel_name or next((f.sym_name for f in module.funcs if f.attrs.get("kernel")), "module")
    PassManager(name).run(module, gpu_passes(num_warps, warp_size, arch, num_stages), final_verifier=verify_gir)
    return module
