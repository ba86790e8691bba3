"""python -m tilec.tools.view (and TILEC_DUMP_HTML): a self-contained page per compiled variant with the
source, every pass as a side-by-side diff (unchanged ones folded), the backend stages linked to source lines;
clicking an op highlights its source line and back, checked in headless Chromium where it is installed."""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from tilec.tools.view.cli import main as view_main
from tilec.tools.view.lines import asm_lines, ir_lines, llvm_lines

SCRIPT = textwrap.dedent('''
    import numpy as np
    import tilec
    import tilec.language as tl


    @tilec.jit
    def rowsum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        acc = tl.zeros([BLOCK], tl.float32)
        for i in range(0, n, BLOCK):
            offs = i + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n)
            acc += x * 1.0 + x * 1.0
        tl.store(out_ptr + tl.arange(0, BLOCK), acc)


    x = np.arange(64, dtype=np.float32)
    out = np.zeros(16, np.float32)
    for block in (16, 8):
        rowsum_kernel[(1,)](x, out[:block], 64, BLOCK=block)
    print("script ran")
''')
LOAD_LINE = SCRIPT.splitlines().index("        x = tl.load(x_ptr + offs, mask=offs < n)") + 1


def _pages(tmp_path, *extra):
    (tmp_path / "script.py").write_text(SCRIPT)
    assert view_main([str(tmp_path / "script.py"), "-o", str(tmp_path / "view"), *extra]) == 0
    return sorted(p for p in (tmp_path / "view").glob("rowsum_kernel.*.html"))


def test_a_page_per_variant_with_passes_diffs_and_linked_stages(tmp_path, capsys):
    pages = _pages(tmp_path)
    assert "script ran" in capsys.readouterr().out
    assert len(pages) == 2 and (tmp_path / "view" / "index.html").exists()
    html = pages[0].read_text()
    assert "<script>" in html and "http" not in html.split("<body>")[1]  # self-contained
    summaries = re.findall(r"<summary>(\d\d) ([\w-]+): ([^<]*)</summary>", html)
    names = [n for _, n, _ in summaries]
    cleanups = ["canonicalize", "cse", "licm", "canonicalize", "cse", "dce"]
    assert names == ["inline", *cleanups, "expand-descriptors", *cleanups]
    changed = {n for _, n, s in summaries if s.startswith("+")}
    assert "canonicalize" in changed and "licm" in changed
    assert re.search(r'<details class="stage pass same" data-stage="inline"><summary>01 inline: no change', html)
    assert '<tr class="chg">' in html or '<tr class="del">' in html
    # ops carry their source line; the load is linked in the IR, the LLVM IR and the assembly
    assert f'data-line="{LOAD_LINE}">' in html and 'loc("' not in html
    for stage in ("llir", "asm"):
        block = html.split(f'data-stage="{stage}"')[1].split("</details>")[0]
        assert int(re.search(r"(\d+) linked to source", block).group(1)) > 0
        assert f'class="op" data-line="{LOAD_LINE}"' in block
    assert f'<div class="src kernel" data-line="{LOAD_LINE}">' in html


def test_kernel_filter_and_bad_input(tmp_path, capsys):
    (tmp_path / "script.py").write_text(SCRIPT)
    assert view_main([str(tmp_path / "script.py"), "--kernel", "nope", "-o", str(tmp_path / "v")]) == 2
    assert "no compiled kernel named nope (compiled: rowsum_kernel)" in capsys.readouterr().err
    assert view_main([str(tmp_path / "missing.py")]) == 2
    assert "no such script" in capsys.readouterr().err
    (tmp_path / "empty.py").write_text("print('nothing')\n")
    assert view_main([str(tmp_path / "empty.py"), "-o", str(tmp_path / "v")]) == 2
    assert "compiled no kernel" in capsys.readouterr().err
    (tmp_path / "fails.py").write_text("raise SystemExit(3)\n")
    assert view_main([str(tmp_path / "fails.py"), "-o", str(tmp_path / "v")]) == 3


