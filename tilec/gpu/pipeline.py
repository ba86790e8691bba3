"""The GPU pass list every GPU backend runs after the tir pipeline (one PassManager runs both, see
``tilec/pipeline.py``), and ``run_gpu_passes`` for tools and tests that start from tir.

- ``inline-all`` first: every call is inlined except those to ``noinline`` functions on a target that calls
  device functions (``device_calls``; not in debug builds, nor for functions with tensor descriptors);
  ``flatten-loops`` runs a ``tl.range(..., flatten=True)`` loop and the one loop inside it as one loop (so the
  pipeliner copies across the outer iterations: persistent matmuls); ``version-alignment`` runs a loop whose
  addresses come from integers the kernel loads (a grouped GEMM's pointers and strides) in a second version
  where they are multiples of 16, as the launcher specialises arguments; ``expand-descriptors`` then turns the tensor-descriptor loads the target cannot move whole into masked
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
  warpgroup matrix units (an accumulator restarted by ``select(first, 0, acc)`` becomes the units' ``use_acc``).
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
from ..passes.flatten_loops import FlattenLoops
from ..passes.version_alignment import VersionAlignment
from ..passes.manager import PassManager, cleanup_passes
from ..targets.options import Options
from .passes.accelerate_dot import AccelerateDot
from .passes.axis_info import AxisAnalysis
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

GPU_PASSES = ("inline-all", "flatten-loops", "version-alignment", "expand-descriptors", "canonicalize", "cse",
              "licm", "canonicalize", "cse", "dce",
              "convert-to-gir", "coalesce", "accelerate-dot", "remove-layout-conversions", "call-boundaries",
              "stage-operands", "software-pipeline", "descriptor-copies", "warpgroup-dot",
              "cse", "dce", "allocate-shared", "insert-barriers")


def device_callable(func) -> bool:
    """A ``noinline`` function the GPU lowering can emit as a device function: one without tensor descriptors
    (their copy-engine descriptors live in the kernel's launch scratch)."""
    return not any(isinstance(op, (O.DescriptorLoadOp, O.DescriptorStoreOp)) for op in func.walk())


def gpu_passes(target, options) -> list:
    """The GPU passes, in order (each a ``Pass`` with a ``name`` and ``run``), for ``target`` (a
    :class:`~tilec.gpu.target.GpuTarget`) and the compile's ``options`` (a backend's
    :class:`~tilec.targets.options.Options`). The pass list asks the target what differs between vendors: its
    warp size, its matrix units (``mma_arch``, else ``dot_layouts``), which ``descriptor_load`` ops it moves whole
    (``keeps_descriptor``; the others are expanded), whether global -> shared copies run asynchronously
    (``async_copies``; else loads are pipelined through registers), the shared memory the pipeliner's rings may
    take (``pipeline_shared_limit``; ``shared_for_two_blocks``: what they keep within when fewer stages let a
    second block share the multiprocessor), whether ``noinline`` functions stay functions (``device_calls``; not in
    debug builds, whose checks live in the kernel's frame) and what gir records as its target (``gir_target``)."""
    nw, ws = options.num_warps, target.warp_size
    keep = device_callable if target.device_calls and not options.debug else None
    return [InlineAll(keep), FlattenLoops(), VersionAlignment(AxisAnalysis),
            ExpandDescriptors(lambda op: target.keeps_descriptor(op, options)),
            *cleanup_passes(),
            ConvertToGIR(nw, ws, target.gir_target), Coalesce(nw, ws), AccelerateDot.for_target(target, nw),
            RemoveLayoutConversions(), CallBoundaries(nw, ws), StageOperands(),
            SoftwarePipeline(options.num_stages, target.pipeline_shared_limit(), target.async_copies,
                             target.shared_for_two_blocks(nw)),
            DescriptorCopies(), WarpGroupDot(), CSE(), DCE(), AllocateShared(), InsertBarriers()]


def run_gpu_passes(module, target, options=None, kernel_name: str | None = None):
    """Run the GPU passes for ``target`` over a tir module in place, through a PassManager (dumps, timing,
    verification) that hands every pass ``options`` (default: the shared defaults, :class:`Options`)."""
    options = options if options is not None else Options()
    name = kernel_name or next((f.sym_name for f in module.funcs if f.attrs.get("kernel")), "module")
    PassManager(name, options=options).run(module, gpu_passes(target, options), final_verifier=verify_gir)
    return module
