//! weftd's recorder (`plugins.recorder`): what clients (weft's and Eclipse Zenoh's)
//! publish is written into MCAP files
//! that the official MCAP reader (the `mcap` Python package) reads back byte for byte, in
//! order, across rotated files; its counters show in the admin space; a bad configuration
//! stops weftd with the key named.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use weft::{CongestionControl, GetOptions, PutOptions};
use weft_testkit::{free_port, repo_root, sha256_hex, zenoh_python_with_mcap};

mod common;
use common::Weftd;

/// A fresh directory for one test.
fn scratch(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weftd-rec-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The status of recording `name`, as the admin space shows it (`None` until it answers).
fn status(client: &weft::Session, name: &str) -> Option<Value> {
    let options = GetOptions {
        timeout: Some(Duration::from_secs(5)),
        ..GetOptions::default()
    };
    let selector = format!("@/*/router/status/plugins/recorder/recordings/{name}");
    let replies = client.get(&selector, &options).unwrap();
    replies
        .iter()
        .filter_map(|r| r.result.ok())
        .find_map(|s| serde_json::from_slice(&s.payload).ok())
}

/// Waits (at most 30 s) until recording `name` has written `n` samples; returns its status.
fn wait_for_messages(client: &weft::Session, name: &str, n: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = status(client, name);
        if let Some(s) = &now {
            if s["messages"].as_u64() == Some(n) {
                return s.clone();
            }
        }
        assert!(
            Instant::now() < deadline,
            "recording {name} did not reach {n} samples: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every message of `file` as `tests/interop/mcap_dump.py` reads it.
fn dump(python: &str, file: &Path) -> Vec<Value> {
    let out = Command::new(python)
        .arg(repo_root().join("tests/interop/mcap_dump.py"))
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The MCAP files of `dir`, in the order their names sort (the order they were started).
fn mcap_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
        .collect();
    files.sort();
    files
}

/// Payload `i` of a test: `len` bytes, its index in the first 4, then a pattern.
fn payload(i: u32, len: usize) -> Vec<u8> {
    let mut p: Vec<u8> = (0..len).map(|j| (j % 251) as u8 ^ (i as u8)).collect();
    let n = len.min(4);
    p[..n].copy_from_slice(&i.to_be_bytes()[..n]);
    p
}

fn block(encoding: &str, attachment: Option<Vec<u8>>) -> PutOptions {
    PutOptions {
        encoding: encoding.into(),
        attachment,
        congestion_control: CongestionControl::Block,
        ..PutOptions::default()
    }
}

#[test]
fn a_recorder_writes_every_sample_byte_for_byte() {
    let Some(python) = zenoh_python_with_mcap() else {
        return;
    };
    let dir = scratch("all");
    let records = dir.join("rec");
    let config = format!(
        r#"{{ plugins: {{ recorder: {{ recordings: {{ cam: {{
            key_expr: "robot/**", directory: "{}" }} }} }} }} }}"#,
        records.display()
    );
    let weftd = Weftd::with_config(free_port(), &config, &[]);
    let client = weftd.weft_client();
    // Mixed sizes (1 MiB fragmented, the others in one batch), encodings, attachments, a
    // deletion, and a key outside the recording.
    let sizes = [8usize, 1_000, 100_000, 1 << 20, 0, 64];
    let n = 60u32;
    let mut published = Vec::new();
    for i in 0..n {
        let key = format!("robot/{}/data", i % 3);
        let len = sizes[i as usize % sizes.len()];
        let body = payload(i, len);
        let encoding = ["application/json", "text/plain", ""][i as usize % 3];
        let attachment = (i % 4 == 1).then(|| format!("frame={i}").into_bytes());
        if i == 17 {
            client.delete(&key, &block("", None)).unwrap();
            published.push((key, "zenoh/bytes".to_string(), Vec::new(), None, true));
            continue;
        }
        client
            .put(&key, &body, &block(encoding, attachment.clone()))
            .unwrap();
        let shown = if encoding.is_empty() {
            "zenoh/bytes"
        } else {
            encoding
        };
        published.push((key, shown.to_string(), body, attachment, false));
    }
    client
        .put("elsewhere/x", b"not recorded", &block("", None))
        .unwrap();
    wait_for_messages(&client, "cam", u64::from(n));
    // And one from an Eclipse Zenoh client.
    let zenoh = weftd.zenoh_client(&[
        "--put",
        "robot/zenoh",
        "--payload",
        "from zenoh",
        "--encoding",
        "text/plain",
    ]);
    assert!(zenoh.wait());
    published.push((
        "robot/zenoh".to_string(),
        "text/plain".to_string(),
        b"from zenoh".to_vec(),
        None,
        false,
    ));
    let status = wait_for_messages(&client, "cam", u64::from(n) + 1);
    assert_eq!(status["key_expr"], "robot/**");
    assert_eq!(status["errors"], 0);
    assert_eq!(status["lost"], 0);
    let current = status["current_file"]
        .as_str()
        .expect("a file being written");
    assert!(current.starts_with(records.to_str().unwrap()), "{status}");
    assert!(
        status["current_file_bytes"].as_u64().unwrap() > 0,
        "{status}"
    );
    let total: usize = published
        .iter()
        .map(|p| p.2.len() + p.3.as_ref().map_or(0, Vec::len))
        .sum();
    assert_eq!(status["bytes"].as_u64(), Some(total as u64));
    assert_eq!(status["dropped"], 0);
    // The metrics say the same (`@/<zid>/router/metrics`, plain).
    let metrics = client
        .get(
            "@/*/router/metrics?compression=false",
            &weft::GetOptions::default(),
        )
        .unwrap()
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the metrics");
    let text = String::from_utf8(metrics.result.unwrap().payload.to_vec()).unwrap();
    let line = |name: &str, value: u64| {
        format!("{name}_total{{recording=\"cam\",key_expr=\"robot/**\"}} {value}")
    };
    assert!(
        text.contains(&line("weft_recording_messages", u64::from(n) + 1)),
        "{text}"
    );
    assert!(
        text.contains(&line("weft_recording_bytes", total as u64)),
        "{text}"
    );
    assert!(text.contains(&line("weft_recording_dropped", 0)), "{text}");
    client.close();
    // SIGTERM: weftd finishes the file (summary and index) before it ends.
    assert!(weftd.terminate().success());

    let files = mcap_files(&records);
    assert_eq!(files.len(), 1, "{files:?}");
    let messages = dump(&python, &files[0]);
    let samples: Vec<&Value> = messages
        .iter()
        .filter(|m| m["encoding"] != "weft/attachment")
        .collect();
    assert_eq!(samples.len(), published.len());
    for (m, (key, encoding, body, attachment, deleted)) in samples.iter().zip(&published) {
        assert_eq!(m["topic"], key.as_str(), "{m}");
        assert_eq!(m["encoding"], encoding.as_str(), "{m}");
        assert_eq!(m["len"], body.len(), "{m}");
        assert_eq!(m["sha256"], sha256_hex(body), "{m}");
        let kind = m["metadata"]["weft.kind"].as_str();
        assert_eq!(kind == Some("delete"), *deleted, "{m}");
        let attached = messages
            .iter()
            .find(|a| a["encoding"] == "weft/attachment" && a["sequence"] == m["sequence"]);
        match (attachment, attached) {
            (Some(bytes), Some(a)) => assert_eq!(a["sha256"], sha256_hex(bytes)),
            (None, None) => {}
            _ => panic!("attachment of {m}: expected {attachment:?}, found {attached:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rotation_by_size_splits_the_recording_in_order() {
    let Some(python) = zenoh_python_with_mcap() else {
        return;
    };
    let dir = scratch("rotate");
    let records = dir.join("rec");
    // 256 KiB files, uncompressed: 400 samples of 10 KiB make about 16 files.
    let config = format!(
        r#"{{ plugins: {{ recorder: {{ recordings: {{ small: {{
            key_expr: "rot/**", directory: "{}",
            rotate: {{ size_mb: 0.25, seconds: 3600 }}, compression: "none" }} }} }} }} }}"#,
        records.display()
    );
    let weftd = Weftd::with_config(free_port(), &config, &[]);
    let client = weftd.weft_client();
    let n = 400u32;
    for i in 0..n {
        client
            .put("rot/a", &payload(i, 10_000), &block("", None))
            .unwrap();
    }
    let status = wait_for_messages(&client, "small", u64::from(n));
    let finished = status["files"].as_u64().unwrap();
    assert!(finished >= 10, "{status}");
    client.close();
    assert!(weftd.terminate().success());

    let files = mcap_files(&records);
    assert_eq!(files.len() as u64, finished + 1, "{files:?}");
    let mut seen = Vec::new();
    for f in &files {
        let size = std::fs::metadata(f).unwrap().len();
        // A file is closed once past its limit: over by less than a message and the summary.
        assert!(
            size < 256 * 1024 + 64 * 1024,
            "{}: {size} bytes",
            f.display()
        );
        seen.extend(dump(&python, f).into_iter().map(|m| m["sha256"].clone()));
    }
    let expected: Vec<Value> = (0..n)
        .map(|i| Value::from(sha256_hex(&payload(i, 10_000))))
        .collect();
    assert_eq!(seen.len(), expected.len());
    assert!(seen == expected, "the samples are not all there in order");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs weftd with the recorder section `recorder`; returns its exit code and standard