def test_dump_html_environment_variable(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    env = dict(os.environ, TILEC_DUMP_HTML=str(tmp_path / "out"),
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
                   __file__))))] + sys.path))
    r = subprocess.run([sys.executable, str(tmp_path / "script.py")], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "2 kernel page(s)" in r.stderr
    assert len(list((tmp_path / "out").glob("rowsum_kernel.*.html"))) == 2


def test_line_maps():
    src = "/k.py"
    assert ir_lines('  %0 = load %1 : f32 loc("/k.py":7:3)', src) == [("  %0 = load %1 : f32", 7)]
    assert ir_lines('  %0 = add %1 loc("/other.py":7:3)', src) == [("  %0 = add %1", None)]
    llvm = ('  %a = fadd float %x, %y, !dbg !9\n!3 = !DIFile(filename: "k.py", directory: "/")\n'
            '!5 = distinct !DISubprogram(name: "k", file: !3, line: 1)\n!9 = !DILocation(line: 12, column: 4, scope: !5)')
    assert llvm_lines(llvm, src)[0] == ("  %a = fadd float %x, %y, !dbg !9", 12)
    asm = '\t.file\t1 "/" "k.py"\n\t.loc\t1 5 2\n\tvaddps %ymm0, %ymm1, %ymm2\nlabel:\n\t.loc\t1 0 0\n\tret'
    assert [ln for _, ln in asm_lines(asm, src)] == [None, 5, 5, None, None, None]


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


CLICKS = textwrap.dedent('''
    <script>
    (function () {
      var out = {};
      var op = document.querySelector('details[data-stage="llir"] .op[data-line="%(line)d"]');
      op.click();
      var src = document.querySelectorAll('#source .src.hl');
      out.after_op = {source_lines: Array.from(src).map(function (e) { return +e.dataset.line; }),
                      highlighted_ops: document.querySelectorAll('#stages .op.hl').length,
                      selected: document.body.dataset.selected};
      document.querySelector('#source .src[data-line="%(store)d"]').click();
      var ops = document.querySelectorAll('#stages .op.hl');
      out.after_source = {lines: Array.from(new Set(Array.from(ops).map(function (e) { return +e.dataset.line; }))),
                          count: ops.length,
                          stages: Array.from(new Set(Array.from(ops).map(function (e) {
                            return e.closest('details').dataset.stage; })))};
      var pre = document.createElement('pre');
      pre.id = 'test-result';
      pre.textContent = JSON.stringify(out);
      document.body.appendChild(pre);
    })();
    </script>
''')


@pytest.mark.skipif(_chromium() is None, reason="no Chromium on PATH (Debian: apt-get install chromium)")
def test_clicks_in_a_real_browser(tmp_path):
    page = _pages(tmp_path)[0]
    store = SCRIPT.splitlines().index("    tl.store(out_ptr + tl.arange(0, BLOCK), acc)") + 1
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text().replace("</body>", CLICKS % {"line": LOAD_LINE, "store": store} + "</body>"))
    r = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                        "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="test-result">(.*?)</pre>', r.stdout)
    assert m, r.stdout[-2000:] + r.stderr[-2000:]
    result = json.loads(m.group(1).replace("&quot;", '"'))
    # clicking the load's LLVM instruction highlights its source line, and every op of that line in every stage
    assert result["after_op"]["source_lines"] == [LOAD_LINE]
    assert result["after_op"]["selected"] == str(LOAD_LINE)
    assert result["after_op"]["highlighted_ops"] >= 3
    # clicking the store's source line highlights the ops of that line only, in the IR and the machine code
    assert result["after_source"]["lines"] == [store] and result["after_source"]["count"] >= 3
    assert {"input", "llir", "asm"} <= set(result["after_source"]["stages"])
