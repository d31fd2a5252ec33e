//! `weft hz` and `weft bw` as ROS 2 users use `ros2 topic hz` / `bw`: watching an Eclipse
//! Zenoh publisher of known rate and size through a router.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use weft_testkit::ZenohNode;

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

#[test]
fn hz_and_bw_report_a_zenoh_publishers_rate_and_size() {
    let (router, port) = weft_testkit::weft_router();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let watch = |command: &str| {
        weft()
            .args([
                command,
                "-m",
                "client",
                "-e",
                &endpoint,
                "--no-multicast-scouting",
            ])
            .args(["-k", "rates/a", "--json", "--count", "3"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (hz, bw) = (watch("hz"), watch("bw"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while router
        .admin()
        .faces
        .iter()
        .filter(|f| f.subscribers.iter().any(|s| s == "rates/a"))
        .count()
        < 2
    {
        assert!(Instant::now() < deadline, "hz and bw never subscribed");
        std::thread::sleep(Duration::from_millis(10));
    }
    // 50 samples a second of 200 bytes, for 6 seconds.
    let Some(_publisher) = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--put",
        "rates/a",
        "--size",
        "200",
        "--repeat",
        "300",
        "--interval",
        "0.02",
    ]) else {
        let _ = (hz.wait_with_output(), bw.wait_with_output());
        return;
    };
    let reports = |child: std::process::Child| -> Vec<serde_json::Value> {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let hz = reports(hz);
    assert_eq!(hz.len(), 3);
    for r in &hz {
        let rate = r["hz"].as_f64().unwrap();
        // Within 10 % of the publisher's rate (it keeps it by deadlines).
        assert!((45.0..=55.0).contains(&rate), "{r}");
        assert_eq!(r["key"], "rates/a");
    }
    let bw = reports(bw);
    assert_eq!(bw.len(), 3);
    for r in &bw {
        assert_eq!(r["min_bytes"], 200);
        assert_eq!(r["max_bytes"], 200);
    }
    // The last report's window spans seconds: 200 bytes × about 50 a second.
    let rate = bw[2]["bytes_per_s"].as_f64().unwrap();
    assert!((9_000.0..=11_000.0).contains(&rate), "{}", bw[2]);
}
