"""``tilec.testing``: timing, comparison and benchmark-table helpers with ``triton.testing``'s interface.

Times are milliseconds. On the CPU a run is timed with ``time.perf_counter``; when the work happens on a CUDA
device (torch has initialised CUDA, or ``device="cuda"``) it is timed with CUDA events after a synchronise, so
queued asynchronous launches are counted. torch, pandas and matplotlib are used when importable, never required.
"""
from __future__ import annotations

import csv
import functools
import math
import os
import sys
import time

import numpy as np

from .backends import synchronizer
from .compiler import default_target

_RETURN_MODES = ("min", "max", "mean", "median", "all")


# -- timing --------------------------------------------------------------------------------------------------------
def _torch():
    return sys.modules.get("torch")


def _cuda_active(device) -> bool:
    if device is not None:
        return str(device).startswith("cuda")
    torch = _torch()
    try:
        return bool(torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized())
    except Exception:
        return False


class _WallTimer:
    """Per-run wall-clock timings; ``sync`` waits for outstanding device work where there is any."""

    def __init__(self, sync):
        self.sync = sync

    def measure(self, fn, n, before=None):
        out = []
        for _ in range(n):
            if before is not None:
                before()
            self.sync()
            t0 = time.perf_counter()
            fn()
            self.sync()
            out.append((time.perf_counter() - t0) * 1e3)
        return out


class _CudaEventTimer:
    def __init__(self, torch):
        self.torch = torch

    def sync(self):
        self.torch.cuda.synchronize()

    def measure(self, fn, n, before=None):
        cuda = self.torch.cuda
        starts = [cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [cuda.Event(enable_timing=True) for _ in range(n)]
        for s, e in zip(starts, ends):
            if before is not None:
                before()
            s.record()
            fn()
            e.record()
        cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def _timer(device):
    if _cuda_active(device):
        return _CudaEventTimer(_torch() or __import__("torch"))
    return _WallTimer(_launch_sync())


def _launch_sync():
    """tilec's own launches (no torch) may return before the kernel ends, on a device that runs them
    asynchronously: wait as the backend in use says."""
    return synchronizer(default_target().backend)


def _summarize(times, quantiles, return_mode):
    t = np.asarray(times, dtype=np.float64)
    if quantiles is not None:
        q = [float(x) for x in np.quantile(t, list(quantiles))]
        return q[0] if len(q) == 1 else q
    if return_mode == "all":
        return t.tolist()
    return float(getattr(np, return_mode)(t))


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean", device=None):
    """Run time of ``fn()`` in ms: about ``warmup`` ms of warm-up runs, then about ``rep`` ms of timed runs.

    ``quantiles`` (e.g. ``(0.5, 0.2, 0.8)``) returns those quantiles of the per-run times (a number for one);
    otherwise ``return_mode`` picks min/max/mean/median of them or ``"all"`` of them. ``grad_to_none``: tensors
    whose ``.grad`` is cleared before each run, so accumulation into gradients is not timed.
    """
    if return_mode not in _RETURN_MODES:
        raise ValueError(f"do_bench: return_mode must be one of {_RETURN_MODES}, got {return_mode!r}")
    timer = _timer(device)
    sync = timer.sync
    flush = _cache_flusher(timer)

    def before():
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        flush()

    fn()
    sync()
    # estimate one run's time from a few, then size the warm-up and the timed runs from it
    estimate = max(sum(timer.measure(fn, 5)) / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate))
    n_repeat = max(1, int(rep / estimate))
    for _ in range(n_warmup):
        fn()
    sync()
    return _summarize(timer.measure(fn, n_repeat, before), quantiles, return_mode)


