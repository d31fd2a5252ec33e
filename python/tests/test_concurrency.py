"""What must never deadlock: a full FIFO channel fed by a put holding the GIL, closing a
session while its callbacks run, a callback undeclaring its own subscriber, callbacks
publishing in turn, a callback waiting for the replies of a `get` its own link brings;
and a callback never runs on two threads at once."""

import json
import queue
import threading
import time

import weft
from conftest import TIMEOUT, free_port


def test_a_full_fifo_channel_makes_a_local_put_wait_for_the_reader(client):
    a = client()
    fifo = a.declare_subscriber("cf/**", weft.handlers.FifoChannel(2))
    got = []

    def reader():
        for s in fifo:
            got.append(s.payload.to_string())
            if len(got) == 50:
                return

    t = threading.Thread(target=reader)
    t.start()
    for i in range(50):
        a.put("cf/k", str(i))  # delivered in this thread to the session's own subscriber
    t.join(TIMEOUT)
    assert not t.is_alive()
    assert got == [str(i) for i in range(50)], "nothing dropped, in order"


def test_closing_a_session_while_its_callbacks_run(client):
    a, b = client(), client()
    calls = []
    running = threading.Event()

    def slow(sample):
        running.set()
        calls.append(sample)
        time.sleep(0.001)

    a.declare_subscriber("cc/**", slow)
    stop = threading.Event()

    def flood():
        while not stop.is_set():
            b.put("cc/k", "x", congestion_control=weft.CongestionControl.BLOCK)

    t = threading.Thread(target=flood, daemon=True)
    t.start()
    assert running.wait(TIMEOUT)
    started = time.monotonic()
    a.close()
    n = len(calls)
    assert time.monotonic() - started < 10
    stop.set()
    t.join(TIMEOUT)
    assert len(calls) == n, "no callback after close returned"


def test_a_callback_undeclares_its_own_subscriber(client):
    a = client()
    seen = queue.Queue()
    holder = {}

    def once(sample):
        seen.put(sample.payload.to_string())
        holder["sub"].undeclare()

    dropped = threading.Event()
    holder["sub"] = a.declare_subscriber("cu/**", weft.handlers.Callback(once, dropped.set))
    a.put("cu/k", "first")
    assert seen.get(timeout=TIMEOUT) == "first"
    # Undeclaring from its own thread does not wait for itself; drop comes once it ends.
    assert dropped.wait(TIMEOUT)
    holder["sub"].undeclare()  # again: nothing happens


def test_callbacks_publish_in_turn(client):
    a, b = client(), client()
    done = threading.Event()
    count = [0]

    def ping(sample):
        n = int(sample.payload.to_string())
        if n >= 200:
            done.set()
            return
        a.put("pp/pong", str(n + 1))

    def pong(sample):
        b.put("pp/ping", str(int(sample.payload.to_string()) + 1))
        count[0] += 1

    a.declare_subscriber("pp/ping", ping)
    b.declare_subscriber("pp/pong", pong)
    # Start (and restart until the subscriptions are in place at the router).
    deadline = time.monotonic() + TIMEOUT
    while not count[0] and time.monotonic() < deadline:
        b.put("pp/ping", "0")
        time.sleep(0.05)
    assert done.wait(TIMEOUT)


def test_a_callback_waits_for_replies_its_own_link_brings(client):
    # The sample and the replies come over the client's one link to the router: the
    # callback waiting for them must not hold that link.
    a, b = client(), client()
    b.declare_queryable("gl/q", lambda q: q.reply("gl/q", "answer"))
    answers = queue.Queue()

    def on_sample(_sample):
        answers.put([r.ok.payload.to_string() for r in a.get("gl/q", timeout=TIMEOUT)])

    a.declare_subscriber("gl/s", on_sample)
    deadline = time.monotonic() + TIMEOUT
    while answers.empty() and time.monotonic() < deadline:
        b.put("gl/s", "go")  # until the subscription is in place at the router
        time.sleep(0.1)
    assert answers.get(timeout=TIMEOUT) == ["answer"]
    while not answers.empty():
        answers.get()
    for _ in range(3):
        b.put("gl/s", "go")
        assert answers.get(timeout=TIMEOUT) == ["answer"]


