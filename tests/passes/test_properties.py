"""Every pass (and the whole default pipeline) preserves the meaning of random programs, as computed by the
reference evaluator, and leaves valid IR."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import arguments, programs, run_main, same_results
from tilec.ir.printer import print_ir
from tilec.ir.verifier import verify
from tilec.passes import PassManager, tir_pipeline


def _check(module, data, passes):
    verify(module)
    main = module.lookup("main")
    args = data.draw(arguments(main))
    before_text = print_ir(module)
    expected = run_main(module, args)
    PassManager("main", verify=True).run(module, passes)
    got = run_main(module, args)
    assert same_results(expected, got), f"{before_text}\n-- after --\n{print_ir(module)}\n{expected}\n{got}"
    return module


@pytest.mark.parametrize("name", ["inline", "canonicalize", "cse", "dce", "licm"])
@settings(max_examples=50, deadline=None)
@given(module=programs(), data=st.data())
def test_pass_preserves_semantics(name, module, data):
    _check(module, data, [name])


@settings(max_examples=80, deadline=None)
@given(module=programs(), data=st.data())
def test_pipeline_preserves_semantics_and_is_idempotent(module, data):
    _check(module, data, tir_pipeline())
    text = print_ir(module)
    assert "call" not in text
    PassManager("main", verify=True).run(module, ["canonicalize", "cse", "dce"])
    assert print_ir(module) == text, "the pipeline's output is not a fixed point of canonicalize/cse/dce"