def do_bench_cudagraph(fn, rep=20, grad_to_none=None, quantiles=None, return_mode="mean"):
    """Triton's CUDA-graph timer; tilec does not capture graphs, so this times ``fn`` like ``do_bench``."""
    return do_bench(fn, warmup=max(1, rep // 4), rep=rep, grad_to_none=grad_to_none, quantiles=quantiles,
                    return_mode=return_mode)


def _cache_flusher(timer):
    """On a GPU, overwrite a buffer larger than L2 between timed runs so each starts cold (as kernels meet data in
    a real program); on the CPU this is left out: the wall-clock overhead would dominate small kernels."""
    if isinstance(timer, _CudaEventTimer):
        buf = timer.torch.empty(256 * 1024 * 1024 // 4, dtype=timer.torch.int32, device="cuda")
        return buf.zero_
    return lambda: None


# -- comparison ----------------------------------------------------------------------------------------------------
def _to_numpy(x):
    if isinstance(x, np.ndarray):
        return x
    if type(x).__module__.startswith("torch"):
        t = x.detach().cpu()
        if str(t.dtype) in ("torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2"):
            t = t.float()
        return t.numpy()
    return np.asarray(x)


def _dtype_of(x):
    return getattr(x, "dtype", None) if not isinstance(x, (int, float, complex, bool)) else np.asarray(x).dtype


def assert_close(x, y, atol=None, rtol=None, err_msg=""):
    """Raise AssertionError unless ``|x - y| <= atol + rtol * |y|`` everywhere (NaNs equal); numpy arrays, torch
    tensors and scalars. Defaults: ``atol=1e-2``, ``rtol=0``; either may be ``f(dtype) -> tolerance``."""
    dtype = _dtype_of(x)
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    atol = atol(dtype) if callable(atol) else atol
    rtol = rtol(dtype) if callable(rtol) else rtol
    a, b = _to_numpy(x), _to_numpy(y)
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        a, b = a.astype(np.int8), b.astype(np.int8)
    try:
        a64, b64 = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
    except ValueError:
        raise AssertionError(f"{err_msg + ': ' if err_msg else ''}shapes differ: {a.shape} vs {b.shape}") from None
    ok = np.isclose(a64, b64, atol=atol, rtol=rtol, equal_nan=True)
    if ok.all():
        return
    bad = ~ok
    n_bad = int(bad.sum())
    diff = np.abs(a64 - b64)
    diff = np.where(np.isnan(diff), np.inf, diff)
    where = np.unravel_index(int(np.argmax(np.where(bad, diff, -1))), a64.shape) if a64.ndim else ()
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(bad, diff / np.abs(b64), 0)
    lines = [f"{err_msg + ': ' if err_msg else ''}not close (atol={atol}, rtol={rtol}): "
             f"{n_bad} of {a64.size} elements differ",
             f"  largest difference {float(diff[where]):.6g} at index {tuple(int(i) for i in where)}: "
             f"{float(a64[where]):.8g} vs {float(b64[where]):.8g}",
             f"  largest relative difference {float(np.nanmax(rel)):.6g}"]
    first = np.argwhere(bad)[:5]
    if a64.ndim and len(first):
        lines.append("  first mismatches: " + ", ".join(
            f"{tuple(int(i) for i in ix)}: {a64[tuple(ix)]:.6g} vs {b64[tuple(ix)]:.6g}" for ix in first))
    raise AssertionError("\n".join(lines))


# -- benchmark tables ----------------------------------------------------------------------------------------------
class Benchmark:
    """One table/plot: ``x_names`` take the values in ``x_vals`` (rows), ``line_arg`` takes ``line_vals``
    (columns, titled ``line_names``); ``args`` are passed to every call unchanged."""

    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names, plot_name, args=None, xlabel="",
                 ylabel="", x_log=False, y_log=False, styles=None, color=None):
        self.x_names = list(x_names)
        self.x_vals = list(x_vals)
        self.line_arg = line_arg
        self.line_vals = list(line_vals)
        self.line_names = list(line_names)
        self.plot_name = plot_name
        self.args = dict(args or {})
        self.xlabel = xlabel
        self.ylabel = ylabel
        self.x_log = x_log
        self.y_log = y_log
        self.styles = styles
        if len(self.line_names) != len(self.line_vals):
            raise ValueError("Benchmark: line_names and line_vals must have the same length")


class Table:
    """Rows of results (what ``Mark.run(return_df=True)`` gives without pandas): ``columns`` and ``rows``."""

    def __init__(self, columns, rows):
        self.columns, self.rows = list(columns), [list(r) for r in rows]

    def to_string(self) -> str:
        cells = [[str(c) for c in self.columns]] + [[_fmt(v) for v in r] for r in self.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.columns))]
        out = ["    " + "  ".join(c.rjust(w) for c, w in zip(cells[0], widths))]
        out += [f"{i:<4}" + "  ".join(c.rjust(w) for c, w in zip(r, widths)) for i, r in enumerate(cells[1:])]
        return "\n".join(out)

    def to_csv(self, path):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(self.columns)
            w.writerows(self.rows)

    def column(self, name):
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def __repr__(self):
        return self.to_string()


def _fmt(v):
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.6g}"
    return str(v)


