#!/usr/bin/env python3
"""Turns bench/compare.sh's results.csv (and meta.json) into one self-contained HTML page:
inline SVG plots (throughput in msg/s and Gb/s, round-trip p50 and p99, against payload on
log axes), the tables behind them, where weft loses, a requirement table, and the exact
settings of every system. Standard library only; nothing is fetched when the page is read.

Usage: html_report.py --csv results.csv [--meta meta.json] --out report.html
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

COLUMNS = ["system", "topology", "test", "payload", "value", "unit", "min", "max", "reps"]
COLORS = {
    "weft": "#d62728", "weft-pico": "#ff7f0e", "zenoh": "#1f77b4", "zeromq": "#2ca02c",
    "redis": "#9467bd", "mqtt": "#8c564b", "dds": "#e377c2", "tcp": "#7f7f7f",
}
# Requirements of the robot-net scenario (docs/compare.md says where each figure comes from).
REQ_LAT_P99_US = 1000.0
REQ_LAT_P50_US = 100.0
REQ_RATE_HZ = 10000.0


def load_rows(path: Path) -> list[dict]:
    """The rows of results.csv, numbers parsed; raises ValueError on a wrong header."""
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r, None)
        if header != COLUMNS:
            raise ValueError(f"{path}: header {header}, expected {COLUMNS}")
        rows = []
        for line in r:
            if not line:
                continue
            d = dict(zip(COLUMNS, line))
            for k in ("value", "min", "max"):
                d[k] = float(d[k])
            d["payload"] = int(d["payload"])
            d["reps"] = int(d["reps"])
            rows.append(d)
    return rows


def series_key(row: dict) -> str:
    return f"{row['system']} {row['topology']}"


def esc(x) -> str:
    return html.escape(str(x))


def fmt_size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def fmt_num(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 1e6:
        return f"{x / 1e6:.3g} M"
    if abs(x) >= 1e4:
        return f"{x / 1e3:.3g} k"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}"


# ---- SVG ---------------------------------------------------------------------------------

def log_ticks(lo: float, hi: float) -> list[float]:
    """Powers of ten (and, over a narrow span, 2 and 5 times them) from lo to hi."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    ticks = [10.0 ** e for e in range(a, b + 1)]
    if b - a <= 2:
        ticks = sorted(t * m for t in ticks for m in (1, 2, 5))
    return [t for t in ticks if lo <= t <= hi] or [lo, hi]


