"""The page's CSS and JavaScript (inlined, so a page is one file that opens anywhere without a network)."""

CSS = """
body { font: 13px/1.35 ui-monospace, Menlo, Consolas, monospace; margin: 0; color: #222; }
header { padding: 6px 10px; background: #24364b; color: #fff; }
header b { font-size: 15px; }
#main { display: flex; height: calc(100vh - 34px); }
.pane { overflow: auto; padding: 4px 8px; }
#source { flex: 0 0 38%; border-right: 2px solid #ccd; background: #fbfbfd; }
#stages { flex: 1; }
.src, .op { white-space: pre; cursor: pointer; }
.src .ln { color: #99a; display: inline-block; width: 3.5em; text-align: right; margin-right: 8px; }
.src.kernel { background: #f1f5ff; }
.hl { background: #ffe27a !important; }
details { margin: 3px 0; border: 1px solid #dde; border-radius: 3px; }
summary { padding: 2px 6px; background: #eef1f6; cursor: pointer; }
details.same > summary { color: #889; }
table.diff { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.diff td { vertical-align: top; padding: 0 4px; white-space: pre; overflow: hidden; text-overflow: ellipsis; }
tr.del td.l, tr.chg td.l { background: #fde8e8; }
tr.add td.r, tr.chg td.r { background: #e4f7e4; }
td.l { border-right: 1px solid #dde; }
pre.stage { margin: 0; }
"""

JS = r"""
(function () {
  function clear() {
    document.querySelectorAll('.hl').forEach(function (e) { e.classList.remove('hl'); });
  }
  function select(line, from) {
    clear();
    document.body.dataset.selected = line;
    var src = document.querySelector('#source .src[data-line="' + line + '"]');
    if (src) { src.classList.add('hl'); if (from !== 'source') src.scrollIntoView({block: 'center'}); }
    var ops = document.querySelectorAll('#stages .op[data-line="' + line + '"]');
    ops.forEach(function (e) { e.classList.add('hl'); });
    document.body.dataset.highlighted = ops.length;
    if (from === 'source') {
      for (var i = 0; i < ops.length; i++) {
        var d = ops[i].closest('details');
        if (d && d.open) { ops[i].scrollIntoView({block: 'center'}); break; }
      }
    }
  }
  var m = /^#line=(\d+)$/.exec(location.hash);  // a link to a source line: page.html#line=12
  if (m) select(m[1], 'source');
  document.addEventListener('click', function (ev) {
    var op = ev.target.closest('#stages .op[data-line]');
    if (op) { select(op.dataset.line, 'stage'); return; }
    var src = ev.target.closest('#source .src[data-line]');
    if (src) { select(src.dataset.line, 'source'); }
  });
})();
"""