def _max_points():
    """``TILEC_BENCH_MAX_POINTS=N``: each benchmark runs only its first N x values. A smoke run of a script's
    benchmark section (Triton's tutorials sweep sizes that take hours on a CPU) still runs every line and prints
    the table; unset, every point runs."""
    value = os.environ.get("TILEC_BENCH_MAX_POINTS", "")
    if not value:
        return None
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"TILEC_BENCH_MAX_POINTS must be a whole number, got {value!r}") from None
    if n < 1:
        raise ValueError(f"TILEC_BENCH_MAX_POINTS must be at least 1, got {n}")
    return n


class Mark:
    """A function under ``perf_report``: ``fn(**x, **{line_arg: v}, **args)`` returns a number or
    ``(mean, min, max)``."""

    def __init__(self, fn, benchmarks):
        self.fn = fn
        self.benchmarks = benchmarks
        functools.update_wrapper(self, fn)

    def _run(self, bench: Benchmark, save_path, show_plots, print_data, **kwargs):
        rows = []
        for x in bench.x_vals[:_max_points()]:
            xs = list(x) if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            if len(xs) != len(bench.x_names):
                raise ValueError(f"Benchmark {bench.plot_name}: x value {x!r} does not match x_names "
                                 f"{bench.x_names}")
            x_args = dict(zip(bench.x_names, xs))
            means, mins, maxs = [], [], []
            for lv in bench.line_vals:
                ret = self.fn(**x_args, **{bench.line_arg: lv}, **bench.args, **kwargs)
                if isinstance(ret, (list, tuple)):
                    m, lo, hi = (list(ret) + [None, None])[:3]
                else:
                    m, lo, hi = ret, None, None
                means.append(m)
                mins.append(lo)
                maxs.append(hi)
            rows.append((xs, means, mins, maxs))
        table = Table(bench.x_names + bench.line_names, [xs + means for xs, means, _, _ in rows])
        full = Table(bench.x_names + [c for n in bench.line_names for c in (n, f"{n}-min", f"{n}-max")],
                     [xs + [v for t in zip(means, mins, maxs) for v in t] for xs, means, mins, maxs in rows])
        if save_path:
            os.makedirs(save_path, exist_ok=True)
            table.to_csv(os.path.join(save_path, f"{bench.plot_name}.csv"))
        if show_plots or save_path:
            _plot(bench, full, save_path, show_plots)
        if print_data:
            print(bench.plot_name + ":")
            print(table.to_string())
        return table

    def run(self, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs):
        """Run every benchmark; print the tables, write ``<save_path>/<plot_name>.csv`` (and ``.png`` when
        matplotlib is importable); with ``return_df`` return the table(s) (pandas DataFrames when importable)."""
        benches = self.benchmarks if isinstance(self.benchmarks, list) else [self.benchmarks]
        tables = [self._run(b, save_path, show_plots, print_data, **kwargs) for b in benches]
        pngs = [f"{b.plot_name}.png" for b in benches
                if save_path and os.path.exists(os.path.join(save_path, f"{b.plot_name}.png"))]
        if pngs:
            with open(os.path.join(save_path, "results.html"), "w") as f:
                f.write("<html><body>\n" + "".join(f'<img src="{p}"/>\n' for p in pngs) + "</body></html>\n")
        if not return_df:
            return None
        try:
            import pandas as pd
            tables = [pd.DataFrame(t.rows, columns=t.columns) for t in tables]
        except ImportError:
            pass
        return tables if isinstance(self.benchmarks, list) else tables[0]


def _plot(bench, full: Table, save_path, show):
    try:
        import matplotlib
        if not show:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots()
    x = full.column(bench.x_names[0])
    for i, name in enumerate(bench.line_names):
        style = bench.styles[i] if bench.styles else None
        kw = {"color": style[0], "linestyle": style[1]} if style else {}
        y = [np.nan if v is None else v for v in full.column(name)]
        ax.plot(x, y, label=name, **kw)
        lo, hi = full.column(f"{name}-min"), full.column(f"{name}-max")
        if all(v is not None for v in lo + hi):
            ax.fill_between(x, lo, hi, alpha=0.15, **({"color": style[0]} if style else {}))
    ax.legend()
    ax.set_xlabel(bench.xlabel or bench.x_names[0])
    ax.set_ylabel(bench.ylabel)
    if bench.x_log:
        ax.set_xscale("log")
    if bench.y_log:
        ax.set_yscale("log")
    ax.set_title(bench.plot_name)
    if save_path:
        fig.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    if show:
        plt.show()
    plt.close(fig)


def perf_report(benchmarks):
    """Decorator: ``@perf_report(Benchmark(...))`` (or a list of them); call ``.run(...)`` on the result."""
    return lambda fn: Mark(fn, benchmarks)
