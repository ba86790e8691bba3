"""Pass pipelines written as text, ``"inline,convert-to-gir{num-warps=8},coalesce"``, and what a pass accepts.

A pass's options are its constructor's keyword parameters whose defaults are plain values (int, float, bool,
str): ``ConvertToGIR(num_warps=Options.num_warps, warp_size=32)`` takes ``num-warps`` and ``warp-size`` (a
default taken from the compile options' class is a plain value by then). Reading them from the signature keeps
one source of truth: a pass gains an option by gaining a parameter, and every tool that builds pipelines from text
(``python -m tilec.passes``, ``tilec-opt``, tests) sees it at once.

Options apply in two layers: ``defaults`` (a tool's ``--num-warps 8``, a target's ``arch``) go to every pass
whose constructor names them, and ``{...}`` after a pass name overrides them for that pass only; a name in braces
that the pass does not take is an error, a default it does not take is simply not passed.
"""
from __future__ import annotations

import difflib
import inspect
import re
from dataclasses import dataclass

from ..errors import TilecError
from .base import PASS_PACKAGES, package_title
from .manager import PASS_REGISTRY, Pass, get_pass, load_all_passes

_PLAIN = (bool, int, float, str)
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


class PipelineError(TilecError):
    """A pipeline text that names no such pass, gives an option a pass does not take, or does not parse."""


@dataclass(frozen=True)
class PassOption:
    """One constructor parameter a pipeline text may set: ``name`` as written there (dashes), ``param`` as the
    constructor spells it, its ``type`` and ``default``."""
    name: str
    param: str
    type: type
    default: object

    def convert(self, text: str, where: str):
        """The value ``text`` stands for, or a PipelineError saying what was expected."""
        t = text.strip()
        try:
            if self.type is bool:
                if t.lower() in ("1", "true", "yes", "on"):
                    return True
                if t.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(t)
            if self.type is int:
                return int(t, 0)
            if self.type is float:
                return float(t)
            return t
        except ValueError:
            raise PipelineError(f"{where}: option '{self.name}' takes {self.type.__name__}, got {text!r}") from None


def pass_options(cls: type[Pass]) -> dict[str, PassOption]:
    """The options of pass class ``cls``, by dashed name, in constructor order."""
    out = {}
    try:
        params = inspect.signature(cls.__init__).parameters.values()
    except (TypeError, ValueError):
        return out
    for p in params:
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) or p.name == "self":
            continue
        if p.default is p.empty or not isinstance(p.default, _PLAIN):
            continue
        out[p.name.replace("_", "-")] = PassOption(p.name.replace("_", "-"), p.name, type(p.default), p.default)
    return out


def split_pipeline(spec: str) -> list[tuple[str, dict[str, str]]]:
    """``"a{x=1,y=2},b"`` -> ``[("a", {"x": "1", "y": "2"}), ("b", {})]``; options inside braces are separated
    by commas or blanks. Values stay text (``parse_pipeline`` converts them per option)."""
    out, i, n = [], 0, len(spec)

    def fail(msg, at):
        raise PipelineError(f"pass pipeline {spec!r}, at column {at + 1}: {msg}")

    while i < n:
        while i < n and spec[i] in " \t\n,":
            i += 1
        if i >= n:
            break
        m = _NAME.match(spec, i)
        if not m:
            fail(f"expected a pass name, got {spec[i]!r}", i)
        name, i = m.group(), m.end()
        opts: dict[str, str] = {}
        while i < n and spec[i] in " \t":
            i += 1
        if i < n and spec[i] == "{":
            close = spec.find("}", i)
            if close < 0:
                fail(f"'{{' after '{name}' is never closed", i)
            body = re.sub(r"\s*=\s*", "=", spec[i + 1:close]).strip()
            for item in re.split(r"[,\s]+", body):
                if not item:
                    continue
                key, eq, value = item.partition("=")
                if not eq or not key or not value:
                    fail(f"option '{item}' of '{name}' is not key=value", i)
                opts[key.strip()] = value.strip()
            i = close + 1
        while i < n and spec[i] in " \t\n":
            i += 1
        if i < n and spec[i] != ",":
            fail(f"expected ',' or the end after '{name}', got {spec[i]!r}", i)
        out.append((name, opts))
    return out


def _unknown(kind: str, name: str, known, where: str = "") -> PipelineError:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    listing = ", ".join(sorted(known)) or "none"
    return PipelineError(f"{where}unknown {kind} '{name}'{hint} (known: {listing})")


def pass_class(name: str) -> type[Pass]:
    """The registered pass class ``name`` (tir or target pass), or a PipelineError suggesting the nearest."""
    try:
        return type(get_pass(name))
    except KeyError:
        raise _unknown("pass", name, PASS_REGISTRY) from None


def parse_pipeline(spec: str, defaults: dict | None = None) -> list[Pass]:
    """Pass instances for a pipeline text (``"inline,convert-to-gir{num-warps=8}"``); ``defaults`` (constructor
    parameter -> value) go to every pass that takes them, ``{option=value}`` overrides them for one pass."""
    passes = []
    for name, given in split_pipeline(spec):
        cls = pass_class(name)
        options = pass_options(cls)
        kwargs = {o.param: defaults[o.param] for o in options.values() if defaults and defaults.get(o.param) is not None}
        for key, text in given.items():
            opt = options.get(key.replace("_", "-"))
            if opt is None:
                raise _unknown("option", key, options, f"pass '{name}': ")
            kwargs[opt.param] = opt.convert(text, f"pass '{name}'")
        passes.append(cls(**kwargs))
    return passes


def summary(cls: type[Pass]) -> str:
    """One line saying what a pass does: its ``summary`` when it sets one, else the first sentence of its
    module's docstring (where each pass file explains itself), without a leading ``name:``."""
    text = getattr(cls, "summary", "") or ""
    if not text:
        mod = inspect.getmodule(cls)
        doc = inspect.getdoc(mod) or ""
        para = doc.split("\n\n", 1)[0]
        text = re.split(r"(?<=\.)\s", " ".join(para.split()), maxsplit=1)[0]
    text = " ".join(text.replace("``", "").split())
    head, sep, rest = text.partition(": ")
    if sep and head.lower() == cls.name.lower():
        text = rest[:1].upper() + rest[1:]
    if len(text) > 100:
        text = text[:97].rsplit(" ", 1)[0] + " ..."
    return text


def describe_passes() -> str:
    """Every registered pass (the tir passes and each target package's), with its options and defaults: the
    text of ``--list-passes``."""
    load_all_passes()
    groups: dict[str, list[str]] = {}
    for name, cls in sorted(PASS_REGISTRY.items()):
        module = cls.__module__
        if module.startswith(__package__ + "."):
            group = "tir passes"
        else:
            group = package_title(module) or f"passes from {module.rsplit('.', 1)[0]}"
        lines = [f"  {name:<27} {summary(cls)}"]
        for opt in pass_options(cls).values():
            default = str(opt.default).lower() if isinstance(opt.default, bool) else opt.default
            lines.append(f"  {'':<27}   {opt.name}={default} ({opt.type.__name__})")
        groups.setdefault(group, []).extend(lines)
    titles = list(PASS_PACKAGES.values())
    order = sorted(groups, key=lambda g: (g != "tir passes", titles.index(g) if g in titles else len(titles), g))
    return "\n\n".join(f"{g}:\n" + "\n".join(groups[g]) for g in order) + "\n"
