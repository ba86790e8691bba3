"""Pipelines written as text: names, per-pass options in braces, defaults that go only where a constructor takes
them, and errors that say what is wrong."""
import pytest

from tilec.passes import PipelineError, parse_pipeline
from tilec.passes.manager import PASS_REGISTRY, Pass, load_all_passes
from tilec.passes.pipeline_spec import describe_passes, pass_options, split_pipeline, summary


class Tunable(Pass):
    """A pass with one option of each plain type, and one that is not plain (not settable from text)."""
    name = "spec-test-tunable"

    def __init__(self, count: int = 2, scale: float = 0.5, enabled: bool = False, mode: str = "fast",
                 patterns=()):
        self.count, self.scale, self.enabled, self.mode, self.patterns = count, scale, enabled, mode, patterns

    def run(self, module):
        return False


def test_split_reads_names_and_options():
    assert split_pipeline("inline, cse,dce") == [("inline", {}), ("cse", {}), ("dce", {})]
    assert split_pipeline("convert-to-gir{num-warps=8 warp-size=32},coalesce{num-warps=8}") == [
        ("convert-to-gir", {"num-warps": "8", "warp-size": "32"}), ("coalesce", {"num-warps": "8"})]
    assert split_pipeline(" a { x = 1 , y=2 } , b ") == [("a", {"x": "1", "y": "2"}), ("b", {})]
    assert split_pipeline("") == []


@pytest.mark.parametrize("spec, message", [
    ("a{x=1", "is never closed"),
    ("a{x}", "'x' of 'a' is not key=value"),
    ("a b", "expected ',' or the end after 'a'"),
    ("a,{x=1}", "expected a pass name"),
])
def test_split_rejects_malformed_text(spec, message):
    with pytest.raises(PipelineError, match=message):
        split_pipeline(spec)


def test_options_come_from_the_constructor():
    opts = pass_options(Tunable)
    assert list(opts) == ["count", "scale", "enabled", "mode"]  # 'patterns' has no plain default
    assert [(o.param, o.type, o.default) for o in opts.values()] == [
        ("count", int, 2), ("scale", float, 0.5), ("enabled", bool, False), ("mode", str, "fast")]
    load_all_passes()
    assert list(pass_options(PASS_REGISTRY["convert-to-gir"])) == ["num-warps", "warp-size", "target"]
    assert list(pass_options(PASS_REGISTRY["accelerate-dot"])) == ["arch", "num-warps"]
    assert pass_options(PASS_REGISTRY["cse"]) == {}


def test_braces_set_options_and_convert_them():
    [p] = parse_pipeline("spec-test-tunable{count=0x10 scale=2 enabled=true mode=slow}")
    assert (p.count, p.scale, p.enabled, p.mode) == (16, 2.0, True, "slow")
    [p] = parse_pipeline("spec-test-tunable{enabled=off}")
    assert p.enabled is False and p.count == 2


def test_defaults_go_where_taken_and_braces_override_them():
    gir, coal, dot, cse = parse_pipeline("convert-to-gir,coalesce{num-warps=2},accelerate-dot,cse",
                                         {"num_warps": 8, "arch": 90, "warp_size": 32, "unrelated": 1})
    assert (gir.num_warps, coal.num_warps, dot.num_warps, dot.arch) == (8, 2, 8, 90)
    assert cse.name == "cse"


@pytest.mark.parametrize("spec, message", [
    ("coalese", r"unknown pass 'coalese'; did you mean 'coalesce'\? \(known: .*convert-to-gir"),
    ("coalesce{num-warp=8}", r"pass 'coalesce': unknown option 'num-warp'; did you mean 'num-warps'\?"),
    ("coalesce{num-warps=eight}", r"pass 'coalesce': option 'num-warps' takes int, got 'eight'"),
    ("spec-test-tunable{enabled=maybe}", r"option 'enabled' takes bool, got 'maybe'"),
    ("cse{x=1}", r"pass 'cse': unknown option 'x' \(known: none\)"),
])
def test_errors_name_the_culprit(spec, message):
    with pytest.raises(PipelineError, match=message):
        parse_pipeline(spec)


def test_listing_names_every_pass_with_its_options():
    text = describe_passes()
    load_all_passes()
    for name in PASS_REGISTRY:
        assert f"  {name} " in text
    tir, gpu = text.index("tir passes:"), text.index("GPU passes:")
    assert tir < text.index("  cse ") < gpu < text.index("  coalesce ")
    after = text[text.index("  software-pipeline "):]
    assert after.splitlines()[1].split() == ["num-stages=3", "(int)"]


def test_summary_is_one_line_from_the_pass_or_its_module():
    load_all_passes()
    assert summary(PASS_REGISTRY["cse"]).startswith("Common-subexpression elimination")
    assert summary(PASS_REGISTRY["coalesce"]).startswith("Choose blocked layouts")  # 'Coalesce: ' dropped
    assert "noinline" in summary(PASS_REGISTRY["inline-all"])
    for cls in PASS_REGISTRY.values():
        s = summary(cls)
        assert "\n" not in s and len(s) <= 100