/// error.
fn refused(recorder: &str) -> (Option<i32>, String) {
    let dir = scratch("bad");
    let path = dir.join("bad.json5");
    std::fs::write(&path, format!("{{ plugins: {{ recorder: {recorder} }} }}")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weftd"))
        .args(["-c", path.to_str().unwrap(), "-l", "tcp/127.0.0.1:0"])
        .arg("--no-multicast-scouting")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("weftd runs with {recorder}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_recorder_configuration_stops_weftd_naming_the_key() {
    let base = "plugins.recorder.recordings.cam";
    let cases = [
        (
            r#"{ recordings: { cam: { key_expr: "a/**", directory: "d", rotate: { size_mb: -5 } } } }"#,
            format!("{base}.rotate.size_mb"),
        ),
        (
            r#"{ recordings: { cam: { key_expr: "a/**", directory: "d", rotate: { minutes: 5 } } } }"#,
            format!("{base}.rotate.minutes"),
        ),
        (
            r#"{ recordings: { cam: { key_expr: "a/**", directory: "d", colour: "red" } } }"#,
            format!("{base}.colour"),
        ),
        (
            r#"{ recordings: { cam: { key_expr: "a//b", directory: "d" } } }"#,
            format!("{base}.key_expr"),
        ),
        (
            r#"{ recordings: { cam: { key_expr: "a/**", directory: "d", compression: "gzip" } } }"#,
            format!("{base}.compression"),
        ),
    ];
    for (section, key) in &cases {
        let (code, stderr) = refused(section);
        assert_eq!(code, Some(2), "{section}: {stderr}");
        assert!(stderr.contains(key.as_str()), "{section}: {stderr}");
    }
    // A directory that cannot be created: below a regular file.
    let dir = scratch("file");
    let file = dir.join("plain");
    std::fs::write(&file, b"not a directory").unwrap();
    let section = format!(
        r#"{{ recordings: {{ cam: {{ key_expr: "a/**", directory: "{}/rec" }} }} }}"#,
        file.display()
    );
    let (code, stderr) = refused(&section);
    assert!(code.is_some_and(|c| c != 0), "{stderr}");
    assert!(stderr.contains(&format!("{base}.directory")), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