def svg_plot(title: str, series: dict[str, list[tuple[float, float]]], xlabel: str,
             ylabel: str, xfmt=fmt_size, yfmt=fmt_num) -> str:
    """A line plot on log-log axes, one line per series, the legend on the right."""
    # Tall enough for the legend: one line of 17 px per series.
    w, h = 760, max(400, 30 + 14 + 17 * len(series) + 10)
    left, right, top, bottom = 70, 200, 30, 50
    pts = [(x, y) for s in series.values() for x, y in s if x > 0 and y > 0]
    out = [f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" role="img" aria-label="{esc(title)}">',
           f'<text x="{left}" y="18" font-weight="bold">{esc(title)}</text>']
    if not pts:
        return (f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{w}" height="44" '
                f'role="img" aria-label="{esc(title)}"><text x="{left}" y="18" '
                f'font-weight="bold">{esc(title)}</text><text x="{left}" y="38">no data</text>'
                '</svg>')
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if x0 == x1:
        x0, x1 = x0 / 2, x1 * 2
    if y0 == y1:
        y0, y1 = y0 / 2, y1 * 2
    y0, y1 = 10 ** math.floor(math.log10(y0)), 10 ** math.ceil(math.log10(y1))
    pw, ph = w - left - right, h - top - bottom

    def px(x):
        return left + (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) * pw

    def py(y):
        return top + ph - (math.log10(y) - math.log10(y0)) / (math.log10(y1) - math.log10(y0)) * ph

    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
    for t in sorted(set(xs)):
        out.append(f'<line x1="{px(t):.1f}" y1="{top}" x2="{px(t):.1f}" y2="{top + ph}" '
                   f'stroke="#eee"/><text x="{px(t):.1f}" y="{top + ph + 16}" '
                   f'text-anchor="middle" font-size="11">{esc(xfmt(t))}</text>')
    for t in log_ticks(y0, y1):
        out.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{left + pw}" y2="{py(t):.1f}" '
                   f'stroke="#eee"/><text x="{left - 6}" y="{py(t) + 4:.1f}" text-anchor="end" '
                   f'font-size="11">{esc(yfmt(t))}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{h - 8}" text-anchor="middle" '
               f'font-size="12">{esc(xlabel)}</text>')
    out.append(f'<text transform="translate(14,{top + ph / 2}) rotate(-90)" '
               f'text-anchor="middle" font-size="12">{esc(ylabel)}</text>')
    for i, (name, s) in enumerate(sorted(series.items())):
        s = sorted((x, y) for x, y in s if x > 0 and y > 0)
        if not s:
            continue
        system, _, topo = name.partition(" ")
        color = COLORS.get(system, "#000")
        pinned = topo.endswith("-pinned")
        topo = topo.removesuffix("-pinned")
        dash = {"p2p": "", "broker-qos1": ' stroke-dasharray="2 3"'}.get(
            topo, ' stroke-dasharray="6 3"')
        # Every process on one core: the same line, thinner and lighter.
        width = (3 if system == "weft" else 1.6) * (0.5 if pinned else 1)
        if pinned:
            dash += ' stroke-opacity="0.6"'
        d = " ".join(f"{'M' if j == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for j, (x, y) in enumerate(s))
        out.append(f'<path class="series" data-series="{esc(name)}" d="{d}" fill="none" '
                   f'stroke="{color}" stroke-width="{width}"{dash}/>')
        for x, y in s:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{color}">'
                       f'<title>{esc(name)}, {esc(xfmt(x))}: {esc(fmt_num(y))}</title></circle>')
        ly = top + 14 + i * 17
        out.append(f'<line x1="{w - right + 12}" y1="{ly - 4}" x2="{w - right + 36}" '
                   f'y2="{ly - 4}" stroke="{color}" stroke-width="{width}"{dash}/>'
                   f'<text x="{w - right + 42}" y="{ly}" font-size="12">{esc(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)


# ---- tables ------------------------------------------------------------------------------

def by(rows, test, unit_prefix=""):
    """{series: {payload: row}} of one test (and unit prefix)."""
    d: dict[str, dict[int, dict]] = defaultdict(dict)
    for r in rows:
        if r["test"] == test and r["unit"].startswith(unit_prefix):
            d[series_key(r)][r["payload"]] = r
    return d


def table(title: str, data: dict[str, dict[int, dict]], unit: str, fmt=fmt_num,
          extra=None) -> str:
    if not data:
        return ""
    payloads = sorted({p for s in data.values() for p in s})
    out = [f"<h3>{esc(title)}</h3>", '<table><tr><th>system</th>']
    out += [f"<th>{esc(fmt_size(p))}</th>" for p in payloads]
    out.append("</tr>")
    for name in sorted(data):
        out.append(f"<tr><td>{esc(name)}</td>")
        for p in payloads:
            r = data[name].get(p)
            if r is None:
                out.append("<td>-</td>")
                continue
            tip = f"min {fmt(r['min'])}, max {fmt(r['max'])}, {r['reps']} reps"
            cell = fmt(r["value"])
            if extra:
                cell += extra(r)
            out.append(f'<td title="{esc(tip)}">{esc(cell)}</td>')
        out.append("</tr>")
    out.append(f"</table><p class=note>{esc(unit)}; hover a cell for min, max and "
               "repetitions.</p>")
    return "\n".join(out)


def losses(rows: list[dict]) -> str:
    """Where another system beats weft (its better topology at each point), per workload."""
    checks = [("thr", "msg/s", True, "throughput"), ("rtt_p50", "us", False, "round trip p50"),
              ("rtt_p99", "us", False, "round trip p99"),
              ("wire_bytes", "B/msg", False, "wire bytes per message")]
    items = []
    for test, unit, higher, label in checks:
        pts: dict[int, dict[str, float]] = defaultdict(dict)
        for r in rows:
            if r["test"] == test:
                pts[r["payload"]][series_key(r)] = r["value"]
        for p in sorted(pts):
            weft = {k: v for k, v in pts[p].items() if k.startswith("weft ")}
            if not weft:
                continue
            best_name = (max if higher else min)(weft, key=weft.get)
            best = weft[best_name]
            better = sorted(((k, v) for k, v in pts[p].items()
                             if not k.startswith("weft ") and (v > best if higher else v < best)),
                            key=lambda kv: -kv[1] if higher else kv[1])
            if better:
                who = ", ".join(f"{k} {fmt_num(v)}" for k, v in better)
                items.append(f"<li>{esc(label)} at {esc(fmt_size(p))}: weft's best "
                             f"({esc(best_name)}) {esc(fmt_num(best))} {esc(unit)}; better: "
                             f"{esc(who)}</li>")
    if not items:
        return "<p>No measured point where another system beats weft's better topology.</p>"
    return "<ul>" + "\n".join(items) + "</ul>"


def is_weft(series: str) -> bool:
    """weft itself (peer to peer or routed), not weft-pico."""
    return series.startswith("weft ")


def meaning(rows: list[dict], test: str, higher: bool, what: str, unit: str,
            unit_prefix: str = "") -> str:
    """What one figure says, in sentences made from its figures: at how many of the
    measured payloads weft's better topology leads the other middleware (raw TCP, the
    machine's limit, and weft-pico, weft's own client, apart), and at the smallest and largest payload weft's best against
    the best of the others and against raw TCP. Empty when weft or the others were not
    measured."""
    data = by(rows, test, unit_prefix)
    payloads = sorted({p for d in data.values() for p in d})
    compared = []
    for p in payloads:
        pts = {k: d[p]["value"] for k, d in data.items() if p in d}
        ranked = sorted(pts, key=pts.get, reverse=higher)
        weft = [k for k in ranked if is_weft(k)]
        # weft-pico is weft's own client: neither weft nor one of the others.
        others = [k for k in ranked if not k.startswith(("weft", "tcp "))]
        tcp = [k for k in ranked if k.startswith("tcp ")]
        if weft and others:
            compared.append((p, pts, weft[0], others[0], tcp[0] if tcp else None))
    if not compared:
        return ""

    def times(w: float, o: float) -> str:
        if higher:
            return f"{w / o:.2f}× as {what}" if o else "?"
        return f"{o / w:.2f}× as {what}" if w else "?"

    leads = [p for p, pts, w, o, _ in compared
             if (pts[w] > pts[o] if higher else pts[w] < pts[o])]
    trails = [p for p, *_ in compared if p not in leads]
    out = [f"weft leads the other middleware at {len(leads)} of the {len(compared)} payloads "
           "where both were measured"]
    if trails:
        out[0] += " and trails at " + ", ".join(fmt_size(p) for p in trails)
    out[0] += "."
    ends = [compared[0]] if len(compared) == 1 else [compared[0], compared[-1]]
    for p, pts, w, o, tcp in ends:
        sentence = (f"At {fmt_size(p)}, {w} {fmt_num(pts[w])} {unit} against "
                    f"{fmt_num(pts[o])} for {o}, the best of the others (weft "
                    f"{times(pts[w], pts[o])})")
        if tcp:
            sentence += (f"; raw TCP {fmt_num(pts[tcp])} (weft {times(pts[w], pts[tcp])})")
        out.append(sentence + ".")
    return " ".join(out)


def meaning_html(text: str) -> str:
    return f"<p class=means><b>What this means:</b> {esc(text)}</p>" if text else ""


REQ_HEADERS = ["one-way p99 < 1 ms", "one-way p50 < 0.1 ms", "> 10 kHz", "events undelayed"]


def requirement_verdicts(rows: list[dict], meta: dict) -> list[tuple[str, list, str]]:
    """Pass/fail per system against the robot-net requirements: one-way latency p99 under
    1 ms and p50 under 0.1 ms, more than 10 kHz, priority events undelayed. For every
    system, from half the round trip at 64 B (or the smallest payload) and the throughput at
    the smallest payload (events: not measured); for a system with a robot-net run, a second
    row from it (the worst of its streams; 10 kHz met when no sample was lost; events
    undelayed when their p99 is no worse than the state samples'). Returns (series, [(class, text, note)] in REQ_HEADERS' order, source) per series; class
    is pass, fail or na."""
    lat50 = by(rows, "lat_p50")
    rtt50 = by(rows, "rtt_p50")
    rtt99 = by(rows, "rtt_p99")
    thr = by(rows, "thr")
    streams: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if r["test"] in ("lat_p50", "lat_p99"):
            streams[series_key(r)][r["unit"].split(" ", 1)[-1]][r["test"]] = r["value"]
    robot = {f"{m['system']} {m['topology']}": m for m in meta.get("robotnet", [])}
    names = sorted(set(rtt50) | set(thr) | set(lat50))

    def small(d: dict[int, dict]):
        """64 B if measured, else the smallest payload."""
        return 64 if 64 in d else (min(d) if d else None)

    def verdict(ok: bool, text: str, note: str):
        return ("pass" if ok else "fail", ("pass" if ok else "FAIL") + f" ({text})", note)

    def cell(value, limit, below, note):
        if value is None:
            return ("na", "not measured", note)
        return verdict(value < limit if below else value > limit, fmt_num(value), note)

    out = []
    for n in names:
        # The same basis for every system: the ping-pong and the throughput runs.
        if n in rtt50 or n in thr:
            p = small(rtt50.get(n, {}))
            p50 = rtt50[n][p]["value"] / 2 if p is not None else None
            p99 = rtt99.get(n, {}).get(p, {}).get("value") if p is not None else None
            p99 = p99 / 2 if p99 is not None else None
            src = f"half the round trip at {fmt_size(p)} (µs)" if p is not None else ""
            rate = rate_note = None
            if n in thr:
                p0 = min(thr[n])
                rate, rate_note = thr[n][p0]["value"], f"msg/s at {fmt_size(p0)}"
                src += f"; throughput at {fmt_size(p0)}"
            out.append((n, [cell(p99, REQ_LAT_P99_US, True, src),
                            cell(p50, REQ_LAT_P50_US, True, src),
                            cell(rate, REQ_RATE_HZ, False, rate_note or ""),
                            ("na", "not measured (no robot-net run)", "")], src))
        # The robot net, where it ran: ten nodes at 10 kHz at once.
        if n in lat50 and streams.get(n):
            st = streams[n]
            p50 = max(x.get("lat_p50", 0) for x in st.values())
            p99 = max(x.get("lat_p99", 0) for x in st.values())
            src = "robot-net run: one-way latency, the worst stream (µs)"
            m = robot.get(n)
            if m:
                lost = sum(x["sent"] - x["received"] for x in m["streams"].values())
                rate_cell = verdict(lost == 0, f"{lost} lost", "every stream at 10 kHz")
            else:
                rate_cell = ("na", "not measured", "")
            events = ("na", "not measured", "")
            ev, sp = st.get("event", {}).get("lat_p99"), st.get("state", {}).get("lat_p99")
            if ev is not None and sp is not None:
                events = verdict(ev <= sp, f"{fmt_num(ev)} against {fmt_num(sp)}",
                                 "event p99 against state p99, µs")
            out.append((f"{n}, robot net", [cell(p99, REQ_LAT_P99_US, True, src),
                                            cell(p50, REQ_LAT_P50_US, True, src), rate_cell,
                                            events], src))
    return out


def requirements(rows: list[dict], meta: dict) -> str:
    """The requirement table, in HTML (see requirement_verdicts)."""
    out = ["<table><tr><th>system</th>" + "".join(f"<th>{esc(h)}</th>" for h in REQ_HEADERS)
           + "<th>from</th></tr>"]
    for n, cells, src in requirement_verdicts(rows, meta):
        out.append(f"<tr><td>{esc(n)}</td>" + "".join(
            f'<td class="{c}" title="{esc(note)}">{esc(text)}</td>' for c, text, note in cells)
            + f"<td>{esc(src)}</td></tr>")
    out.append("</table>")
    return "\n".join(out)


def robotnet_table(meta: dict) -> str:
    runs = meta.get("robotnet", [])
    if not runs:
        return "<p>No robot-net run in this report.</p>"
    out = ["<table><tr><th>system</th><th>stream</th><th>p50 µs</th><th>p99 µs</th>"
           "<th>p99.9 µs</th><th>max µs</th><th>sent</th><th>lost</th></tr>"]
    for m in runs:
        for kind, x in m["streams"].items():
            out.append(f"<tr><td>{esc(m['system'])} {esc(m['topology'])}</td><td>{esc(kind)}"
                       "</td>" + "".join(f"<td>{esc(fmt_num(x[f]) if x.get(f) is not None else '-')}</td>"
                                         for f in ("p50_us", "p99_us", "p999_us", "max_us"))
                       + f"<td>{x['sent']}</td><td>{x['sent'] - x['received']}</td></tr>")
    out.append("</table><p class=note>One run each of "
               f"{esc(runs[0].get('seconds', '?'))} s; ticks published late: "
               + esc(", ".join(f"{m['system']} {m['topology']} {m.get('sent_late')} of "
                               f"{m.get('ticks')}" for m in runs)) + ".</p>")
    return "\n".join(out)


def others_text(m: dict) -> tuple[str, str]:
    """What the subscriber kept running saw in failure run `m`, as (lost, longest wait)
    texts: '-' where not counted, the reason where it is known."""
    o = m.get("others")
    if o is None:
        return ("not counted", "not counted")
    if not o.get("received_again", True) or "lost" not in o:
        return ("nothing received after the kill", "-")
    gap = o.get("max_gap_ms")
    lost = f"{o['lost']}"
    if o.get("lost_before"):
        lost += f" ({o['lost_before']} in the {o.get('before_s', 0):.1f} s before the kill)"
    if gap is None:
        return (lost, "not measured")
    return (lost, f"at least {gap:.0f} ms" if o.get("gap_is_lower_bound") else f"{gap:.1f} ms")


def failure_table(meta: dict) -> str:
    runs = meta.get("failure", [])
    if not runs:
        return "<p>No failure run in this report.</p>"
    out = ["<table><tr><th>system</th><th>payload</th><th>down for</th>"
           "<th>restarted: receiving again after the restart</th>"
           "<th>restarted: gap (kill to first message)</th>"
           "<th>kept running: messages missed</th><th>kept running: longest wait</th>"
           "</tr>"]
    for m in runs:
        ok = m.get("recovered")
        rec = (f'<td class="pass">{1000 * m["recovery_s"]:.0f} ms</td>' if ok
               else f'<td class="fail">not within {m.get("window_s", "?")} s</td>')
        gap = f"<td>{1000 * m['gap_s']:.0f} ms</td>" if ok else "<td>-</td>"
        lost, wait = others_text(m)
        o = m.get("others") or {}
        cls = ("na" if m.get("others") is None else
               "pass" if o.get("lost") == 0 else "fail")
        out.append(f"<tr><td>{esc(m['system'])} {esc(m['topology'])}</td>"
                   f"<td>{esc(fmt_size(m['payload']))}</td><td>{1000 * m['down_s']:.0f} ms</td>"
                   f'{rec}{gap}<td class="{cls}">{esc(lost)}</td><td>{esc(wait)}</td></tr>')
    out.append("</table>")
    return "\n".join(out)


def failure_meaning(meta: dict) -> str:
    """What the failure runs say, in sentences made from their figures: which systems'
    kept-running subscriber missed messages (and how many), the longest waits it saw,
    weft's against the best of the others, and which restarted subscriber did not
    receive again. Empty without failure runs."""
    runs = meta.get("failure", [])
    if not runs:
        return ""
    name = lambda m: f"{m['system']} {m['topology']}"  # noqa: E731
    counted = [m for m in runs if (m.get("others") or {}).get("lost") is not None]
    out = []
    if counted:
        clean = [name(m) for m in counted if m["others"]["lost"] == 0]
        lossy = [f"{name(m)} ({m['others']['lost']}"
                 + (f", and {m['others']['lost_before']} in the "
                    f"{m['others'].get('before_s', 0):.1f} s before the kill"
                    if m["others"].get("lost_before") else "") + ")"
                 for m in counted if m["others"]["lost"] > 0]
        sentence = (f"The subscriber kept running missed no message in {len(clean)} of the "
                    f"{len(counted)} systems where messages were numbered")
        if lossy:
            sentence += "; it missed messages with " + ", ".join(lossy)
        out.append(sentence + ".")
    gaps = {name(m): m["others"]["max_gap_ms"] for m in counted
            if m["others"].get("max_gap_ms") is not None
            and not m["others"].get("gap_is_lower_bound")}
    bounds = {name(m): m["others"]["max_gap_ms"] for m in counted
              if m["others"].get("max_gap_ms") is not None
              and m["others"].get("gap_is_lower_bound")}
    weft = {k: v for k, v in gaps.items() if k.startswith("weft ")}
    others = {k: v for k, v in gaps.items() if not k.startswith(("weft", "tcp "))}
    if weft and others:
        w = min(weft, key=weft.get)
        o = min(others, key=others.get)
        out.append(f"Its longest wait during the kill and restart: {w} {weft[w]:.1f} ms, "
                   f"against {others[o]:.1f} ms for {o}, the shortest of the others"
                   + (f", and {max(gaps.values()):.1f} ms at most ({max(gaps, key=gaps.get)})"
                      if len(gaps) > 2 else "") + ".")
    elif gaps:
        out.append("Its longest wait during the kill and restart: " + ", ".join(
            f"{k} {v:.1f} ms" for k, v in sorted(gaps.items())) + ".")
    if bounds:
        out.append("Measured only to the second (at least): " + ", ".join(
            f"{k} {v:.0f} ms" for k, v in sorted(bounds.items())) + ".")
    back = [m for m in runs if m.get("recovered")]
    never = [name(m) for m in runs if not m.get("recovered")]
    if back:
        f = min(back, key=lambda m: m["recovery_s"])
        out.append(f"The restarted subscriber received again in {len(back)} of {len(runs)} "
                   f"systems, first with {name(f)} ({1000 * f['recovery_s']:.0f} ms after "
                   "its restart)" + (f"; not with {', '.join(never)}" if never else "") + ".")
    elif never:
        out.append(f"No restarted subscriber received again ({', '.join(never)}).")
    return " ".join(out)


def settings(meta: dict) -> str:
    out = []
    for s in meta.get("systems", []):
        out.append(f"<h3>{esc(s['system'])} {esc(s['topology'])}</h3>"
                   f"<p>{esc(s['settings'])}</p><p>Client: {esc(s['client'])}</p>")
        if s.get("commands"):
            out.append("<pre>" + esc("\n".join(s["commands"])) + "</pre>")
    if meta.get("cyclonedds_xml"):
        out.append("<h3>CYCLONEDDS_URI</h3><pre>" + esc(meta["cyclonedds_xml"]) + "</pre>")
    return "\n".join(out)


CSS = """body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;
text-align:right;font-size:13px}td:first-child,th:first-child{text-align:left}
.pass{background:#dfd}.fail{background:#fdd}.na{color:#888}.note{font-size:12px;color:#555}
pre{background:#f6f6f6;padding:6px;overflow-x:auto;font-size:12px}svg.plot{display:block}
.means{background:#f4f7fb;border-left:3px solid #1f77b4;padding:.4em .8em}"""


def render(rows: list[dict], meta: dict) -> str:
    thr = defaultdict(list)
    gbps = defaultdict(list)
    r50 = defaultdict(list)
    r99 = defaultdict(list)
    for r in rows:
        k = series_key(r)
        if r["test"] == "thr":
            thr[k].append((r["payload"], r["value"]))
            gbps[k].append((r["payload"], r["value"] * r["payload"] * 8 / 1e9))
        elif r["test"] == "rtt_p50":
            r50[k].append((r["payload"], r["value"]))
        elif r["test"] == "rtt_p99":
            r99[k].append((r["payload"], r["value"]))
    cpu_sides = sorted({r["unit"] for r in rows if r["test"] == "cpu_ns"})
    load = (f"load average {meta.get('load_before', '?')} before, "
            f"{meta.get('load_after', '?')} after")
    parts = [
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\">",
        "<title>weft and other middleware on loopback</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Which middleware? weft and the others on loopback</h1>",
        f"<p>Command: <code>{esc(meta.get('command', '?'))}</code> ({esc(meta.get('mode', '?'))}"
        f" run), {esc(meta.get('date', '?'))}, {esc(meta.get('elapsed_s', '?'))} s; "
        f"{esc(meta.get('cpu', '?'))}, {esc(meta.get('cores', '?'))} cores, Linux "
        f"{esc(meta.get('kernel', '?'))}; {esc(load)}. Every process on this one machine: a "
        "loaded machine shares its cores with the measured programs, so compare systems "
        "within one report, not across reports.</p>",
    ]
    if meta.get("not_run") or meta.get("failures"):
        parts.append("<p><b>Not measured:</b> " + esc(", ".join(
            [f"{s} (not run)" for s in meta.get("not_run", [])] + meta.get("failures", [])))
            + "</p>")
    parts += [
        "<h2>Throughput</h2>",
        "<p>A publisher sends as fast as it can; the subscriber counts what it receives, in "
        "rounds; the median round is plotted. Solid lines: peer to peer; dashed: through a "
        "router or broker; dotted: MQTT at QoS 1.</p>",
        svg_plot("Throughput (msg/s)", thr, "payload", "messages per second"),
        svg_plot("Throughput (Gb/s of payload)", gbps, "payload", "Gb/s"),
        meaning_html(meaning(rows, "thr", True, "fast", "msg/s")),
        table("Throughput, msg/s", by(rows, "thr"), "messages per second (median round)"),
        "<h2>Round trips</h2>",
        "<p>One message in flight, answered by the other end; p50 and p99 of the round trip "
        "in µs (the median over runs).</p>",
        svg_plot("Round trip p50 (µs)", r50, "payload", "µs"),
        meaning_html(meaning(rows, "rtt_p50", False, "quick", "µs")),
        svg_plot("Round trip p99 (µs)", r99, "payload", "µs"),
        meaning_html(meaning(rows, "rtt_p99", False, "quick", "µs")),
        table("Round trip p50, µs", by(rows, "rtt_p50"), "µs"),
        table("Round trip p99, µs", by(rows, "rtt_p99"), "µs"),
        "<h2>Wire bytes</h2>",
        "<p>TCP payload bytes the pinging side writes per round trip (its message, plus any "
        "acknowledgement it sends), counted by a relay between it and the other side (or the "
        "broker): the difference between two runs of different lengths, so that connection "
        "set-up cancels out. No TCP/IP headers. DDS (UDP): the UDP payload a network "
        "namespace's loopback carried while its ping and pong ran there alone, over the "
        "messages both ways, RTPS heartbeats and acknowledgements included (no IP or UDP "
        "headers), the same difference of two runs.</p>",
        meaning_html(meaning(rows, "wire_bytes", False, "lean", "B")),
        table("Wire bytes per message", by(rows, "wire_bytes"), "bytes per message"),
        "<h2>CPU time per message</h2>",
        "<p>Run time of every thread of each process (publisher, subscriber, router or "
        "broker) over the measured throughput rounds, divided by the messages received. A "
        "publisher that drops (ZeroMQ PUB at its high-water mark) spends CPU on messages "
        "nobody receives.</p>",
    ]
    for side in cpu_sides:
        parts.append(meaning_html(meaning(rows, "cpu_ns", False, "frugal", "ns", side)))
        parts.append(table(f"CPU, {side}", by(rows, "cpu_ns", side), side))
    parts += [
        "<h2>Where weft loses</h2>", losses(rows),
        "<h2>Robot net</h2>",
        "<p>Ten sessions in one process: nine sensors publish 64 B state samples at 10 kHz, a "
        "controller sends each a 64 B command at 10 kHz, every node publishes a 100 Hz "
        "express RealTime event; one-way latency from the put to the callback "
        "(bench/robotnet.sh's programs: weft's robotnet example and, for Zenoh, "
        "bench/compare's zrobotnet, the same workload with the zenoh crate; for ZeroMQ, "
        "Redis and MQTT, bench/compare/c's robot nets, the same workload in C over each "
        "library, without priorities; for weft-pico, bench/compare/c's pico_robotnet, ten "
        "weft-pico client sessions of weftd, events RealTime and express; for DDS, "
        "bench/compare/c's dds_robotnet, ten Cyclone DDS participants, the controller's in "
        "a second process, reliable, events at the highest transport priority).</p>",
        robotnet_table(meta),
        "<h2>A node's failure</h2>",
        "<p>A publisher sends numbered 64 B messages as fast as it can to two subscribers; "
        "one is killed (SIGKILL) and started again half a second later (peer to peer on the "
        "same port, so the publisher must reconnect), the other runs on. For the restarted "
        "one: how long until it receives again, dated to within one of its 20 ms rounds, "
        "and the gap from the kill. For the one kept running: the message numbers it missed "
        "from the kill until the restarted one received again, and its longest wait between "
        "two messages then (DDS: ddsperf's own count of lost samples, its wait not measured "
        "since it prints once a second; weft-pico's example programs do not number their "
        "messages).</p>",
        failure_table(meta),
        meaning_html(failure_meaning(meta)),
        "<h2>Requirements</h2>",
        "<p>The robot net's requirements (docs/compare.md): one-way latency p99 under 1 ms and "
        "p50 under 0.1 ms, more than 10 kHz, priority events undelayed by bulk traffic. From "
        "the robot-net run where there is one; otherwise one-way latency is half the "
        "measured round trip and the rate the throughput at the smallest payload, and events "
        "are not measured.</p>",
        requirements(rows, meta),
        "<h2>Settings of each system</h2>", settings(meta),
        "<h2>Versions</h2><pre>" + esc(json.dumps(meta.get("versions", {}), indent=1)) + "</pre>",
        "</body></html>",
    ]
    return "\n".join(parts)


def markdown(rows: list[dict], meta: dict) -> str:
    """The same figures as compact Markdown tables (for bench/RESULTS.md)."""
    def grid(title, cells_by_series, payloads):
        out = [f"{title}", "", "| system | " + " | ".join(fmt_size(p) for p in payloads) + " |",
               "|---|" + "---:|" * len(payloads)]
        for name in sorted(cells_by_series):
            out.append(f"| {name} | " + " | ".join(cells_by_series[name].get(p, "-")
                                                   for p in payloads) + " |")
        return out + [""]

    out = []
    thr = by(rows, "thr")
    if thr:
        payloads = sorted({p for d in thr.values() for p in d})
        out += grid("Throughput, messages/s (median round):",
                    {n: {p: fmt_num(r["value"]) for p, r in d.items()} for n, d in thr.items()},
                    payloads)
    r50, r99 = by(rows, "rtt_p50"), by(rows, "rtt_p99")
    if r50:
        payloads = sorted({p for d in r50.values() for p in d})
        out += grid("Round trip p50 / p99, µs:",
                    {n: {p: f"{fmt_num(r['value'])} / "
                            f"{fmt_num(r99.get(n, {}).get(p, {}).get('value', float('nan')))}"
                         for p, r in d.items()} for n, d in r50.items()}, payloads)
    wire = by(rows, "wire_bytes")
    cpu = defaultdict(dict)
    for r in rows:
        if r["test"] == "cpu_ns" and r["payload"] == 1024:
            cpu[series_key(r)][r["unit"].split()[-1]] = fmt_num(r["value"])
    fail = {f"{m['system']} {m['topology']}": m for m in meta.get("failure", [])}
    names = sorted(set(wire) | set(cpu) | set(fail))
    if names:
        out += ["Wire bytes per message (8 B, 1 KiB payload), CPU ns per 1 KiB message "
                "(publisher / subscriber / router or broker), and after a subscriber's restart, "
                "the time to its first message, and what the subscriber kept running missed "
                "meanwhile and its longest wait:", "",
                "| system | wire 8 B | wire 1 KiB | CPU pub / sub / router | back after restart "
                "| kept running: missed / longest wait |",
                "|---|---:|---:|---:|---:|---:|"]
        for n in names:
            w = wire.get(n, {})
            c = cpu.get(n, {})
            f = fail.get(n)
            back = "-" if f is None else (f"{1000 * f['recovery_s']:.0f} ms" if f["recovered"]
                                          else f"not within {f.get('window_s', '?')} s")
            kept = "-" if f is None else " / ".join(others_text(f))
            out.append(f"| {n} | {fmt_num(w[8]['value']) if 8 in w else '-'} | "
                       f"{fmt_num(w[1024]['value']) if 1024 in w else '-'} | "
                       f"{c.get('pub', '-')} / {c.get('sub', '-')} / "
                       f"{c.get('router', c.get('broker', '-'))} | {back} | {kept} |")
        out.append("")
        text = failure_meaning(meta)
        if text:
            out += [f"A node's failure: {text}", ""]
    for label, args in (("Throughput", ("thr", True, "fast", "msg/s")),
                        ("Round trip p50", ("rtt_p50", False, "quick", "µs")),
                        ("Round trip p99", ("rtt_p99", False, "quick", "µs")),
                        ("Wire bytes", ("wire_bytes", False, "lean", "B"))):
        text = meaning(rows, *args)
        if text:
            out += [f"{label}: {text}", ""]
    verdicts = requirement_verdicts(rows, meta)
    if verdicts:
        out += ["Requirements (pass or FAIL, with the figure):", "",
                "| system | " + " | ".join(REQ_HEADERS) + " | from |",
                "|---|" + "---|" * (len(REQ_HEADERS) + 1)]
        for n, cells, src in verdicts:
            out.append(f"| {n} | " + " | ".join(text for _, text, _ in cells) + f" | {src} |")
        out.append("")
    return "\n".join(out)


def write_plots(page: str, out: Path) -> list[str]:
    """Writes every plot of `page` with data to `out` as `<slug of its title>.svg`, on a
    white background; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for m in re.finditer(r'<svg class="plot".*?</svg>', page, re.S):
        svg = m.group(0)
        title = re.search(r'aria-label="([^"]*)"', svg)
        if not title or "no data" in svg:
            continue
        slug = re.sub(r"[^a-z0-9]+", "-",
                      html.unescape(title.group(1)).replace("µ", "u").lower()).strip("-")
        svg = re.sub(r"(<svg [^>]*>)", r'\1<rect width="100%" height="100%" fill="white"/>',
                     svg, count=1)
        path = out / f"{slug}.svg"
        path.write_text(svg)
        written.append(str(path))
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", required=True)
    ap.add_argument("--meta")
    ap.add_argument("--out", required=True)
    ap.add_argument("--markdown", help="also write the figures as Markdown tables here")
    ap.add_argument("--svg-dir", help="also write each plot as an SVG file of its own here "
                                      "(white background; `rsvg-convert` turns one into a PNG)")
    a = ap.parse_args()
    rows = load_rows(Path(a.csv))
    meta = json.loads(Path(a.meta).read_text()) if a.meta and Path(a.meta).exists() else {}
    page = render(rows, meta)
    Path(a.out).write_text(page)
    if a.svg_dir:
        for name in write_plots(page, Path(a.svg_dir)):
            print(f"wrote {name}", file=sys.stderr)
    if a.markdown:
        Path(a.markdown).write_text(markdown(rows, meta))
    print(f"wrote {a.out} ({len(rows)} rows)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
