//! A recording running on a session: samples put on it are written and counted, files
//! rotate by age, and a write error (its directory removed) is counted and logged while
//! the recording carries on once the directory is back.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use weft::{Config, PutOptions, Session, WhatAmI};
use weft_keyexpr::OwnedKeyExpr;
use weft_record::{Compression, Playback, RecordingConfig, RecordingStatus, Rotation, WhenFull};

/// A session alone: no listener, no scouting; what it puts reaches its own subscribers.
fn lone_session() -> Session {
    weft::open(Config {
        mode: WhatAmI::Peer,
        multicast_scouting: false,
        ..Config::default()
    })
    .unwrap()
}

fn scratch(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-record-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn config(dir: &Path, rotate: Rotation) -> RecordingConfig {
    RecordingConfig {
        name: "test".into(),
        key_expr: OwnedKeyExpr::new("t/**").unwrap(),
        directory: dir.to_path_buf(),
        rotate,
        compression: Compression::Lz4,
        when_full: WhenFull::Block,
    }
}

/// Waits (at most 20 s) until `done` holds for the recording's status.
fn wait_until(
    stats: &weft_record::RecordingStats,
    what: &str,
    done: impl Fn(&RecordingStatus) -> bool,
) -> RecordingStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = stats.status();
        if done(&status) {
            return status;
        }
        assert!(Instant::now() < deadline, "{what}: {status:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn files_rotate_by_age_even_without_samples() {
    let dir = scratch("age");
    let session = lone_session();
    let rotate = Rotation {
        size_bytes: None,
        age: Some(Duration::from_millis(300)),
    };
    let recording = weft_record::start(&session, vec![config(&dir, rotate)])
        .unwrap()
        .pop()
        .unwrap();
    let stats = recording.stats();
    session.put("t/1", b"one", &PutOptions::default()).unwrap();
    // Closed once 300 ms old, with no other sample coming.
    wait_until(&stats, "the first file closed by age", |s| s.files == 1);
    session.put("t/2", b"two", &PutOptions::default()).unwrap();
    wait_until(&stats, "the second sample", |s| s.messages == 2);
    recording.stop();
    let status = stats.status();
    assert_eq!((status.files, status.errors), (2, 0));
    assert_eq!(status.current_file, None);
    let mut read = Vec::new();
    for f in files(&dir) {
        for s in Playback::new(std::fs::File::open(&f).unwrap()) {
            read.push(s.unwrap().payload);
        }
    }
    assert_eq!(read, vec![b"one".to_vec(), b"two".to_vec()]);
    session.close();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_write_error_is_counted_and_the_recording_carries_on() {
    let dir = scratch("error");
    let session = lone_session();
    let rotate = Rotation {
        size_bytes: None,
        age: Some(Duration::from_millis(100)),
    };
    let recording = weft_record::start(&session, vec![config(&dir, rotate)])
        .unwrap()
        .pop()
        .unwrap();
    let stats = recording.stats();
    session.put("t/a", b"kept", &PutOptions::default()).unwrap();
    wait_until(&stats, "the first file closed", |s| s.files == 1);
    // No directory: the next file cannot be created.
    std::fs::remove_dir_all(&dir).unwrap();
    session.put("t/a", b"lost", &PutOptions::default()).unwrap();
    let status = wait_until(&stats, "the error counted", |s| s.errors == 1);
    assert_eq!(status.lost, 1);
    assert!(status.last_error.is_some());
    // Back: once the pause after the error is over, samples are written again.
    std::fs::create_dir_all(&dir).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while stats.status().messages < 2 {
        assert!(Instant::now() < deadline, "{:?}", stats.status());
        session
            .put("t/a", b"again", &PutOptions::default())
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    recording.stop();
    assert_eq!(stats.status().errors, 1);
    session.close();
    let _ = std::fs::remove_dir_all(&dir);
}
