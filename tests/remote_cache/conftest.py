"""Fixtures of the remote cache's tests: a real Redis server per test (skipped with the reason where no server or
client can be had), the process's cache configured to use it, and a fresh local directory standing for another
machine."""
import os

import pytest

from tilec import cache

from .redis_server import RedisServer, unavailable


@pytest.fixture
def redis_server(tmp_path):
    why = unavailable()
    if why:
        pytest.skip(why)
    server = RedisServer(tmp_path / "redis")
    yield server
    server.close()


@pytest.fixture
def remote_env(redis_server, tmp_path, monkeypatch):
    """This process uses ``redis_server`` as its remote and a fresh local directory; warnings and counts reset."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "local"))
    monkeypatch.setenv("TILEC_REMOTE_CACHE_BACKEND", "redis")
    monkeypatch.setenv("TILEC_REDIS_URL", redis_server.url)
    monkeypatch.setenv("TILEC_REMOTE_CACHE_TIMEOUT", "0.5")
    monkeypatch.delenv("TILEC_ALWAYS_COMPILE", raising=False)
    cache.reset_warnings()
    cache.reset_stats()
    yield redis_server
    cache.reset_warnings()


def child_env(server, local_dir, **extra) -> dict:
    """The environment of a child process that is another machine of the fleet: its own local directory."""
    env = dict(os.environ, TILEC_CACHE_DIR=str(local_dir), TILEC_REMOTE_CACHE_BACKEND="redis",
               TILEC_REDIS_URL=server.url, TILEC_REMOTE_CACHE_TIMEOUT="0.5")
    env.pop("TILEC_ALWAYS_COMPILE", None)
    env.update({k: str(v) for k, v in extra.items()})
    import tilec  # this tilec, and the tests' helpers, wherever the child starts
    root = os.path.dirname(os.path.dirname(os.path.abspath(tilec.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.abspath(__file__)), root,
                                         os.environ.get("PYTHONPATH", "")])
    return env
