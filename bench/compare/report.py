#!/usr/bin/env python3
"""Turns the measurements of bench/run.sh into Markdown tables, prints them, and replaces the
"Peer to peer" and "Routed" sections of bench/RESULTS.md with them (other sections are kept
as they are)."""

import argparse
import re
import sys

SIZES = [8, 64, 1024, 8192, 65536, 1048576]
SECTIONS = ("Peer to peer", "Routed")
# Gaps smaller than this (in %) are reported as within run-to-run variation: consecutive runs
# at low load on the 2-core machine moved most points by more than that.
NOISE_PCT = 5


def size_name(n):
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k} {unit}"
    return f"{n} B"


def num(v):
    if v is None:
        return "–"
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.1f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}×"


def load(path):
    thr, lat, mem = {}, {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 5:
                continue
            topo, kind, system, size = parts[0], parts[1], parts[2], int(parts[3])
            values = [None if v == "-" else float(v) for v in parts[4:]]
            if kind == "thr":
                thr[(topo, system, size)] = values[0]
            elif kind == "lat":
                lat[(topo, system)] = (values[0], values[1])
            elif kind in ("rss", "hwm"):
                mem[(kind, system)] = values
    return thr, lat, mem


def header(a, what):
    return [
        f"Measured by `{a.command}` on {a.date}: {a.cpu}, {a.cores} cores, Linux {a.kernel}, "
        f"{a.rustc}; weft at commit `{a.weft_rev}`, Eclipse Zenoh 1.10.2 (the `zenoh` crate with "
        "only the `transport_tcp` feature; `zenohd` from `cargo install zenohd --version 1.10.2 "
        "--locked`, its default features).",
        "",
        f"Load average (1, 5, 15 min) before measuring: {a.load_before}; after the peer-to-peer "
        f"runs: {a.load_mid}; at the end: {a.load_after}. The benchmark itself keeps both cores "
        "busy, so the figures after it include its own load.",
        "",
        what,
        "",
    ]


def thr_table(thr, topo, systems, labels, tcp_topo="peer"):
    names = [labels[s] for s in systems]
    cols = ["Payload"] + [f"{n} msg/s" for n in names] + ["weft/Zenoh"]
    cols += [f"{s if s == 'weft' else 'Zenoh'}/raw TCP" for s in systems if s != "tcp"]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for size in SIZES:
        vals = {s: thr.get((topo, s, size)) for s in systems}
        tcp = thr.get((tcp_topo, "tcp", size))
        row = [size_name(size)] + [num(vals[s]) for s in systems]
        row.append(ratio(vals.get("weft"), vals.get("zenoh")))
        row += [ratio(vals[s], tcp) for s in systems if s != "tcp"]
        out.append("| " + " | ".join(row) + " |")
    return out


def lat_table(lat, topo, systems, labels):
    names = [labels[s] for s in systems]
    cols = ["64 B, one way"] + [f"{n} µs" for n in names] + ["weft/Zenoh"]
    cols += [f"{s if s == 'weft' else 'Zenoh'}/raw TCP" for s in systems if s != "tcp"]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    tcp = lat.get(("peer", "tcp"), (None, None))
    for i, name in enumerate(("p50", "p99")):
        vals = {s: lat.get((topo, s), (None, None))[i] for s in systems}
        row = [name] + ["–" if vals[s] is None else f"{vals[s]:.1f}" for s in systems]
        row.append(ratio(vals.get("weft"), vals.get("zenoh")))
        row += [ratio(vals[s], tcp[i]) for s in systems if s != "tcp"]
        out.append("| " + " | ".join(row) + " |")
    return out


def slower(thr, lat, topo):
    """Sentences on where weft is behind Zenoh."""
    items = []

    def noise(pct):
        return " (within run-to-run variation)" if pct < NOISE_PCT else ""

    for size in SIZES:
        w, z = thr.get((topo, "weft", size)), thr.get((topo, "zenoh", size))
        if w is not None and z is not None and w < z:
            pct = 100 * (1 - w / z)
            items.append(f"{size_name(size)} throughput {pct:.0f} % lower{noise(pct)}")
    wl, zl = lat.get((topo, "weft")), lat.get((topo, "zenoh"))
    if wl and zl:
        for i, name in enumerate(("p50", "p99")):
            if None not in (wl[i], zl[i]) and wl[i] > zl[i]:
                pct = 100 * (wl[i] / zl[i] - 1)
                items.append(f"64 B {name} latency {pct:.0f} % higher{noise(pct)}")
    if not items:
        return "weft is ahead of Zenoh or level with it on every point of this table."
    return (
        "Where weft is behind Zenoh: " + "; ".join(items) + ". See \"Where the time goes\" "
        "below for a profile."
    )


def peer_section(a, thr, lat):
    labels = {"weft": "weft", "zenoh": "Zenoh", "tcp": "raw TCP"}
    systems = ["weft", "zenoh", "tcp"]
    lines = header(
        a,
        "Two processes on TCP loopback: the subscriber (or pong) listens, the publisher (or "
        "ping) connects, both in peer mode with multicast scouting off (`weft sub-thr`/"
        "`pub-thr`/`ping`/`pong` against `zsub_thr`/`zpub_thr`/`zping`/`zpong` from "
        "bench/compare, which use Zenoh's API the way its z_sub_thr/z_pub_thr/z_ping/z_pong "
        "examples do). Throughput: messages received per second on `test/thr` (congestion "
        f"control block), the median of {a.rounds} rounds after the first message. Latency: "
        f"64 B samples on `test/ping`, echoed on `test/pong` (express, block), {a.ping_samples} "
        "round trips after 100 warm-up ones, one way = round trip / 2; p50 and p99 are each the "
        f"median over {a.lat_runs} runs with fresh processes. Raw TCP: `tcp_thr` "
        "streams length-prefixed messages through 256 KiB buffered writes and reads them one "
        "by one; `tcp_pingpong` sends one length-prefixed message at a time with TCP_NODELAY "
        "on blocking sockets: the physical limit of the machine. Throughput ratios above 1 "
        "mean faster; latency ratios below 1 mean faster.",
    )
    lines += thr_table(thr, "peer", systems, labels) + [""]
    lines += lat_table(lat, "peer", systems, labels) + [""]
    lines += [slower(thr, lat, "peer"), ""]
    return lines


def routed_section(a, thr, lat, mem):
    labels = {"weft": "weft (weftd)", "zenoh": "Zenoh (zenohd)"}
    systems = ["weft", "zenoh"]
    build = ""
    if a.zenohd_build:
        fields = dict(kv.split("=", 1) for kv in a.zenohd_build.split() if "=" in kv)
        if "seconds" in fields:
            secs = int(fields["seconds"])
            build = (
                f" Building zenohd {ZV} took {secs // 60} min {secs % 60} s"
                f" on {fields.get('date', 'this machine')}"
                + (f" (load average {fields['load1']})" if "load1" in fields else "")
                + "."
            )
    lines = header(
        a,
        "Publisher and subscriber (ping and pong) are both clients (`-m client`) of one router "
        "on TCP loopback, `weftd -l tcp/127.0.0.1:PORT --no-multicast-scouting` or `zenohd -l "
        "tcp/127.0.0.1:PORT --no-multicast-scouting`, started once for all of its system's "
        "points, on its defaults (both routers add a timestamp to the data they route); the same programs and settings as peer to peer. The raw TCP columns compare "
        "with the direct (peer-to-peer) raw TCP figures, as the limit a routed path could "
        "reach." + build,
    )
    lines += thr_table(thr, "routed", systems, labels) + [""]
    lines += lat_table(lat, "routed", systems, labels) + [""]
    lines += [slower(thr, lat, "routed"), ""]

    def kib(v):
        return "–" if v is None else f"{v / 1024:.1f} MiB"

    rw, rz = mem.get(("rss", "weft"), [None])[0], mem.get(("rss", "zenoh"), [None])[0]
    hw, hz = mem.get(("hwm", "weft"), [None]), mem.get(("hwm", "zenoh"), [None])
    lines += [
        "Router memory, from `/proc/PID/status`: at rest is VmRSS one second after the router "
        "listens, before any client; peak is VmHWM after all of the routed runs above.",
        "",
        "| Router memory | weftd | zenohd | weftd/zenohd |",
        "|---|---|---|---|",
        f"| at rest (VmRSS) | {kib(rw)} | {kib(rz)} | {ratio(rw, rz)} |",
        f"| peak over the routed runs (VmHWM) | {kib(hw[0])} | {kib(hz[0])} | {ratio(hw[0], hz[0])} |",
        "",
    ]
    return lines


ZV = "1.10.2"


def splice(text, title, body):
    """Replaces section `## title` (up to the next `## ` heading) with body, or appends it."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if l.strip() == f"## {title}"), None)
    new = [f"## {title}", ""] + body
    if start is None:
        while lines and lines[-1] == "":
            lines.pop()
        return "\n".join(lines + [""] + new)
    end = next(
        (i for i in range(start + 1, len(lines)) if re.match(r"^## ", lines[i])), len(lines)
    )
    after = lines[end:]
    return "\n".join(lines[:start] + new + after)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    for name in (
        "results", "markdown", "command", "date", "cpu", "cores", "kernel", "rustc",
        "weft-rev", "load-before", "load-mid", "load-after", "rounds", "ping-samples", "lat-runs",
    ):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--write", default="1")
    p.add_argument("--zenohd-build", default="")
    a = p.parse_args()
    thr, lat, mem = load(a.results)
    peer = peer_section(a, thr, lat)
    routed = routed_section(a, thr, lat, mem)
    print("## Peer to peer\n\n" + "\n".join(peer))
    print("## Routed\n\n" + "\n".join(routed))
    if a.write == "1":
        with open(a.markdown, encoding="utf-8") as f:
            text = f.read()
        text = splice(text, SECTIONS[0], peer)
        text = splice(text, SECTIONS[1], routed)
        if not text.endswith("\n"):
            text += "\n"
        with open(a.markdown, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {a.markdown}", file=sys.stderr)


if __name__ == "__main__":
    main()
