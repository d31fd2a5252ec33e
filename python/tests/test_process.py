"""Whole programs: exiting with open sessions, Ctrl-C during recv(), logging."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conftest import TIMEOUT


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


def test_exit_while_a_callback_computes_in_python_does_not_abort(weftd):
    # The callback keeps the interpreter busy when the program ends. Python ends a thread
    # that wants the GIL back once finalisation has begun by unwinding it, which a weft
    # I/O thread cannot survive (the process aborted): exit interrupts such a callback
    # with SystemExit first.
    code = """
        import sys, threading, time, weft
        c = weft.Config()
        c.insert_json5("mode", '"client"')
        c.insert_json5("connect/endpoints", '["%s"]' % sys.argv[1])
        c.insert_json5("scouting/multicast/enabled", "false")
        s = weft.open(c)
        running = threading.Event()
        def busy(sample):
            running.set()
            t = time.monotonic()
            while time.monotonic() - t < 30:
                pass
        sub = s.declare_subscriber("x/busy", busy)
        pub = weft.open(c)
        while not running.is_set():
            pub.put("x/busy", "go")
            running.wait(0.1)
        print("running", flush=True)
    """
    started = time.monotonic()
    done = run_script(code, weftd, timeout=60)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert done.stdout.strip() == "running"
    assert "callback error" not in done.stderr, done.stderr
    assert time.monotonic() - started < 20


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
