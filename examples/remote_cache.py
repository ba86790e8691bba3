"""A kernel cache shared by a fleet: two "machines" (processes, each with its own local cache directory) run the
matmul and softmax examples with one Redis server as their shared remote cache. The first compiles every kernel
and publishes it; the second compiles nothing.

    python examples/remote_cache.py       # the server at TILEC_REDIS_URL, else a redis-server started here

What each machine needs is two environment variables (``docs/cache.md``):
    TILEC_REMOTE_CACHE_BACKEND=redis  TILEC_REDIS_URL=redis://cache-host:6379/0
and the redis client (``pip install "tilec[redis]"``).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

MACHINE = """
import json, time
t0 = time.perf_counter()
import matmul, softmax
from tilec import cache
matmul.main(timing=False)
softmax.main(timing=False)
print(json.dumps({"seconds": time.perf_counter() - t0, "cache": cache.stats()}))
"""


def start_redis(workdir):
    """A redis-server on a free loopback port (stopped by the caller), or None when there is none."""
    if shutil.which("redis-server") is None:
        return None, None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", workdir], stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    import redis
    for _ in range(500):
        try:
            redis.Redis.from_url(url).ping()
            return proc, url
        except redis.exceptions.ConnectionError:
            time.sleep(0.01)
    proc.kill()
    raise RuntimeError("redis-server did not start")


def machine(name, url, local_dir):
    env = dict(os.environ, TILEC_REMOTE_CACHE_BACKEND="redis", TILEC_REDIS_URL=url, TILEC_CACHE_DIR=local_dir,
               PYTHONPATH=os.pathsep.join([HERE, os.path.dirname(HERE), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", MACHINE], env=env, capture_output=True, text=True, check=True)
    *lines, last = out.stdout.strip().splitlines()
    result = json.loads(last)
    counts = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in result["cache"].items())
    print(f"{name}: {result['seconds']:.2f} s ({counts})")
    return result


def main():
    with tempfile.TemporaryDirectory(prefix="tilec-fleet-") as tmp:
        url, proc = os.environ.get("TILEC_REDIS_URL"), None
        if not url:
            proc, url = start_redis(tmp)
            if url is None:
                sys.exit("no Redis server: set TILEC_REDIS_URL=redis://host:port/0, or install redis-server")
        try:
            first = machine("machine 1, empty caches     ", url, os.path.join(tmp, "m1"))
            second = machine("machine 2, warm remote cache", url, os.path.join(tmp, "m2"))
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait()
    assert not second["cache"].get("misses"), "the second machine compiled kernels the first had published"
    assert second["cache"].get("remote_hits") == first["cache"].get("misses")
    print("remote cache: ok")


if __name__ == "__main__":
    main()
