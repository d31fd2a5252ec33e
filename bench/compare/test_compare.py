"""Tests of bench/compare.sh's report generator and results checker, on a small synthetic
results.csv. Run: python3 -m unittest discover -s bench/compare -p 'test_*.py'"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check_results  # noqa: E402
import html_report  # noqa: E402

CSV = """system,topology,test,payload,value,unit,min,max,reps
weft,p2p,thr,8,2000000,msg/s,1900000,2100000,3
weft,p2p,thr,1024,900000,msg/s,850000,950000,3
weft,routed,thr,8,1500000,msg/s,1400000,1600000,3
tcp,p2p,thr,8,30000000,msg/s,29000000,31000000,3
tcp,p2p,thr,1024,1800000,msg/s,1700000,1900000,3
mqtt,broker-qos1,thr,8,5000,msg/s,4000,6000,3
weft,p2p,rtt_p50,8,20,us,19,21,3
weft,p2p,rtt_p99,8,150,us,140,160,3
weft,p2p,rtt_p50,1024,24,us,22,25,3
weft,p2p,rtt_p99,1024,3000,us,2500,3100,3
tcp,p2p,rtt_p50,8,9,us,9,9,3
tcp,p2p,rtt_p99,8,30,us,30,30,3
weft,p2p,wire_bytes,8,31,B/msg,31,31,1
tcp,p2p,wire_bytes,8,12,B/msg,12,12,1
weft,p2p,cpu_ns,8,120,ns/msg sub,100,140,2
weft,routed,cpu_ns,8,180,ns/msg router,170,190,2
weft,routed,lat_p50,64,90,us state,90,90,1
weft,routed,lat_p99,64,400,us state,400,400,1
weft,routed,lat_p50,64,80,us event,80,80,1
weft,routed,lat_p99,64,700,us event,700,700,1
zenoh,p2p,lat_p50,64,60,us state,60,60,1
zenoh,p2p,lat_p99,64,300,us state,300,300,1
zenoh,p2p,lat_p50,64,70,us event,70,70,1
zenoh,p2p,lat_p99,64,250,us event,250,250,1
weft,p2p,fail_recovery_ms,64,250,ms,250,250,1
weft,p2p,fail_gap_ms,64,750,ms,750,750,1
weft,p2p,fail_others_loss,64,0,msgs,0,0,1
weft,p2p,fail_others_gap_ms,64,8,ms,8,8,1
"""

META = {"command": "bench/compare.sh --quick", "mode": "quick", "load_before": "3.1 2 1",
        "systems": [{"system": "weft", "topology": "p2p", "settings": "weft's own tools",
                     "client": "weft CLI", "commands": ["subscriber: weft sub-thr -l tcp/x"]}],
        "versions": {"weft": "abc1234"},
        "failure": [{"system": "weft", "topology": "p2p", "payload": 64, "down_s": 0.5,
                     "recovered": True, "recovery_s": 0.25, "gap_s": 0.75,
                     "others": {"lost": 0, "max_gap_ms": 8.0, "lost_before": 0}},
                    {"system": "tcp", "topology": "p2p", "payload": 64, "down_s": 0.5,
                     "recovered": False, "recovery_s": None, "gap_s": None,
                     "others": {"lost": 12, "max_gap_ms": 30.5, "lost_before": 3,
                                "before_s": 0.3}},
                    {"system": "zeromq", "topology": "p2p", "payload": 64, "down_s": 0.5,
                     "recovered": True, "recovery_s": 0.1, "gap_s": 0.6,
                     "others": {"lost": 5, "max_gap_ms": 20.0, "lost_before": 0}},
                    {"system": "dds", "topology": "p2p", "payload": 64, "down_s": 0.5,
                     "recovered": True, "recovery_s": 2.0, "gap_s": 2.5,
                     "others": {"lost": 0, "max_gap_ms": 2000.0, "lost_before": 0,
                                "gap_is_lower_bound": True}},
                    {"system": "weft-pico", "topology": "routed", "payload": 64,
                     "down_s": 0.5, "recovered": True, "recovery_s": 0.05, "gap_s": 0.55,
                     "others": None}],
        "robotnet": [{"system": "weft", "topology": "routed", "seconds": 2, "sent_late": 5,
                      "ticks": 20000, "streams": {
                          "state": {"p50_us": 90, "p99_us": 400, "p999_us": 900,
                                    "max_us": 1200, "sent": 180000, "received": 180000},
                          "event": {"p50_us": 80, "p99_us": 700, "p999_us": 800,
                                    "max_us": 900, "sent": 2000, "received": 2000}}},
                     {"system": "zenoh", "topology": "p2p", "seconds": 2, "sent_late": 3,
                      "ticks": 20000, "streams": {
                          "state": {"p50_us": 60, "p99_us": 300, "p999_us": 500,
                                    "max_us": 600, "sent": 180000, "received": 179990},
                          "event": {"p50_us": 70, "p99_us": 250, "p999_us": 260,
                                    "max_us": 270, "sent": 2000, "received": 2000}}}]}


class MeaningTest(unittest.TestCase):
    """The "what this means" sentences come from the figures, not from a template."""

    ROWS = [
        {"system": "weft", "topology": "p2p", "test": "thr", "payload": 8, "value": 6e6},
        {"system": "weft", "topology": "routed", "test": "thr", "payload": 8, "value": 3e6},
        {"system": "zenoh", "topology": "p2p", "test": "thr", "payload": 8, "value": 2e6},
        {"system": "tcp", "topology": "p2p", "test": "thr", "payload": 8, "value": 12e6},
        {"system": "weft", "topology": "p2p", "test": "thr", "payload": 1048576,
         "value": 1600},
        {"system": "zeromq", "topology": "p2p", "test": "thr", "payload": 1048576,
         "value": 2000},
        {"system": "weft", "topology": "p2p", "test": "rtt_p50", "payload": 64, "value": 30},
        {"system": "zenoh", "topology": "p2p", "test": "rtt_p50", "payload": 64, "value": 60},
    ]

    def rows(self, changes=None):
        changes = changes or {}
        out = []
        for r in self.ROWS:
            r = dict(r, unit="", min=r["value"], max=r["value"], reps=1)
            key = (r["system"], r["test"], r["payload"])
            if key in changes:
                r["value"] = changes[key]
            out.append(r)
        return out

    def test_a_lead_and_a_loss_are_told_with_their_ratios(self):
        text = html_report.meaning(self.rows(), "thr", True, "fast", "msg/s")
        self.assertIn("leads the other middleware at 1 of the 2 payloads", text)
        self.assertIn("trails at 1 MiB", text)
        self.assertIn("At 8 B, weft p2p 6 M msg/s against 2 M for zenoh p2p", text)
        self.assertIn("weft 3.00× as fast", text)
        self.assertIn("raw TCP 12 M (weft 0.50× as fast)", text)
        self.assertIn("At 1 MiB, weft p2p 1600 msg/s against 2000 for zeromq p2p", text)
        text = html_report.meaning(self.rows(), "rtt_p50", False, "quick", "µs")
        self.assertIn("1 of the 1 payloads", text)
        self.assertIn("weft 2.00× as quick", text)

    def test_other_figures_tell_another_story(self):
        rows = self.rows({("zenoh", "thr", 8): 9e6, ("zeromq", "thr", 1048576): 1000})
        text = html_report.meaning(rows, "thr", True, "fast", "msg/s")
        self.assertIn("leads the other middleware at 1 of the 2 payloads", text)
        self.assertIn("trails at 8 B", text)
        self.assertIn("against 9 M for zenoh p2p", text)
        self.assertIn("weft 0.67× as fast", text)
        self.assertEqual(html_report.meaning(rows, "wire_bytes", False, "lean", "B"), "")


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.csv = Path(self.dir.name) / "results.csv"
        self.csv.write_text(CSV)
        self.meta = Path(self.dir.name) / "meta.json"
        self.meta.write_text(json.dumps(META))
        self.out = Path(self.dir.name) / "report.html"
        subprocess.run([sys.executable, str(HERE / "html_report.py"), "--csv", str(self.csv),
                        "--meta", str(self.meta), "--out", str(self.out)], check=True)
        self.html = self.out.read_text()

    def test_each_plot_can_be_written_as_a_file_of_its_own(self):
        out = Path(self.dir.name) / "plots"
        written = html_report.write_plots(self.html, out)
        names = sorted(Path(p).name for p in written)
        self.assertIn("throughput-msg-s.svg", names)
        self.assertIn("round-trip-p50-us.svg", names)
        svg = (out / "throughput-msg-s.svg").read_text()
        self.assertTrue(svg.startswith('<svg class="plot"'))
        self.assertIn('fill="white"', svg)
        self.assertIn("weft p2p", svg)

    def test_figures_say_what_they_mean(self):
        self.assertIn("What this means:", self.html)
        self.assertIn("At 8 B, weft p2p 2 M msg/s against 5000 for mqtt broker-qos1", self.html)

    def tearDown(self):
        self.dir.cleanup()

    def test_four_plots_with_a_line_per_series(self):
        plots = re.findall(r"<svg class=\"plot\".*?</svg>", self.html, flags=re.S)
        titles = [re.search(r'aria-label="([^"]*)"', p).group(1) for p in plots]
        self.assertEqual(titles, ["Throughput (msg/s)", "Throughput (Gb/s of payload)",
                                  "Round trip p50 (µs)", "Round trip p99 (µs)"])
        thr_series = re.findall(r'data-series="([^"]*)"', plots[0])
        self.assertEqual(sorted(thr_series),
                         ["mqtt broker-qos1", "tcp p2p", "weft p2p", "weft routed"])
        # Log axes: 1 KiB sits far right of 8 B, and one tick per power of ten of msg/s.
        self.assertIn(">8 B<", plots[0])
        self.assertIn(">1 KiB<", plots[0])
        self.assertIn(">10 M<", plots[0])

    def test_self_contained(self):
        self.assertNotRegex(self.html, r"(src|href)=\"https?:")
        self.assertNotIn("<script src", self.html)

    def test_requirement_table_passes_and_fails(self):
        req = self.html.split("<h2>Requirements</h2>")[1].split("<h2>")[0]
        row = re.search(r"<tr><td>weft p2p</td>(.*?)</tr>", req, flags=re.S).group(1)
        # Half of 150 µs under 1 ms; half of 20 µs under 0.1 ms; 2 M msg/s over 10 kHz.
        self.assertEqual(re.findall(r'class="(pass|fail|na)"', row), ["pass", "pass", "pass", "na"])
        row = re.search(r"<tr><td>mqtt broker-qos1</td>(.*?)</tr>", req, flags=re.S).group(1)
        self.assertEqual(re.findall(r'class="(pass|fail|na)"', row), ["na", "na", "fail", "na"])
        # From the robot net: the worst stream's p99 400 µs... 700 µs under 1 ms, its p50
        # (90 µs) under 0.1 ms, nothing lost, but events (p99 700) later than state (400).
        row = re.search(r"<tr><td>weft routed, robot net</td>(.*?)</tr>", req,
                        flags=re.S).group(1)
        self.assertEqual(re.findall(r'class="(pass|fail|na)"', row),
                         ["pass", "pass", "pass", "fail"])
        self.assertIn("robot-net run", row)
        # Zenoh's robot net: 10 state samples lost, so 10 kHz is not met; events earlier.
        row = re.search(r"<tr><td>zenoh p2p, robot net</td>(.*?)</tr>", req,
                        flags=re.S).group(1)
        self.assertEqual(re.findall(r'class="(pass|fail|na)"', row),
                         ["pass", "pass", "fail", "pass"])

    def test_failure_table(self):
        f = self.html.split("<h2>A node's failure</h2>")[1].split("<h2>")[0]
        self.assertIn('<td>weft p2p</td><td>64 B</td><td>500 ms</td><td class="pass">250 ms'
                      '</td><td>750 ms</td><td class="pass">0</td><td>8.0 ms</td>', f)
        self.assertIn('<td>tcp p2p</td><td>64 B</td><td>500 ms</td><td class="fail">', f)
        # What the subscriber kept running missed, with what it missed before the kill.
        self.assertIn('<td class="fail">12 (3 in the 0.3 s before the kill)</td>'
                      '<td>30.5 ms</td>', f)
        self.assertIn("<td>at least 2000 ms</td>", f)
        self.assertIn('<td class="na">not counted</td><td>not counted</td>', f)

    def test_failure_meaning_comes_from_the_runs(self):
        text = html_report.failure_meaning(META)
        self.assertIn("missed no message in 2 of the 4 systems where messages were numbered",
                      text)
        self.assertIn("tcp p2p (12, and 3 in the 0.3 s before the kill), zeromq p2p (5)", text)
        self.assertIn("weft p2p 8.0 ms, against 20.0 ms for zeromq p2p", text)
        self.assertIn("Measured only to the second (at least): dds p2p 2000 ms", text)
        self.assertIn("received again in 4 of 5 systems, first with weft-pico routed (50 ms", text)
        self.assertIn("not with tcp p2p", text)
        other = json.loads(json.dumps(META))
        other["failure"][0]["others"] = {"lost": 7, "max_gap_ms": 40.0}
        text = html_report.failure_meaning(other)
        self.assertIn("missed no message in 1 of the 4 systems", text)
        self.assertIn("weft p2p 40.0 ms, against 20.0 ms for zeromq p2p", text)
        self.assertEqual(html_report.failure_meaning({}), "")
        self.assertIn("<b>What this means:</b> The subscriber kept running", self.html)

    def test_robotnet_table(self):
        rn = self.html.split("<h2>Robot net</h2>")[1].split("<h2>")[0]
        self.assertIn("<td>weft routed</td><td>event</td><td>80</td><td>700</td>", rn)
        self.assertIn("<td>zenoh p2p</td><td>state</td><td>60</td><td>300</td><td>500</td>"
                      "<td>600</td><td>180000</td><td>10</td>", rn)

    def test_losses_name_the_faster_systems(self):
        losses = self.html.split("<h2>Where weft loses</h2>")[1].split("<h2>")[0]
        self.assertIn("throughput at 8 B: weft's best (weft p2p) 2 M msg/s; better: tcp p2p 30 M",
                      losses)
        self.assertIn("round trip p50 at 8 B", losses)
        self.assertIn("wire bytes per message at 8 B", losses)

    def test_tables_and_settings(self):
        self.assertIn("<h3>Throughput, msg/s</h3>", self.html)
        self.assertIn("<h3>CPU, ns/msg router</h3>", self.html)
        self.assertIn("subscriber: weft sub-thr -l tcp/x", self.html)
        self.assertIn("bench/compare.sh --quick", self.html)

    def test_markdown_summary(self):
        md = html_report.markdown(html_report.load_rows(self.csv), META)
        self.assertIn("| weft p2p | 2 M | 900 k |", md)
        self.assertIn("| weft p2p | 20 / 150 | 24 / 3000 |", md)
        self.assertIn("| weft p2p | 31 | - | - / - / - | 250 ms | 0 / 8.0 ms |", md)
        self.assertIn("| tcp p2p | 12 | - | - / - / - | not within ? s | 12 (3 in the 0.3 s "
                      "before the kill) / 30.5 ms |", md)
        self.assertIn("A node's failure: The subscriber kept running missed no message", md)
        self.assertIn("| weft routed, robot net | pass (700) | pass (90) | pass (0 lost) | FAIL "
                      "(700 against 400) | robot-net run", md)
        self.assertIn("| weft routed | not measured | not measured | pass (1.5 M) | not measured "
                      "(no robot-net run) |", md)

    def test_wrong_header_is_refused(self):
        self.csv.write_text(CSV.replace("reps", "repetitions", 1))
        with self.assertRaises(ValueError):
            html_report.load_rows(self.csv)


class CheckTest(unittest.TestCase):
    def test_sound_and_broken_files(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "r.csv"
            p.write_text(CSV)
            self.assertEqual(check_results.check(str(p), ["weft:p2p", "tcp:p2p"],
                                                 ["thr", "rtt_p50"]), [])
            self.assertEqual(check_results.check(str(p), ["tcp:p2p"], ["cpu_ns"]),
                             ["no cpu_ns row for tcp p2p"])
            self.assertEqual(check_results.check(
                str(p), ["weft:p2p"], ["fail_recovery_ms", "fail_others_loss",
                                       "fail_others_gap_ms"]), [])
            p.write_text(CSV + "corba,p2p,thr,8,1,msg/s,2,3,1\n")
            errors = check_results.check(str(p), [], [])
            self.assertIn("line 30: system 'corba'", errors)
            self.assertIn("line 30: value 1.0 outside [2.0, 3.0] or negative", errors)


class SeqLineTest(unittest.TestCase):
    def test_the_numbered_subscribers_line_is_read(self):
        import compare  # noqa: E402
        m = compare.RX_SEQ.match("seq_received=1200 seq_lost=3 seq_max_gap_us=40500")
        self.assertEqual(m.groups(), ("1200", "3", "40500"))
        self.assertIsNone(compare.RX_SEQ.match("round 3: 1000 msgs/s"))
        self.assertIn("fail_others_loss", compare.TESTS)
        self.assertIn("fail_others_gap_ms", check_results.TESTS)


class RobotnetProgramTest(unittest.TestCase):
    def test_each_system_its_program(self):
        import compare  # noqa: E402

        class Runner:
            bins = {"robotnet": "/bin/robotnet", "zrobotnet": "/bin/zrobotnet"}

        def variant(system):
            return compare.Variant(system, "p2p", "", "")
        pick = compare.Runner.robotnet_bin
        self.assertEqual(pick(Runner(), variant("weft")), "/bin/robotnet")
        self.assertEqual(pick(Runner(), variant("zenoh")), "/bin/zrobotnet")
        self.assertIsNone(pick(Runner(), variant("tcp")))
        Runner.bins = {"robotnet": "/bin/robotnet", "zrobotnet": None}
        self.assertIsNone(pick(Runner(), variant("zenoh")))


if __name__ == "__main__":
    unittest.main()
