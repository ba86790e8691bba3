"""examples/remote_cache.py runs end to end: the second machine of the fleet compiles nothing."""
import os
import subprocess
import sys

import pytest

from .redis_server import unavailable

EXAMPLE = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples", "remote_cache.py")


def test_remote_cache_example(tmp_path):
    why = unavailable()
    if why:
        pytest.skip(why)
    import tilec
    root = os.path.dirname(os.path.dirname(os.path.abspath(tilec.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    env.pop("TILEC_REDIS_URL", None)
    out = subprocess.run([sys.executable, EXAMPLE], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "machine 2, warm remote cache" in out.stdout and "(remote_hits 3)" in out.stdout
    assert out.stdout.rstrip().endswith("remote cache: ok")
