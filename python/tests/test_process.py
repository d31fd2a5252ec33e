"""Whole programs: exiting with open sessions, Ctrl-C during recv(), and the examples
run with weft and with zenoh-python."""

import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conftest import TIMEOUT, zenoh_python

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run_script(code, *args, timeout=60):
    """Runs `code` with this interpreter; returns the finished process."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_exit_with_200_open_sessions_does_not_hang(weftd):
    code = """
        import sys, threading, weft
        c = weft.Config()
        c.insert_json5("mode", '"client"')
        c.insert_json5("connect/endpoints", '["%s"]' % sys.argv[1])
        c.insert_json5("scouting/multicast/enabled", "false")
        kept = []
        for i in range(200):
            s = weft.open(c)
            kept.append((s, s.declare_subscriber("x/**", lambda s: None),
                         s.declare_subscriber("x/**"),
                         s.declare_queryable("x/**", lambda q: q.reply(q.key_expr, "a")),
                         s.declare_publisher("x/p")))
        def flood():
            while True:
                kept[0][0].put("x/y", "z")
        threading.Thread(target=flood, daemon=True).start()
        print("open", flush=True)
    """
    started = time.monotonic()
    done = run_script(code, weftd, timeout=90)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "open"
    assert time.monotonic() - started < 60


def test_ctrl_c_interrupts_a_blocking_recv(weftd):
    code = """
        import os, signal, sys, threading, weft
        # As in a program started from a terminal: a test suite run in the background
        # inherits SIGINT ignored, and Python then installs no handler for it.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        c = weft.Config()
        c.insert_json5("mode", '"client"')
        c.insert_json5("connect/endpoints", '["%s"]' % sys.argv[1])
        c.insert_json5("scouting/multicast/enabled", "false")
        s = weft.open(c)
        sub = s.declare_subscriber("never/**")
        try:
            print("waiting", flush=True)
            sub.recv()
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), weftd],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "waiting"
    wait_until_sleeping(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=TIMEOUT)
    assert out.strip() == "interrupted" and proc.returncode == 0


def wait_until_sleeping(pid):
    """Returns once the main thread of process `pid` sleeps (blocked in a wait)."""
    deadline = time.monotonic() + TIMEOUT
    stat = Path(f"/proc/{pid}/stat")
    while time.monotonic() < deadline:
        if stat.read_text().rsplit(")", 1)[1].split()[0] == "S":
            return
        time.sleep(0.01)
    pytest.fail("the program never blocked")


class Example:
    """An example program running in the background, its output lines in a queue."""

    def __init__(self, name, impl, endpoint, *args):
        python = zenoh_python() if impl == "zenoh" else sys.executable
        flags = ["--zenoh"] if impl == "zenoh" else []
        self.proc = subprocess.Popen(
            [python, str(EXAMPLES / name), "-m", "client", "-e", endpoint,
             "--no-multicast-scouting", *flags, *args],
            stdout=subprocess.PIPE,
            text=True,
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

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def run_example(name, impl, endpoint, *args):
    """Runs an example to its end; returns its output."""
    python = zenoh_python() if impl == "zenoh" else sys.executable
    flags = ["--zenoh"] if impl == "zenoh" else []
    done = subprocess.run(
        [python, str(EXAMPLES / name), "-m", "client", "-e", endpoint,
         "--no-multicast-scouting", *flags, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


PAIRS = [("weft", "zenoh"), ("zenoh", "weft"), ("weft", "weft")]


@pytest.mark.parametrize("listener,writer", PAIRS)
def test_examples_put_delete_sub(weftd, listener, writer):
    sub = Example("z_sub.py", listener, weftd, "--key", "ex/**", "--count", "2")
    try:
        assert sub.line() == "Subscribed"
        # The subscription reaches the router shortly after: put until it is seen.
        while True:
            run_example("z_put.py", writer, weftd, "--key", "ex/a", "--payload", "v")
            try:
                first = sub.lines.get(timeout=0.2)
                break
            except queue.Empty:
                continue
        assert first == "SampleKind.PUT ex/a = v"
        run_example("z_delete.py", writer, weftd, "--key", "ex/a")
        assert sub.line() == "SampleKind.DELETE ex/a = "
        assert sub.line() is None and sub.proc.wait(TIMEOUT) == 0
    finally:
        sub.stop()


@pytest.mark.parametrize("answerer,asker", PAIRS)
def test_examples_get_queryable(weftd, answerer, asker):
    qable = Example("z_queryable.py", answerer, weftd, "--key", "ex/q", "--payload", "42")
    try:
        assert qable.line() == "Declared"
        while True:
            out = run_example("z_get.py", asker, weftd, "--selector", "ex/q", "--timeout", "2")
            if "reply " in out:
                break
        assert "reply ex/q = 42" in out.splitlines()
        assert qable.line() == "query ex/q"
    finally:
        qable.stop()


@pytest.mark.parametrize("impl", ["weft", "zenoh"])
def test_example_pull_reads_a_ring(weftd, impl):
    pull = Example("z_pull.py", impl, weftd, "--key", "ex/**", "--size", "2",
                   "--interval", "0.2")
    try:
        assert pull.line() == "Subscribed"
        while True:
            run_example("z_pub.py", "weft", weftd, "--key", "ex/p", "--count", "5",
                        "--period", "0")
            try:
                line = pull.lines.get(timeout=0.5)
                break
            except queue.Empty:
                continue
        assert line.startswith("SampleKind.PUT ex/p = #")
        assert line.endswith("hello from Python")
    finally:
        pull.stop()


def test_log_goes_to_stderr_at_the_level_asked(weftd):
    code = """
        import sys, weft
        weft.init_log_from_env_or("error")
        c = weft.Config()
        c.insert_json5("mode", '"client"')
        c.insert_json5("connect/endpoints", '["%s"]' % sys.argv[1])
        c.insert_json5("scouting/multicast/enabled", "false")
        weft.open(c).close()
    """
    quiet = run_script(code, weftd)
    assert quiet.returncode == 0 and quiet.stderr == ""
    env = dict(os.environ, RUST_LOG="info")
    loud = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), weftd],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert loud.returncode == 0
    # weft's own log lines, naming the router's link.
    assert "INFO weft::" in loud.stderr and weftd in loud.stderr
