"""tilec.testing: do_bench numbers, assert_close messages, perf_report tables and CSV files."""
import csv
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilec.testing import Benchmark, assert_close, do_bench, perf_report


def test_do_bench_measures_sleep():
    t = do_bench(lambda: time.sleep(0.002), warmup=2, rep=20)
    assert 1.9 <= t < 50


def test_do_bench_modes_and_quantiles():
    a = np.random.default_rng(0).random(20_000)
    fn = lambda: np.sort(a)  # noqa: E731
    q = do_bench(fn, warmup=1, rep=10, quantiles=[0.5, 0.2, 0.8])
    assert isinstance(q, list) and len(q) == 3 and 0 < q[1] <= q[0] <= q[2]
    single = do_bench(fn, warmup=1, rep=10, quantiles=[0.5])
    assert isinstance(single, float) and single > 0
    times = do_bench(fn, warmup=1, rep=10, return_mode="all")
    assert isinstance(times, list) and len(times) >= 1 and min(times) > 0
    lo, hi = do_bench(fn, warmup=1, rep=10, return_mode="min"), do_bench(fn, warmup=1, rep=10, return_mode="max")
    assert 0 < lo <= hi
    with pytest.raises(ValueError, match="return_mode"):
        do_bench(fn, return_mode="p99")


def test_do_bench_clears_grads():
    class T:
        grad = 1

    t = T()
    calls = []
    do_bench(lambda: calls.append(t.grad), warmup=0.1, rep=0.1, grad_to_none=[t])
    assert calls[-1] is None


def test_assert_close_passes_within_tolerance():
    x = np.random.default_rng(1).standard_normal((17, 5)).astype(np.float32)
    assert_close(x, x + 5e-3)
    assert_close(x, x.astype(np.float64) * (1 + 1e-4), atol=0, rtol=1e-3)
    assert_close(1.0, 1.001)
    assert_close(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    assert_close(x, x + 0.5, atol=lambda dtype: 1.0 if dtype == np.float32 else 0.0)
    assert_close(np.array([True, False]), np.array([True, False]))


def test_assert_close_message_names_the_mismatch():
    x = np.random.default_rng(2).standard_normal((4, 6))
    y = x.copy()
    y[2, 3] += 1.0
    y[0, 1] += 0.25
    with pytest.raises(AssertionError) as info:
        assert_close(x, y, atol=1e-3, err_msg="layer norm output")
    msg = str(info.value)
    assert msg.startswith("layer norm output: not close (atol=0.001, rtol=0.0): 2 of 24 elements differ")
    assert "largest difference 1 at index (2, 3)" in msg
    assert "first mismatches: (0, 1)" in msg
    with pytest.raises(AssertionError, match="1 of 1 elements differ"):
        assert_close(3.0, 3.5)
    with pytest.raises(AssertionError, match="shapes differ"):
        assert_close(np.zeros(3), np.zeros(4))


def test_assert_close_torch():
    torch = pytest.importorskip("torch")
    x = torch.randn(33, dtype=torch.bfloat16)
    assert_close(x, x.float())
    with pytest.raises(AssertionError, match="1 of 33"):
        y = x.float().clone()
        y[7] += 1
        assert_close(x, y)


def test_perf_report_prints_and_writes_csv(tmp_path, capsys):
    calls = []

    @perf_report([
        Benchmark(x_names=["size"], x_vals=[10, 100, 1000], line_arg="provider", line_vals=["a", "b"],
                  line_names=["A", "B"], styles=[("blue", "-"), ("green", "--")], ylabel="ms", plot_name="sizes",
                  args={"scale": 2}, x_log=True),
        Benchmark(x_names=["m", "n"], x_vals=[(1, 2), (3, 4)], line_arg="provider", line_vals=["a"],
                  line_names=["A"], plot_name="pairs", args={"scale": 1}),
    ])
    def bench(provider, scale, size=None, m=None, n=None):
        calls.append((provider, size, m, n))
        base = (size or m * n) * scale
        return (base, base - 1, base + 1) if provider == "a" else float(base + 0.5)

    bench.run(print_data=True, save_path=str(tmp_path))
    out = capsys.readouterr().out
    assert "sizes:" in out and "pairs:" in out and "2000.5" in out
    with open(tmp_path / "sizes.csv") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["size", "A", "B"]
    assert [[float(v) for v in r] for r in rows[1:]] == [[10, 20, 20.5], [100, 200, 200.5], [1000, 2000, 2000.5]]
    with open(tmp_path / "pairs.csv") as f:
        assert list(csv.reader(f)) == [["m", "n", "A"], ["1", "2", "2"], ["3", "4", "12"]]
    assert len(calls) == 3 * 2 + 2

    table = bench.run(return_df=True)[0]
    assert list(table.columns) == ["size", "A", "B"]


def test_perf_report_max_points_limits_each_benchmark(monkeypatch):
    """TILEC_BENCH_MAX_POINTS=N runs the first N x values of each benchmark, every line of them."""
    calls = []

    @perf_report(Benchmark(x_names=["n"], x_vals=[1, 2, 4, 8], line_arg="p", line_vals=["a", "b"],
                           line_names=["A", "B"], plot_name="few"))
    def bench(n, p):
        calls.append((n, p))
        return float(n)

    monkeypatch.setenv("TILEC_BENCH_MAX_POINTS", "2")
    bench.run()
    assert calls == [(1, "a"), (1, "b"), (2, "a"), (2, "b")]
    monkeypatch.setenv("TILEC_BENCH_MAX_POINTS", "0")
    with pytest.raises(ValueError, match="TILEC_BENCH_MAX_POINTS"):
        bench.run()


def test_perf_report_rejects_bad_x_vals():
    @perf_report(Benchmark(x_names=["m", "n"], x_vals=[(1, 2, 3)], line_arg="p", line_vals=[0], line_names=["P"],
                           plot_name="bad"))
    def bench(m, n, p):
        return 1.0

    with pytest.raises(ValueError, match="does not match x_names"):
        bench.run()


@settings(max_examples=40)
@given(st.integers(1, 40), st.floats(0, 1), st.floats(0, 0.5), st.integers(0, 2**32 - 1))
def test_assert_close_agrees_with_the_tolerance_rule(n, atol, rtol, seed):
    """assert_close raises exactly when some |x - y| > atol + rtol * |y|, and then counts those elements."""
    rng = np.random.default_rng(seed)
    y = rng.standard_normal(n)
    x = y + rng.standard_normal(n) * rng.choice([0.0, 1e-3, 0.3, 2.0], n)
    bad = int((np.abs(x - y) > atol + rtol * np.abs(y)).sum())
    if bad == 0:
        assert_close(x, y, atol=atol, rtol=rtol)
    else:
        with pytest.raises(AssertionError, match=f"{bad} of {n} elements differ"):
            assert_close(x, y, atol=atol, rtol=rtol)


def test_perf_report_plots_when_matplotlib_is_there(tmp_path):
    pytest.importorskip("matplotlib")

    @perf_report(Benchmark(x_names=["n"], x_vals=[1, 2, 4], line_arg="p", line_vals=["a", "b"], line_names=["A", "B"],
                           styles=[("red", "-"), ("blue", "--")], ylabel="ms", plot_name="plotted", x_log=True))
    def bench(n, p):
        return (2.0 * n, 1.5 * n, 2.5 * n) if p == "a" else float(n)

    bench.run(save_path=str(tmp_path))
    assert (tmp_path / "plotted.png").stat().st_size > 1000 and (tmp_path / "plotted.csv").exists()
    assert "plotted.png" in (tmp_path / "results.html").read_text()