def test_a_callback_never_runs_on_two_threads_at_once(client):
    # Samples from the network (run by weft's I/O thread) and from the session's own
    # puts (run by the callback's thread) reach one callback: one call at a time, each
    # source in order.
    a, b = client(), client()
    state = {"busy": False, "overlaps": 0}
    seen = {"a": [], "b": []}
    done = threading.Event()
    N = 300

    def on_sample(sample):
        if state["busy"]:
            state["overlaps"] += 1
        state["busy"] = True
        time.sleep(0)  # lets any other thread holding a call in
        source, n = sample.payload.to_string().split(":")
        seen[source].append(int(n))
        state["busy"] = False
        if len(seen["a"]) == N and len(seen["b"]) >= N:
            done.set()

    a.declare_subscriber("ov/**", on_sample)
    probe = b.declare_subscriber("ov/**", weft.handlers.FifoChannel(1024))
    deadline = time.monotonic() + TIMEOUT
    while probe.try_recv() is None and time.monotonic() < deadline:
        a.put("ov/probe", "b:-1")  # until both subscriptions are in place at the router
        time.sleep(0.05)
    seen["b"].clear()

    def flood():
        for i in range(N):
            b.put("ov/k", f"b:{i}", congestion_control=weft.CongestionControl.BLOCK)

    t = threading.Thread(target=flood)
    t.start()
    for i in range(N):
        a.put("ov/k", f"a:{i}", congestion_control=weft.CongestionControl.BLOCK)
    t.join(TIMEOUT)
    assert done.wait(TIMEOUT)
    assert state["overlaps"] == 0
    assert seen["a"] == list(range(N))
    assert [n for n in seen["b"] if n >= 0] == list(range(N))


def test_more_callbacks_wait_at_once_than_weft_has_spare_threads(client):
    # 80 sessions, each with a callback that waits for a sample of another subscriber
    # of its own session: every one of them completes (weft's I/O threads keep reading).
    K = 80
    sender = client()
    done = queue.Queue()
    held = []
    for i in range(K):
        s = client()
        fifo = s.declare_subscriber(f"mw/b/{i}", weft.handlers.FifoChannel(4))

        def wait_for_b(_sample, fifo=fifo, i=i):
            fifo.recv()
            done.put(i)

        s.declare_subscriber(f"mw/a/{i}", wait_for_b)
        probe = s.declare_subscriber(f"mw/p/{i}", weft.handlers.FifoChannel(4))
        held.append((s, fifo, probe))
    deadline = time.monotonic() + TIMEOUT
    for i, (_, _, probe) in enumerate(held):
        while probe.try_recv() is None:  # until the session's subscriptions are known
            assert time.monotonic() < deadline
            sender.put(f"mw/p/{i}", "?")
            time.sleep(0.01)
    for i in range(K):
        sender.put(f"mw/a/{i}", "wait")
    for i in range(K):
        sender.put(f"mw/b/{i}", "go")
    assert sorted(done.get(timeout=TIMEOUT) for _ in range(K)) == list(range(K))


def test_no_call_after_a_callback_undeclares_its_own_subscriber():
    # Two peers, so that a burst comes in few reads: the first sample's call undeclares
    # the subscriber while the others already wait for it; none of them is handed over.
    endpoint = f"tcp/127.0.0.1:{free_port()}"

    def peer(role):
        c = weft.Config()
        c.insert_json5("mode", '"peer"')
        c.insert_json5("scouting/multicast/enabled", "false")
        c.insert_json5(f"{role}/endpoints", json.dumps([endpoint]))
        return weft.open(c)

    a = peer("listen")
    b = peer("connect")
    try:
        calls = []
        holder = {}
        dropped = threading.Event()

        def once(sample):
            calls.append(sample)
            holder["sub"].undeclare()

        holder["sub"] = a.declare_subscriber("nc/k/*", weft.handlers.Callback(once, dropped.set))
        everything = a.declare_subscriber("nc/**", weft.handlers.FifoChannel(4096))
        deadline = time.monotonic() + TIMEOUT
        while everything.try_recv() is None:  # until b knows a's subscribers
            assert time.monotonic() < deadline
            b.put("nc/probe", "?")
            time.sleep(0.05)
        for i in range(2000):
            b.put("nc/k/x", str(i), congestion_control=weft.CongestionControl.BLOCK)
        last = None
        while last != "1999":
            last = everything.recv().payload.to_string()
        assert dropped.wait(TIMEOUT)
        assert len(calls) == 1
    finally:
        b.close()
        a.close()
