"""The example programs (python/examples), each run with weft and with zenoh-python,
talking to each other through weftd; and type-checked (mypy --strict) against weft's
stubs."""

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import TIMEOUT, free_port, zenoh_python

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def command(name, impl, endpoint, *args):
    """The command line of an example run by `impl` ("weft" or "zenoh"): a client of
    `endpoint` ("tcp/..."), or a peer listening on it ("listen:tcp/...") or connecting to
    it ("connect:tcp/...")."""
    python = zenoh_python() if impl == "zenoh" else sys.executable
    flags = ["--zenoh"] if impl == "zenoh" else []
    role, _, address = endpoint.rpartition(":tcp/")
    if role == "listen":
        where = ["-m", "peer", "-l", "tcp/" + address]
    elif role == "connect":
        where = ["-m", "peer", "-e", "tcp/" + address]
    else:
        where = ["-m", "client", "-e", endpoint]
    return [python, str(EXAMPLES / name), *where, "--no-multicast-scouting", *flags, *args]


def interruptible():
    """Ctrl-C as in a terminal: a suite started in the background hands its children
    SIGINT ignored, and Python then installs no handler for it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Example:
    """An example program running in the background, its output lines in a queue."""

    def __init__(self, name, impl, endpoint, *args):
        self.proc = subprocess.Popen(
            command(name, impl, endpoint, *args),
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=interruptible,
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def line(self, timeout=TIMEOUT):
        """The next output line (None at the end), failing after `timeout`."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail("the example printed nothing in time")

    def interrupt(self):
        """Ctrl-C."""
        self.proc.send_signal(signal.SIGINT)

    def exit_code(self):
        """Waits for the end of the program."""
        return self.proc.wait(TIMEOUT)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def run_example(name, impl, endpoint, *args):
    """Runs an example to its end; returns its output."""
    done = subprocess.run(
        command(name, impl, endpoint, *args), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_until(name, impl, endpoint, wanted, *args):
    """Runs an example again and again until its output has the line `wanted` (what it
    answers depends on declarations that take a moment to reach the router)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        out = run_example(name, impl, endpoint, *args)
        if wanted in out.splitlines():
            return out
    pytest.fail(f"{name} never printed {wanted!r}")


def run_until_heard(watcher, name, impl, endpoint, *args, wait=0.2):
    """Runs an example again and again until `watcher` prints a line within `wait`
    seconds of a run (its declaration takes a moment to reach the other side); returns
    that line."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        run_example(name, impl, endpoint, *args)
        try:
            return watcher.lines.get(timeout=wait)
        except queue.Empty:
            continue
    pytest.fail(f"nothing heard from {name}")


PAIRS = [("weft", "zenoh"), ("zenoh", "weft"), ("weft", "weft")]


@pytest.fixture
def peers():
    """(endpoint of the first program, endpoint of the second): the first listens as a
    peer on a free 127.0.0.1 port, the second connects to it as a peer."""
    port = free_port()
    return f"listen:tcp/127.0.0.1:{port}", f"connect:tcp/127.0.0.1:{port}"


@pytest.mark.parametrize("listener,writer", PAIRS)
def test_put_delete_sub(weftd, listener, writer):
    sub = Example("z_sub.py", listener, weftd, "--key", "ex/**", "--count", "2")
    try:
        assert sub.line() == "Subscribed"
        first = run_until_heard(sub, "z_put.py", writer, weftd, "--key", "ex/a",
                                "--payload", "v")
        assert first == "SampleKind.PUT ex/a = v"
        run_example("z_delete.py", writer, weftd, "--key", "ex/a")
        assert sub.line() == "SampleKind.DELETE ex/a = "
        assert sub.line() is None and sub.exit_code() == 0
    finally:
        sub.stop()


@pytest.mark.parametrize("answerer,asker", PAIRS)
def test_get_queryable(weftd, answerer, asker):
    qable = Example("z_queryable.py", answerer, weftd, "--key", "ex/q", "--payload", "42")
    try:
        assert qable.line() == "Declared"
        run_until("z_get.py", asker, weftd, "reply ex/q = 42",
                  "--selector", "ex/q", "--timeout", "2")
        assert qable.line() == "query ex/q"
    finally:
        qable.stop()


@pytest.mark.parametrize("answerer,asker", PAIRS)
def test_querier_sends_its_parameters(weftd, answerer, asker):
    qable = Example("z_queryable.py", answerer, weftd, "--key", "ex/q/a", "--payload", "7")
    try:
        assert qable.line() == "Declared"
        args = ("--key", "ex/q/a", "--count", "2", "--period", "0", "--timeout", "2")
        run_until("z_querier.py", asker, weftd, "reply ex/q/a = 7", *args)
        # The queryable is known now: every query is answered.
        out = run_example("z_querier.py", asker, weftd, *args)
        assert out.splitlines() == [
            "query ex/q/a?n=0", "reply ex/q/a = 7", "query ex/q/a?n=1", "reply ex/q/a = 7"
        ]
        while (line := qable.line()) != "query ex/q/a?n=1":
            assert line == "query ex/q/a?n=0"
    finally:
        qable.stop()


@pytest.mark.parametrize("impl", ["weft", "zenoh"])
def test_pull_reads_a_ring(weftd, impl):
    pull = Example("z_pull.py", impl, weftd, "--key", "ex/**", "--size", "2",
                   "--interval", "0.2")
    try:
        assert pull.line() == "Subscribed"
        line = run_until_heard(pull, "z_pub.py", "weft", weftd, "--key", "ex/p", "--count", "5",
                               "--period", "0", wait=0.5)
        assert line.startswith("SampleKind.PUT ex/p = #")
        assert line.endswith("hello from Python")
    finally:
        pull.stop()


@pytest.mark.parametrize("holder,watcher", PAIRS)
def test_liveliness_token_seen_alive_then_dropped(weftd, holder, watcher):
    watch = Example("z_sub_liveliness.py", watcher, weftd, "--key", "group1/**", "--history",
                    "--count", "2")
    token = None
    try:
        # (With history, a token alive already may be told before "Subscribed".)
        assert watch.line() == "Subscribed"
        token = Example("z_liveliness.py", holder, weftd, "--key", "group1/a")
        assert token.line() == "token group1/a"
        assert watch.line() == "alive group1/a"
        run_until("z_get_liveliness.py", watcher, weftd, "alive group1/a",
                  "--key", "group1/**", "--timeout", "2")
        token.interrupt()
        assert token.line() == "undeclared"
        assert token.exit_code() == 0
        assert watch.line() == "dropped group1/a"
        assert watch.line() is None and watch.exit_code() == 0
        out = run_example("z_get_liveliness.py", watcher, weftd, "--key", "group1/**",
                          "--timeout", "1")
        assert out.splitlines() == ["alive on group1/**:"]
    finally:
        if token is not None:
            token.stop()
        watch.stop()


@pytest.mark.parametrize("server,client", PAIRS)
def test_storage_keeps_and_serves_the_latest_values(weftd, server, client):
    storage = Example("z_storage.py", server, weftd, "--key", "ex/s/**")
    try:
        assert storage.line() == "Storing"
        stored = run_until_heard(storage, "z_put.py", client, weftd, "--key", "ex/s/a",
                                 "--payload", "one")
        assert stored == "SampleKind.PUT ex/s/a"
        run_example("z_put.py", client, weftd, "--key", "ex/s/b", "--payload", "two")
        assert storage.line() == "SampleKind.PUT ex/s/b"
        run_example("z_put.py", client, weftd, "--key", "ex/s/a", "--payload", "three")
        assert storage.line() == "SampleKind.PUT ex/s/a"
        out = run_example("z_get.py", client, weftd, "--selector", "ex/s/**", "--timeout", "2")
        assert sorted(out.splitlines()[1:]) == ["reply ex/s/a = three", "reply ex/s/b = two"]
        run_example("z_delete.py", client, weftd, "--key", "ex/s/a")
        assert storage.line() == "SampleKind.DELETE ex/s/a"
        out = run_example("z_get.py", client, weftd, "--selector", "ex/s/**", "--timeout", "2")
        assert out.splitlines()[1:] == ["reply ex/s/b = two"]
    finally:
        storage.stop()


@pytest.mark.parametrize("ponger,pinger", PAIRS)
def test_ping_pong_measures_round_trips(weftd, ponger, pinger):
    pong = Example("z_pong.py", ponger, weftd)
    try:
        assert pong.line() == "Ready"
        out = run_example("z_ping.py", pinger, weftd, "--number", "50", "--warmup", "0.2")
        lines = out.splitlines()
        assert len(lines) == 51, out
        assert all(re.fullmatch(r"64 bytes: rtt=\d+ us, lat=\d+ us", line) for line in lines[:50])
        assert re.fullmatch(r"p50 rtt=\d+ us", lines[50])
    finally:
        pong.stop()


@pytest.mark.parametrize("receiver,sender", PAIRS)
def test_throughput_programs_count_every_round(weftd, receiver, sender):
    sub = Example("z_sub_thr.py", receiver, weftd, "--number", "2000", "--samples", "2")
    try:
        assert sub.line() == "Subscribed"
        pub = Example("z_pub_thr.py", sender, weftd, "--size", "8", "--number", "10000000")
        try:
            assert pub.line() == "publishing 8 B on test/thr"
            for _ in range(2):
                rate = sub.line()
                assert re.fullmatch(r"\d+ msg/s", rate), rate
                assert int(rate.split()[0]) > 0
            assert sub.line() is None and sub.exit_code() == 0
        finally:
            pub.stop()
    finally:
        sub.stop()


def test_info_names_the_router_as_zenoh_python_does(weftd):
    outputs = {impl: run_example("z_info.py", impl, weftd).splitlines()
               for impl in ("weft", "zenoh")}
    for impl, lines in outputs.items():
        assert re.fullmatch(r"zid: [0-9a-f]+", lines[0]), (impl, lines)
        assert re.fullmatch(r"routers: \['[0-9a-f]+'\]", lines[1]), (impl, lines)
        assert lines[2] == "peers: []", (impl, lines)
    # Both name the same router, the same way.
    assert outputs["weft"][1] == outputs["zenoh"][1]


@pytest.mark.parametrize("impl", ["weft", "zenoh"])
def test_scout_without_multicast_finds_nothing_and_ends(weftd, impl):
    out = run_example("z_scout.py", impl, weftd, "--timeout", "0.3")
    assert out.splitlines() == ["found 0"]


def test_examples_type_check_strictly():
    mypy = shutil.which("mypy", path=str(Path(sys.executable).parent)) or shutil.which("mypy")
    if mypy is None:
        pytest.fail("mypy is not installed (scripts/test.sh installs it)")
    done = subprocess.run(
        [mypy, "--strict", "--python-version", "3.9", "--no-incremental", "."],
        cwd=EXAMPLES,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, MYPY_CACHE_DIR=os.devnull),
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("listener,writer", PAIRS)
def test_peer_to_peer_put_and_sub(peers, listener, writer):
    first, second = peers
    sub = Example("z_sub.py", listener, first, "--key", "ex/**", "--count", "1")
    try:
        assert sub.line() == "Subscribed"
        got = run_until_heard(sub, "z_put.py", writer, second, "--key", "ex/a",
                              "--payload", "v")
        assert got == "SampleKind.PUT ex/a = v"
        assert sub.line() is None and sub.exit_code() == 0
    finally:
        sub.stop()


@pytest.mark.parametrize("answerer,asker", PAIRS)
def test_peer_to_peer_storage_answers_a_get(peers, answerer, asker):
    first, second = peers
    storage = Example("z_storage.py", answerer, first, "--key", "ex/s/**")
    try:
        assert storage.line() == "Storing"
        stored = run_until_heard(storage, "z_put.py", asker, second, "--key", "ex/s/a",
                                 "--payload", "one")
        assert stored == "SampleKind.PUT ex/s/a"
        # A new peer's get may leave before the storage's queryable reaches it.
        out = run_until("z_get.py", asker, second, "reply ex/s/a = one",
                        "--selector", "ex/s/**", "--timeout", "2")
        assert out.splitlines()[1:] == ["reply ex/s/a = one"]
    finally:
        storage.stop()


@pytest.mark.parametrize("holder,watcher", PAIRS)
def test_peer_to_peer_liveliness(peers, holder, watcher):
    first, second = peers
    token = Example("z_liveliness.py", holder, first, "--key", "group1/p")
    try:
        assert token.line() == "token group1/p"
        run_until("z_get_liveliness.py", watcher, second, "alive group1/p",
                  "--key", "group1/**", "--timeout", "2")
    finally:
        token.stop()


def test_bytes_serialises_as_zenoh_python_does():
    outputs = {}
    for impl in ("weft", "zenoh"):
        python = zenoh_python() if impl == "zenoh" else sys.executable
        flags = ["--zenoh"] if impl == "zenoh" else []
        done = subprocess.run([python, str(EXAMPLES / "z_bytes.py"), *flags],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        outputs[impl] = done.stdout
    assert outputs["weft"] == outputs["zenoh"]
    assert "[1, 2, 3] -> 03010000000200000003000000 -> [1, 2, 3]" in outputs["weft"]
