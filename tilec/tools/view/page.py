"""One self-contained HTML page per recorded variant, and an index over them.

The kernel's source file sits on the left (the kernel's own lines shaded); on the right, the IR before the
pipeline, then one foldable block per pass with a side-by-side diff of the IR before and after it (passes that
changed nothing are folded and say so), then the backend's stages (the CPU plan, LLVM IR, PTX or assembly).
Every line that comes from a source line carries ``data-line``; ``assets.JS`` links clicks both ways.
"""
from __future__ import annotations

import difflib
import html
import os
import re

from .assets import CSS, JS
from .lines import ir_lines, stage_lines

SHOWN_STAGES = ("plan", "llir", "ptx", "amdgcn", "asm")  # tir/gir are the passes' own snapshots


def _line_html(text: str, line, cls: str = "op") -> str:
    body = html.escape(text) or " "
    if line is None:
        return f'<div class="{cls}">{body}</div>' if cls != "op" else f"<div>{body}</div>"
    return f'<div class="{cls}" data-line="{line}">{body}</div>'


def _cell(item) -> str:
    if item is None:
        return ""
    text, line = item
    return _line_html(text, line)


def _diff_table(before, after) -> tuple[str, int, int]:
    """(table html, lines added, lines removed) of a side-by-side diff of two [(text, line)] lists."""
    sm = difflib.SequenceMatcher(a=[t for t, _ in before], b=[t for t, _ in after], autojunk=False)
    rows, added, removed = [], 0, 0
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        left, right = before[i1:i2], after[j1:j2]
        if tag == "equal":
            rows += [("eq", a, b) for a, b in zip(left, right)]
            continue
        added += len(right)
        removed += len(left)
        n = max(len(left), len(right))
        for k in range(n):
            a = left[k] if k < len(left) else None
            b = right[k] if k < len(right) else None
            rows.append(("chg" if a is not None and b is not None else ("del" if a is not None else "add"), a, b))
    body = "".join(f'<tr class="{c}"><td class="l">{_cell(a)}</td><td class="r">{_cell(b)}</td></tr>'
                   for c, a, b in rows)
    return f'<table class="diff">{body}</table>', added, removed


def _source_html(path: str | None, lines_used: set) -> str:
    try:
        with open(path) as f:
            src = f.read().splitlines()
    except (OSError, TypeError):
        return f"<div>(source {html.escape(str(path))} not readable)</div>"
    lo, hi = (min(lines_used), max(lines_used)) if lines_used else (0, -1)
    out = [f'<div class="file">{html.escape(path)}</div>']
    for i, text in enumerate(src, 1):
        kernel = " kernel" if lo <= i <= hi else ""
        out.append(f'<div class="src{kernel}" data-line="{i}"><span class="ln">{i}</span>{html.escape(text)}</div>')
    return "".join(out)


def render(v) -> str:
    """The page of one ``record.Variant``."""
    source = v.source_file
    blocks, used = [], set()
    snapshots = [(label, ir_lines(text, source)) for label, text in v.passes]
    for _, lines in snapshots:
        used |= {ln for _, ln in lines if ln is not None}
    label, first = snapshots[0]
    blocks.append(f'<details class="stage input" data-stage="input" open><summary>00 {label}</summary>'
                  f'<pre class="stage">{"".join(_line_html(t, ln) for t, ln in first)}</pre></details>')
    for i in range(1, len(snapshots)):
        label, after = snapshots[i]
        before = snapshots[i - 1][1]
        if [t for t, _ in before] == [t for t, _ in after]:
            blocks.append(f'<details class="stage pass same" data-stage="{html.escape(label)}"><summary>{i:02d} '
                          f'{html.escape(label)}: no change</summary><pre class="stage">'
                          f'{"".join(_line_html(t, ln) for t, ln in after)}</pre></details>')
            continue
        table, added, removed = _diff_table(before, after)
        blocks.append(f'<details class="stage pass changed" data-stage="{html.escape(label)}" open><summary>{i:02d} '
                      f'{html.escape(label)}: +{added} -{removed}</summary>{table}</details>')
    for stage in SHOWN_STAGES:
        text = v.stages.get(stage)
        if text is None:
            continue
        lines = stage_lines(stage, text, source)
        linked = sum(1 for _, ln in lines if ln is not None)
        blocks.append(f'<details class="stage backend" data-stage="{stage}"><summary>{stage} ({len(lines)} lines, '
                      f'{linked} linked to source)</summary><pre class="stage">'
                      f'{"".join(_line_html(t, ln) for t, ln in lines)}</pre></details>')
    title = f"{v.kernel} [{v.variant}]"
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{CSS}</style></head><body><header><b>{html.escape(v.kernel)}</b> variant {v.variant} "
            f"&middot; {html.escape(v.target)} &middot; {len(v.passes) - 1} passes &middot; click a line to "
            f"link source and IR</header><div id='main'><div id='source' class='pane'>"
            f"{_source_html(source, used)}</div><div id='stages' class='pane'>{''.join(blocks)}</div></div>"
            f"<script>{JS}</script></body></html>")


def _file_name(v) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{v.kernel}.{v.variant}") + ".html"


def write_pages(variants, out_dir: str) -> list:
    """Write a page per variant and ``index.html`` into ``out_dir``; the paths written (index last)."""
    if not variants:
        return []
    os.makedirs(out_dir, exist_ok=True)
    paths, links = [], []
    for v in variants:
        name = _file_name(v)
        path = os.path.join(out_dir, name)
        with open(path, "w") as f:
            f.write(render(v))
        paths.append(path)
        links.append(f'<li><a href="{html.escape(name)}">{html.escape(v.kernel)}</a> [{v.variant}] '
                     f'{html.escape(v.target)}, {len(v.passes) - 1} passes</li>')
    index = os.path.join(out_dir, "index.html")
    with open(index, "w") as f:
        f.write(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>tilec kernels</title><style>{CSS}"
                f"</style></head><body><header><b>tilec</b>: compiled kernels</header><ul>{''.join(links)}</ul>"
                "</body></html>")
    return paths + [index]
