"""A stand-in for a Redis server, for the remote-cache benchmark on machines without one: speaks RESP2 on a
loopback port and serves the commands tilec's Redis backend and the redis client send (GET, SET with NX/PX,
DEL, EXISTS, PEXPIRE, PING, CLIENT, FLUSHALL, DBSIZE), from one dict in a thread of the benchmark's process.

It is not a Redis server (no persistence, no other commands, one lock around everything); the benchmark says when
its figures come from it. ``RespStandIn().start()`` returns the URL to put in ``TILEC_REDIS_URL``."""
from __future__ import annotations

import socketserver
import threading
import time


class _Handler(socketserver.StreamRequestHandler):
    def handle(self):
        store: "RespStandIn" = self.server.owner
        while True:
            try:
                args = self._read_command()
            except (ConnectionError, ValueError):
                return
            if args is None:
                return
            self.wfile.write(store.execute(args))
            self.wfile.flush()

    def _line(self) -> bytes:
        line = self.rfile.readline()
        if not line:
            raise ConnectionError("closed")
        return line[:-2]

    def _read_command(self):
        head = self._line()
        if not head.startswith(b"*"):
            return head.split()  # an inline command
        args = []
        for _ in range(int(head[1:])):
            n = int(self._line()[1:])
            data = self.rfile.read(n + 2)
            if len(data) != n + 2:
                raise ConnectionError("closed")
            args.append(data[:-2])
        return args


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _bulk(v: bytes | None) -> bytes:
    return b"$-1\r\n" if v is None else b"$%d\r\n%s\r\n" % (len(v), v)


class RespStandIn:
    def __init__(self):
        self.data: dict = {}
        self.expiry: dict = {}
        self.lock = threading.Lock()
        self.server = None

    def start(self) -> str:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.owner = self
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"redis://127.0.0.1:{self.server.server_address[1]}/0"

    def stop(self):
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def _live(self, key):
        t = self.expiry.get(key)
        if t is not None and time.monotonic() >= t:
            self.data.pop(key, None)
            self.expiry.pop(key, None)
        return key in self.data

    def execute(self, args) -> bytes:
        cmd = args[0].upper() if args else b""
        with self.lock:
            if cmd == b"PING":
                return b"+PONG\r\n"
            if cmd in (b"CLIENT", b"SELECT"):
                return b"+OK\r\n"
            if cmd == b"GET":
                return _bulk(self.data[args[1]] if self._live(args[1]) else None)
            if cmd == b"SET":
                key, value, opts = args[1], args[2], [a.upper() for a in args[3:]]
                if b"NX" in opts and self._live(key):
                    return b"$-1\r\n"
                self.data[key] = value
                self.expiry.pop(key, None)
                if b"PX" in opts:
                    self.expiry[key] = time.monotonic() + int(args[3 + opts.index(b"PX") + 1]) / 1000
                elif b"EX" in opts:
                    self.expiry[key] = time.monotonic() + int(args[3 + opts.index(b"EX") + 1])
                return b"+OK\r\n"
            if cmd in (b"DEL", b"EXISTS"):
                keys = [k for k in args[1:] if self._live(k)]
                if cmd == b"DEL":
                    for k in keys:
                        self.data.pop(k, None)
                        self.expiry.pop(k, None)
                return b":%d\r\n" % len(keys)
            if cmd == b"PEXPIRE":
                if not self._live(args[1]):
                    return b":0\r\n"
                self.expiry[args[1]] = time.monotonic() + int(args[2]) / 1000
                return b":1\r\n"
            if cmd == b"FLUSHALL":
                self.data.clear()
                self.expiry.clear()
                return b"+OK\r\n"
            if cmd == b"DBSIZE":
                return b":%d\r\n" % sum(self._live(k) for k in list(self.data))
        return b"-ERR unknown command '%s'\r\n" % cmd
