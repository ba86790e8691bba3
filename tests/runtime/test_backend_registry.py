"""The backend registry: backends by name, asked in order whether a launch's arguments are theirs."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tilec
import tilec.language as tl
from tilec import backends
from tilec.compiler import Target, default_target, target_for
from tilec.targets.params import param_kinds


class FakeArray:
    """Memory of an imaginary device: a host buffer underneath, so specialisation can read its facts."""

    def __init__(self, a):
        self.a = a
        self.__array_interface__ = a.__array_interface__


class FakeBackend:
    """A backend that compiles nothing past tir and records its launches."""
    name = "fake"
    launches: list = []

    def __init__(self, target):
        self.target = target

    @staticmethod
    def owns(value):
        return isinstance(value, FakeArray)

    def parse_options(self, options):
        return {"num_warps": 4, **{k: v for k, v in options.items() if v is not None}}

    def stages(self, options):
        def fake(module, metadata):
            kernel = next(f for f in module.funcs if f.attrs.get("kernel"))
            metadata["param_kinds"] = param_kinds(a.type for a in kernel.args)
            return "fake code for " + kernel.sym_name
        return [("fake", fake)]

    def load(self, asm, metadata):
        def launch(grid, args):
            FakeBackend.launches.append((asm["fake"], tuple(grid), list(args), metadata["param_kinds"]))
        return launch


@pytest.fixture
def fake_backend(monkeypatch):
    monkeypatch.delenv("TILEC_BACKEND", raising=False)
    FakeBackend.launches = []
    backends.register_backend("fake", FakeBackend, before="cuda")
    yield FakeBackend
    backends.unregister_backend("fake")


@tilec.jit
def copy(X, Out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(Out + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)


def test_builtin_order_asks_cuda_before_cpu():
    names = backends.backend_names()
    assert names.index("cuda") < names.index("cpu")


def test_register_before_and_replace():
    try:
        backends.register_backend("gpu-x", lambda t: None, before="cpu")
        names = backends.backend_names()
        assert names.index("cuda") < names.index("gpu-x") == names.index("cpu") - 1
        backends.register_backend("gpu-x", lambda t: "second")
        assert backends.backend_names().count("gpu-x") == 1
        assert backends.get_backend(Target("gpu-x")) == "second"
    finally:
        backends.unregister_backend("gpu-x")
    assert "gpu-x" not in backends.backend_names()


def test_unknown_backend_names_the_registered_ones():
    with pytest.raises(ValueError, match="unknown backend 'nope'.*cuda.*cpu"):
        backends.get_backend(Target("nope"))


def test_owns_comes_from_the_factory(fake_backend):
    entry = next(e for e in backends._REGISTRY if e.name == "fake")
    assert entry.owns is FakeBackend.owns


def test_target_follows_the_arguments(fake_backend, monkeypatch):
    x = np.zeros(4, np.float32)

    class CudaLike:
        __cuda_array_interface__ = {"shape": (1,), "typestr": "<f4", "data": (4096, False), "version": 3}

    assert target_for([x, 3]) == Target("cpu")
    assert target_for([1, 2.0]) == default_target() == Target("cpu")
    assert target_for([x, CudaLike()]) == Target("cuda")
    assert target_for([x, FakeArray(x), CudaLike()]) == Target("fake")
    monkeypatch.setenv("TILEC_BACKEND", "cpu")
    assert target_for([FakeArray(x), CudaLike()]) == Target("cpu")


def test_fake_backend_is_chosen_for_its_own_arrays(fake_backend):
    x, out = np.arange(10, dtype=np.float32), np.zeros(10, np.float32)
    copy[(3,)](FakeArray(x), FakeArray(out), 10, BLOCK=16)
    (code, grid, args, kinds), = fake_backend.launches
    assert code == "fake code for copy" and grid == (3, 1, 1)
    assert isinstance(args[0], FakeArray) and args[2] == 10
    assert kinds == ["ptr", "ptr", "i32"]
    copy[(1,)](x, out, 10, BLOCK=16)  # plain numpy arrays still go to the CPU
    np.testing.assert_array_equal(out, x)
    assert len(fake_backend.launches) == 1


def test_cached_launches_reach_a_launcher_without_entries_with_its_argument_list(fake_backend):
    """A launcher with no launch entries of its own gets the adapters (``targets/entry.py``): the values as the
    call gave them, in a list, on every grid, with launch options too."""
    x, out = np.arange(10, dtype=np.float32), np.zeros(10, np.float32)
    a, o = FakeArray(x), FakeArray(out)
    grids = [(3,), (1,), (2, 2), [4]]
    for grid in grids:
        for _ in range(3):  # the first launches compile and fill the cache, the third is a cached one
            copy[grid](a, o, 10, BLOCK=16)
    copy[(1,)](a, o, 7, BLOCK=16, num_warps=8)
    launches = fake_backend.launches
    assert [g for _, g, _, _ in launches] == [(3, 1, 1)] * 3 + [(1, 1, 1)] * 3 + [(2, 2, 1)] * 3 + [(4, 1, 1)] * 3 + [
        (1, 1, 1)]
    assert all(args[0] is a and args[1] is o for _, _, args, _ in launches)
    assert [args[2] for _, _, args, _ in launches] == [10] * 12 + [7]


def test_forcing_a_backend_overrides_ownership(fake_backend, monkeypatch):
    monkeypatch.setenv("TILEC_BACKEND", "cpu")
    x, out = np.arange(5, dtype=np.float32), np.zeros(5, np.float32)
    copy[(1,)](FakeArray(x), FakeArray(out), 5, BLOCK=32)  # a BLOCK of its own: the in-memory cache is per key
    assert fake_backend.launches == []
    np.testing.assert_array_equal(out, x)


def test_compile_takes_a_registered_backend_by_name(fake_backend):
    k = tilec.compile(tilec.ASTSource(copy, "*fp32,*fp32,i32", {"BLOCK": 8}), Target("fake"))
    assert k.asm["fake"] == "fake code for copy" and k.metadata["param_kinds"] == ["ptr", "ptr", "i32"]


def test_importing_tilec_loads_no_backend_code():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = ("import sys, tilec; bad = sorted(m for m in sys.modules if m.startswith(('llvmlite', "
            "'tilec.targets.cpu', 'tilec.targets.cuda.backend', 'tilec.targets.cuda.lower'))); "
            "assert not bad, bad")
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=root)
