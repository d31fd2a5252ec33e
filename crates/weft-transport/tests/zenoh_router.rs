//! Interop: weft's handshake and framing against a real Eclipse Zenoh router.
//!
//! Starts a Zenoh 1.10.2 router (Python, `tests/interop/zenoh_node.py`) on loopback with
//! a subscriber, connects to it over TCP as a client with weft's [`Initiator`], publishes
//! a small Put and a 200 KB one (fragmented) with weft's [`Transmitter`], and checks that
//! the router's subscriber received both intact.
//! Needs `WEFT_ZENOH_PYTHON` (a Python with `eclipse-zenoh==1.10.2`); without it the test
//! is skipped, unless `WEFT_REQUIRE_INTEROP=1` (set by the test command) makes that a
//! failure.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use weft_proto::batch::framing::PrefixWidth;
use weft_proto::core::{Encoding, Priority, Reliability, WhatAmI, WireExpr, ZenohId};
use weft_proto::network::{NetworkMessage, Push};
use weft_proto::transport::CloseReason;
use weft_proto::zenoh::{PushBody, Put};
use weft_testkit::{free_port, sha256_hex, zenoh_python};
use weft_transport::establish::{close_batch, Initiator, LocalParams, Progress};
use weft_transport::tx::{Pushed, Transmitter};

struct Node(Child);

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn send_batch(stream: &mut TcpStream, batch: &[u8]) {
    let mut framed = Vec::with_capacity(batch.len() + 2);
    PrefixWidth::U16.write(batch.len(), &mut framed).unwrap();
    framed.extend_from_slice(batch);
    stream.write_all(&framed).unwrap();
}

fn recv_batch(stream: &mut TcpStream) -> Vec<u8> {
    let mut len = [0u8; 2];
    stream.read_exact(&mut len).unwrap();
    let mut batch = vec![0u8; usize::from(u16::from_le_bytes(len))];
    stream.read_exact(&mut batch).unwrap();
    batch
}

#[test]
fn a_zenoh_router_accepts_our_session_and_receives_our_put() {
    let Some(python) = zenoh_python() else {
        return;
    };
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/zenoh_node.py");
    let port = free_port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let child = Command::new(python)
        .arg(script)
        .args(["--mode", "router", "--listen", &endpoint])
        .args(["--sub", "weft/**", "--count", "2", "--timeout", "20"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the Zenoh router");
    let mut node = Node(child);
    let (lines_tx, lines) = mpsc::channel();
    let stdout = node.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    assert_eq!(
        lines
            .recv_timeout(Duration::from_secs(20))
            .expect("router ready"),
        "READY"
    );

    let deadline = Instant::now() + Duration::from_secs(10);
    let mut stream = loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => break s,
            Err(e) if Instant::now() < deadline => {
                eprintln!("waiting for the router: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("cannot connect to the router: {e}"),
        }
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.set_nodelay(true).unwrap();

    let zid = ZenohId::new(0x00ab_cdef_0123_4567_89ab_cdef).unwrap();
    let mut handshake = Initiator::new(LocalParams::new(zid, WhatAmI::Client));
    let mut out = Vec::new();
    handshake.start(&mut out).unwrap();
    send_batch(&mut stream, &out);
    let session = loop {
        let batch = recv_batch(&mut stream);
        match handshake.on_batch(&batch, &mut out).expect("handshake") {
            Progress::Reply => send_batch(&mut stream, &out),
            Progress::Established(n) => break n,
        }
    };
    assert_eq!(session.peer_whatami, WhatAmI::Router);
    assert!(session.qos, "a Zenoh router offers QoS");
    assert_eq!(session.patch, 1);

    // One small put, then one large enough to be fragmented (the router's batch size on
    // loopback is 49152), both through the transmitter.
    let mut tx = Transmitter::new(&session, usize::from(session.batch_size) - 2);
    let mut put = Put::new(b"hello from weft");
    put.encoding = Encoding {
        id: 4,
        schema: None,
    };
    put.attachment = Some(b"att");
    let small = NetworkMessage::Push(Push::new(
        WireExpr::key("weft/interop/hello"),
        PushBody::Put(put),
    ));
    assert_eq!(
        tx.push(&small, Priority::Data, Reliability::Reliable)
            .unwrap(),
        Pushed::Appended
    );
    send_batch(&mut stream, tx.take_lane(Priority::Data));
    let big_payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let big = NetworkMessage::Push(Push::new(
        WireExpr::key("weft/interop/big"),
        PushBody::Put(Put::new(&big_payload)),
    ));
    assert_eq!(
        tx.push(&big, Priority::Data, Reliability::Reliable)
            .unwrap(),
        Pushed::Full
    );
    let mut fragments = Vec::new();
    tx.fragment(&big, Priority::Data, Reliability::Reliable, |b| {
        fragments.push(b.to_vec())
    })
    .unwrap();
    assert!(fragments.len() >= 5);
    for f in &fragments {
        send_batch(&mut stream, f);
    }

    let sample = lines
        .recv_timeout(Duration::from_secs(10))
        .expect("the router's subscriber receives the put");
    let sample: serde_json::Value = serde_json::from_str(&sample).unwrap();
    assert_eq!(sample["key"], "weft/interop/hello");
    assert_eq!(sample["payload"], "hello from weft");
    assert_eq!(sample["encoding"], "text/plain");
    assert_eq!(sample["attachment"], "att");
    let sample = lines
        .recv_timeout(Duration::from_secs(10))
        .expect("the router's subscriber receives the fragmented put");
    let sample: serde_json::Value = serde_json::from_str(&sample).unwrap();
    assert_eq!(sample["key"], "weft/interop/big");
    assert_eq!(sample["len"], 200_000);
    assert_eq!(sample["sha256"], sha256_hex(&big_payload));

    out.clear();
    close_batch(CloseReason::GENERIC, &mut out).unwrap();
    send_batch(&mut stream, &out);
    let status = node.0.wait().unwrap();
    assert!(status.success(), "router exited with {status}");
}
