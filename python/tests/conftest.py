"""Fixtures: a weftd router on a free 127.0.0.1 port, weft client sessions of it, and
nodes (``node.py``) run by weft or by Eclipse Zenoh's zenoh-python in a subprocess."""

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import weft

ROOT = Path(__file__).resolve().parents[2]
NODE = Path(__file__).resolve().parent / "node.py"
TIMEOUT = 20.0


def weftd_binary():
    """WEFT_WEFTD, else the most recently built of target/{debug,release}/weftd."""
    if os.environ.get("WEFT_WEFTD"):
        return os.environ["WEFT_WEFTD"]
    built = [
        p for p in (ROOT / "target/debug/weftd", ROOT / "target/release/weftd") if p.exists()
    ]
    if not built:
        pytest.fail("weftd is not built: run `cargo build -p weftd` (or set WEFT_WEFTD)")
    return str(max(built, key=lambda p: p.stat().st_mtime))


def free_port():
    """A TCP port of 127.0.0.1 free at the time of asking."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc):
    """Returns once 127.0.0.1:port accepts connections (fails if `proc` died)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"weftd exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.02)
    pytest.fail(f"weftd does not accept on port {port}")


@pytest.fixture
def weftd():
    """A weftd listening on tcp/127.0.0.1:PORT without multicast scouting; yields the
    endpoint."""
    port = free_port()
    endpoint = f"tcp/127.0.0.1:{port}"
    proc = subprocess.Popen(
        [weftd_binary(), "-l", endpoint, "--no-multicast-scouting"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        yield endpoint
    finally:
        proc.kill()
        proc.wait()


def client_config(endpoint, module=weft):
    """A client configuration connecting to `endpoint` only."""
    config = module.Config()
    config.insert_json5("mode", '"client"')
    config.insert_json5("connect/endpoints", json.dumps([endpoint]))
    config.insert_json5("scouting/multicast/enabled", "false")
    return config


@pytest.fixture
def client(weftd):
    """Opens weft client sessions of the router (closed at the end of the test)."""
    sessions = []

    def open_client():
        s = weft.open(client_config(weftd))
        sessions.append(s)
        return s

    yield open_client
    for s in sessions:
        s.close()


# The start of a program run by either implementation (`python -c PROGRAM IMPL ...`):
# `zenoh` is zenoh-python when IMPL is "zenoh", weft otherwise.
PROGRAM_IMPORT = """
import json, queue, sys, threading, time
if sys.argv[1] == "zenoh":
    import zenoh
else:
    import weft as zenoh
"""

# Then `peer(listen=E)` / `peer(connect=E)` opens a peer session on that endpoint only
# (no scouting of any kind); `port` is the program's second argument.
PEER_PROGRAM_HEAD = PROGRAM_IMPORT + """
port = sys.argv[2]

def peer(**where):
    c = zenoh.Config()
    c.insert_json5("mode", '"peer"')
    c.insert_json5("scouting/multicast/enabled", "false")
    c.insert_json5("scouting/gossip/enabled", "false")
    for key, value in where.items():
        c.insert_json5(key + "/endpoints", json.dumps([value]))
    return zenoh.open(c)
"""

# Or `session`, a client session of the router whose endpoint is the second argument.
CLIENT_PROGRAM_HEAD = PROGRAM_IMPORT + """
c = zenoh.Config()
c.insert_json5("mode", '"client"')
c.insert_json5("connect/endpoints", json.dumps([sys.argv[2]]))
c.insert_json5("scouting/multicast/enabled", "false")
session = zenoh.open(c)
"""


def zenoh_python():
    """The Python interpreter that has Eclipse Zenoh's zenoh-python 1.10.2."""
    path = os.environ.get("WEFT_ZENOH_PYTHON")
    if not path:
        if os.environ.get("WEFT_REQUIRE_INTEROP"):
            pytest.fail("WEFT_ZENOH_PYTHON is not set")
        pytest.skip("WEFT_ZENOH_PYTHON (a Python with eclipse-zenoh 1.10.2) is not set")
    return path


class Node:
    """A node.py process: commands go to its stdin, events are read from its stdout."""

    def __init__(self, endpoint, zenoh, peer=False, listen=False):
        args = [zenoh_python(), str(NODE), "--zenoh"] if zenoh else [sys.executable, str(NODE)]
        if peer:
            args.append("--peer")
        if listen:
            args.append("--listen")
        self.endpoint = endpoint
        self.proc = subprocess.Popen(
            args + [endpoint],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.events = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.events.put(json.loads(line))
        self.events.put(None)

    def send(self, **cmd):
        """Sends a command and waits for its acknowledgement."""
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        self.wait(lambda e: e.get("ok") == cmd["op"])

    def wait(self, match, timeout=TIMEOUT):
        """The first event matching `match` (earlier ones are dropped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail("timed out waiting for the node")
            try:
                event = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if event is None:
                pytest.fail(f"the node exited ({self.proc.wait()})")
            if match(event):
                return event

    def info(self):
        """The node's id, transports and links, as its `info` command reports them."""
        self.proc.stdin.write(json.dumps({"op": "info"}) + "\n")
        self.proc.stdin.flush()
        return self.wait(lambda e: e.get("event") == "info")

    def poll(self, timeout):
        """The next event within `timeout` seconds, or None."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self):
        """Asks the node to quit, and waits for it."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=TIMEOUT)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def node(weftd):
    """Starts nodes of the router: node(zenoh=True) runs Eclipse Zenoh's zenoh-python."""
    nodes = []

    def start(zenoh):
        n = Node(weftd, zenoh)
        nodes.append(n)
        return n

    yield start
    for n in nodes:
        n.close()


def until(condition, attempt, timeout=TIMEOUT, every=0.05):
    """Calls `attempt()` until `condition()` holds (a declaration may take a moment to
    reach the router); returns what `condition()` gave."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        attempt()
        got = condition(every)
        if got:
            return got
    pytest.fail("timed out")
