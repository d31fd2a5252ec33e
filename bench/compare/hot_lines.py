#!/usr/bin/env python3
"""Reads `callgrind_annotate --auto=yes --context=0` output on standard input and prints the
source lines of weft (paths under crates/) with the highest exclusive cost, as
`cost  percent  file:line  source`, then the calls with the highest inclusive cost by the
line that makes them. Cost inlined from the standard library or dependencies is
charged to their own files, not to the weft line that called them: read these lines with the
function tables beside them."""

import re
import sys

COST = re.compile(r"^\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s?(.*)$")


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    current, line, rows, calls = None, None, [], []
    for raw in sys.stdin:
        raw = raw.rstrip("\n")
        m = re.match(r"^-- Auto-annotated source: (.*)$", raw)
        if m:
            current, line = m.group(1).strip(), None
            continue
        m = re.match(r"^-- line (\d+) -+$", raw)
        if m:
            line = int(m.group(1))
            continue
        if raw.startswith("--") or current is None or line is None:
            continue
        m = COST.match(raw)
        if m:
            text = m.group(3).strip()
            if text.startswith("=>"):
                # Inclusive cost of a call made on the source line just above.
                if current.startswith("crates/"):
                    calls.append((int(m.group(1).replace(",", "")), float(m.group(2)), current,
                                  line - 1, text))
                continue
            if text.startswith("<counts for") or text.endswith("events annotated"):
                continue
            if current.startswith("crates/"):
                rows.append((int(m.group(1).replace(",", "")), float(m.group(2)), current, line,
                             text))
            line += 1
        elif re.match(r"^\s*\.\s", raw):
            line += 1
    rows.sort(reverse=True)
    calls.sort(reverse=True)
    print("# source lines, exclusive cost")
    for cost, pct, path, n, src in rows[:limit]:
        print(f"{cost:>14,}  {pct:5.2f}%  {path}:{n}  {src[:90]}")
    print("# calls, inclusive cost, by the line that makes them")
    for cost, pct, path, n, src in calls[:limit]:
        print(f"{cost:>14,}  {pct:5.2f}%  {path}:{n}  {src[:140]}")


if __name__ == "__main__":
    main()
