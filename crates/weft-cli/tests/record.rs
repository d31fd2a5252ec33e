//! `weft record` and `weft replay` as a user runs them: samples published through a router
//! are recorded into an MCAP file that the official MCAP reader (the `mcap` Python
//! package) reads back byte for byte; a recording is published again to an Eclipse Zenoh
//! subscriber with its original spacing.

use std::io::Cursor;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use weft::{PutOptions, SampleKind};
use weft_cli::recording::{Compression, Recorded, Recorder};
use weft_testkit::{repo_root, sha256_hex, weft_router, zenoh_python_with_mcap, ZenohNode};

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

/// Waits until a client of `router` has declared a subscriber on `key`.
fn wait_for_subscriber(router: &weft::Session, key: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !router
        .admin()
        .faces
        .iter()
        .any(|f| f.subscribers.iter().any(|s| s == key))
    {
        assert!(
            Instant::now() < deadline,
            "no subscriber on {key} reached the router"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_recording_reads_back_in_the_official_mcap_reader_byte_for_byte() {
    let Some(python) = zenoh_python_with_mcap() else {
        return;
    };
    let (router, port) = weft_router();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let dir = std::env::temp_dir().join(format!("weft-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("rec.mcap");
    let recorder = weft()
        .args([
            "record",
            "-m",
            "client",
            "-e",
            &endpoint,
            "--no-multicast-scouting",
        ])
        // Bounded: a lost sample fails the test instead of hanging it.
        .args(["-k", "rec/**", "--count", "5", "--duration", "60", "-o"])
        .arg(&file)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_subscriber(&router, "rec/**");

    // Published by a weft client and by an Eclipse Zenoh client.
    let client = weft_testkit::weft_client(port).unwrap();
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    // Congestion control `block`: a loaded machine delays the samples, never drops them.
    let reliable = PutOptions {
        congestion_control: weft::CongestionControl::Block,
        ..PutOptions::default()
    };
    let json = PutOptions {
        encoding: "application/json".into(),
        attachment: Some(b"frame=7".to_vec()),
        ..reliable.clone()
    };
    client.put("rec/json", br#"{"x":1}"#, &json).unwrap();
    client.put("rec/big", &big, &reliable).unwrap();
    client.delete("rec/json", &reliable).unwrap();
    let text = PutOptions {
        encoding: "text/plain".into(),
        ..reliable.clone()
    };
    client.put("rec/text", b"hello", &text).unwrap();
    let zenoh = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--put",
        "rec/zenoh",
        "--payload",
        "from zenoh",
        "--encoding",
        "text/plain",
        "--block",
    ])
    .expect("an Eclipse Zenoh publisher");
    let out = recorder.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("5 samples written"), "{stderr}");
    drop(zenoh);
    client.close();

    let dump = Command::new(&python)
        .arg(repo_root().join("tests/interop/mcap_dump.py"))
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let messages: Vec<serde_json::Value> = String::from_utf8(dump.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let find = |topic: &str, encoding: &str| {
        messages
            .iter()
            .find(|m| m["topic"] == topic && m["encoding"] == encoding)
            .unwrap_or_else(|| panic!("no {topic} ({encoding}) in {messages:#?}"))
    };
    let json_msg = find("rec/json", "application/json");
    assert_eq!(json_msg["sha256"], sha256_hex(br#"{"x":1}"#));
    let attachment = find("rec/json", "weft/attachment");
    assert_eq!(attachment["sha256"], sha256_hex(b"frame=7"));
    assert_eq!(attachment["sequence"], json_msg["sequence"]);
    assert_eq!(attachment["metadata"]["weft.attachment"], "true");
    let big_msg = find("rec/big", "zenoh/bytes");
    assert_eq!(big_msg["len"], 300_000);
    assert_eq!(big_msg["sha256"], sha256_hex(&big));
    let deleted = messages
        .iter()
        .find(|m| m["topic"] == "rec/json" && m["metadata"]["weft.kind"] == "delete")
        .expect("the deletion");
    assert_eq!(deleted["len"], 0);
    assert_eq!(
        find("rec/text", "text/plain")["sha256"],
        sha256_hex(b"hello")
    );
    assert_eq!(
        find("rec/zenoh", "text/plain")["sha256"],
        sha256_hex(b"from zenoh")
    );
    // Log times are nanoseconds since the UNIX epoch (the router's timestamps).
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    for m in &messages {
        let t = m["log_time"].as_u64().unwrap();
        assert!(t <= now_ns && now_ns - t < 120_000_000_000, "{m}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_replay_reaches_a_zenoh_subscriber_with_the_original_spacing() {
    let (router, port) = weft_router();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    // A recording of four samples, 0, 300, 900 and 1,200 ms after the first.
    let at_ms = [0u64, 300, 900, 1_200];
    let base_ns = 1_700_000_000_000_000_000u64;
    let samples: Vec<Recorded> = at_ms
        .iter()
        .enumerate()
        .map(|(i, ms)| Recorded {
            key: format!("field/robot/{i}"),
            encoding: "text/plain".into(),
            kind: if i == 2 {
                SampleKind::Delete
            } else {
                SampleKind::Put
            },
            payload: if i == 2 {
                Vec::new()
            } else {
                format!("value {i}").into_bytes()
            },
            attachment: (i == 1).then(|| b"meta".to_vec()),
            time_ns: base_ns + ms * 1_000_000,
        })
        .collect();
    let mut recorder = Recorder::create(Cursor::new(Vec::new()), Compression::Zstd).unwrap();
    for s in &samples {
        recorder.write(s).unwrap();
    }
    let (_, bytes) = recorder.finish().unwrap();
    let dir = std::env::temp_dir().join(format!("weft-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("replay.mcap");
    std::fs::write(&file, bytes.into_inner()).unwrap();

    let Some(subscriber) = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--sub",
        "moved/**",
        "--count",
        "4",
        "--timeout",
        "60",
    ]) else {
        return;
    };
    wait_for_subscriber(&router, "moved/**");
    let replay = weft()
        .arg("replay")
        .arg(&file)
        .args(["-m", "client", "-e", &endpoint, "--no-multicast-scouting"])
        .args(["--remap", "field=moved"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut arrivals = Vec::new();
    for _ in 0..4 {
        let line = subscriber
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a replayed sample");
        arrivals.push((
            Instant::now(),
            serde_json::from_str::<serde_json::Value>(&line).unwrap(),
        ));
    }
    let out = replay.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (i, (_, s)) in arrivals.iter().enumerate() {
        assert_eq!(s["key"], format!("moved/robot/{i}"));
        if i == 2 {
            assert_eq!(s["kind"], "delete");
        } else {
            assert_eq!(s["kind"], "put");
            assert_eq!(s["payload"], format!("value {i}"));
            assert_eq!(s["encoding"], "text/plain");
        }
    }
    assert_eq!(arrivals[1].1["attachment"], "meta");
    // Each gap within 20 % of the recorded one.
    for i in 1..4 {
        let gap = arrivals[i]
            .0
            .duration_since(arrivals[i - 1].0)
            .as_secs_f64()
            * 1e3;
        let recorded = (at_ms[i] - at_ms[i - 1]) as f64;
        assert!(
            (gap - recorded).abs() <= 0.2 * recorded,
            "gap {i}: {gap:.0} ms where the recording has {recorded} ms"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
