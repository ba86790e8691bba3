"""A real Redis server for the remote cache's tests: ``redis-server`` from the system package, on a free loopback
port, with no persistence, in a directory of the test's own; killed, stopped, continued or restarted on the same
port as a test needs."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unavailable() -> str | None:
    """Why a server cannot be had here, or None."""
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (apt-get install redis-server; .ci/run installs it)"
    try:
        import redis  # noqa: F401
    except ImportError:
        return "the redis client is not installed (pip install redis, tilec's [redis] extra)"
    return None


class RedisServer:
    def __init__(self, workdir, port: int | None = None, replica_of: "RedisServer | None" = None):
        self.workdir = str(workdir)
        self.port = port or free_port()
        self.replica_of = replica_of
        self.proc = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self):
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", self.workdir, "--protected-mode", "no", "--loglevel", "warning"]
        if self.replica_of is not None:
            args += ["--replicaof", "127.0.0.1", str(self.replica_of.port)]
        os.makedirs(self.workdir, exist_ok=True)
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.client().ping():
                    return
            except Exception:  # noqa: BLE001  (not up yet)
                time.sleep(0.02)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def client(self):
        import redis
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def kill(self):
        """SIGKILL: the server vanishes mid-run (connections reset, nothing flushed)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def pause(self):
        os.kill(self.proc.pid, signal.SIGSTOP)  # accepts connections, answers nothing: every call times out

    def resume(self):
        os.kill(self.proc.pid, signal.SIGCONT)

    def restart(self):
        self.kill()
        self.start()

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.resume()
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
