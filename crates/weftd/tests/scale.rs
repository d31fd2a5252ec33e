//! One weftd holds many client sessions with few threads: the I/O threads serve every
//! link, whatever the number of sessions.

mod common;

use std::time::{Duration, Instant};

use common::{raise_open_files_limit, sockets, threads, Weftd};
use weft::PutOptions;
use weft_proto::network::NetworkMessage;
use weft_proto::zenoh::PushBody;
use weft_testkit::free_port;
use weft_testkit::raw::RawClient;

/// Sessions opened by the test.
const SESSIONS: usize = 1000;

/// Opens a raw client session subscribed to `key`.
fn subscriber(port: u16, zid: u128, key: &str) -> RawClient {
    let mut client = RawClient::connect(port, zid).unwrap();
    client.declare_subscriber(1, key).unwrap();
    client
}

#[test]
fn a_thousand_client_sessions_are_all_served_by_a_bounded_number_of_threads() {
    raise_open_files_limit(2 * SESSIONS as u64 + 256);
    let weftd = Weftd::with_config(
        free_port(),
        "{ transport: { unicast: { max_sessions: 2000 } } }",
        &[],
    );
    let at_rest = threads(weftd.pid());
    let start = Instant::now();
    let mut clients: Vec<RawClient> = (0..SESSIONS)
        .map(|i| subscriber(weftd.port, 0x5ca1e000 + i as u128, "scale/**"))
        .collect();
    let opened = start.elapsed();
    // Handshake threads end with their handshake: what stays is bounded by the cores.
    let loaded = threads(weftd.pid());
    eprintln!(
        "{SESSIONS} sessions opened in {opened:?}; weftd threads: {at_rest} at rest, {loaded} \
         with them"
    );
    assert!(
        loaded <= at_rest + weft::executor::MAX_IO_THREADS,
        "{loaded} threads for {SESSIONS} sessions ({at_rest} at rest)"
    );

    // Every session is served: one put reaches each of the thousand subscribers.
    let publisher = weftd.weft_client();
    // The publisher's route is ready once one subscriber's declaration reached it.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        publisher
            .put("scale/probe", b"x", &PutOptions::default())
            .unwrap();
        let got = clients[SESSIONS - 1].recv_until(
            Duration::from_millis(200),
            |m| matches!(m, NetworkMessage::Push(p) if matches!(p.body, PushBody::Put(_))),
        );
        if got.is_ok() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the last subscriber never got a put"
        );
    }
    publisher
        .put("scale/all", b"to everyone", &PutOptions::default())
        .unwrap();
    for (i, client) in clients.iter_mut().enumerate() {
        client
            .recv_until(Duration::from_secs(10), |m| {
                matches!(m, NetworkMessage::Push(p)
                    if matches!(&p.body, PushBody::Put(put) if put.payload == b"to everyone"))
            })
            .unwrap_or_else(|e| panic!("subscriber {i} did not get the put: {e}"));
    }
}

/// The threads of this process.
fn own_threads() -> usize {
    threads(std::process::id())
}

/// A process holding many weft client sessions (each with gets under way) uses the I/O
/// threads and the links loop (which fires the gets' deadlines), whatever the number of
/// sessions: no thread waits for a session's end (the face reconnects when it ends) or
/// for a get's deadline. Each session
/// still reconnects: weftd restarted on the same port, each session's put reaches it.
#[test]
fn a_process_with_many_client_sessions_has_a_bounded_number_of_threads() {
    const CLIENTS: usize = 300;
    raise_open_files_limit(2 * SESSIONS as u64 + 256);
    let port = free_port();
    let weftd = Weftd::start(port, &[]);
    let at_rest = own_threads();
    let sessions: Vec<weft::Session> = (0..CLIENTS).map(|_| weftd.weft_client()).collect();
    let gets: Vec<_> = sessions
        .iter()
        .map(|s| s.get("nothing/**", &weft::GetOptions::default()).unwrap())
        .collect();
    let loaded = own_threads();
    assert!(
        loaded <= at_rest + weft::executor::MAX_IO_THREADS + 1,
        "{loaded} threads for {CLIENTS} client sessions ({at_rest} before)"
    );
    drop(gets);

    // Every session connects again once weftd is back, on a thread started when its
    // session ended.
    weftd.kill();
    let weftd = Weftd::start(port, &[]);
    let listener = weftd.weft_client();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
    let record = seen.clone();
    let _sub = listener
        .declare_subscriber("back/*", move |s| {
            record
                .lock()
                .unwrap()
                .insert(s.key_expr.as_str().to_owned());
        })
        .unwrap();
    // Each session puts on a key of its own until weftd has routed one of them.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let missing: Vec<usize> = (0..CLIENTS)
            .filter(|i| !seen.lock().unwrap().contains(&format!("back/{i}")))
            .collect();
        if missing.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {CLIENTS} sessions did not reconnect",
            missing.len()
        );
        for i in missing {
            let _ = sessions[i].put(&format!("back/{i}"), b"x", &PutOptions::default());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(own_threads() <= at_rest + weft::executor::MAX_IO_THREADS + 1);
}

/// The names of process `pid`'s threads, for the failure message.
fn thread_names(pid: u32) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|dir| {
            dir.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                .map(|n| n.trim().to_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Stalled handshakes: connections that send nothing.
const STALLED: usize = 500;
/// Client sessions over UDP.
const UDP_SESSIONS: usize = 20;
/// Connectors retrying endpoints where nothing listens.
const DEAD_ENDPOINTS: usize = 20;

#[test]
fn sessions_listeners_of_every_kind_stalled_handshakes_and_retrying_connectors_share_a_few_threads()
{
    raise_open_files_limit(2 * (SESSIONS + STALLED) as u64 + 512);
    let pki = weft_testkit::certs::Pki::new("weftd-threads");
    let config = format!(
        r#"{{ transport: {{ unicast: {{ max_sessions: 2000, accept_pending: 1000,
            accept_timeout: 120000 }},
            link: {{ tls: {{ listen_certificate: "{}", listen_private_key: "{}" }} }} }} }}"#,
        pki.server_cert, pki.server_key,
    );
    let dir = std::env::temp_dir().join(format!("weftd-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let unix = dir.join("weftd.sock");
    let _ = std::fs::remove_file(&unix);
    let udp = format!("udp/127.0.0.1:{}", free_port());
    let mut args = vec![
        "-l".to_string(),
        format!("tls/127.0.0.1:{}", free_port()),
        "-l".to_string(),
        format!("quic/127.0.0.1:{}", free_port()),
        "-l".to_string(),
        udp.clone(),
        "-l".to_string(),
        format!("unixsock-stream/{}", unix.display()),
    ];
    for _ in 0..DEAD_ENDPOINTS {
        args.push("-e".to_string());
        args.push(format!("tcp/127.0.0.1:{}", free_port()));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let weftd = Weftd::with_config(free_port(), &config, &args);
    let pid = weftd.pid();
    let stalled: Vec<std::net::TcpStream> = (0..STALLED)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", weftd.port)).unwrap())
        .collect();
    let clients: Vec<RawClient> = (0..SESSIONS)
        .map(|i| subscriber(weftd.port, 0x7e_ad00_0000 + i as u128, "threads/**"))
        .collect();
    // Sessions over UDP too: each has a socket of its own in weftd, read by the I/O
    // threads like the others.
    let over_udp: Vec<weft::Session> = (0..UDP_SESSIONS)
        .map(|_| {
            weft::open(weft::Config {
                mode: weft::WhatAmI::Client,
                multicast_scouting: false,
                connect: vec![udp.parse().unwrap()],
                ..weft::Config::default()
            })
            .expect("a session over UDP")
        })
        .collect();
    // weftd holds a socket for each session and each stalled connection once it has
    // accepted them.
    let deadline = Instant::now() + Duration::from_secs(30);
    while sockets(pid) < SESSIONS + STALLED + UDP_SESSIONS {
        assert!(
            Instant::now() < deadline,
            "weftd holds {} sockets, fewer than its {SESSIONS} sessions and {STALLED} \
             stalled connections",
            sockets(pid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Still served: a new session opens and receives a put.
    let publisher = weftd.weft_client();
    let got = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = got.clone();
    let sub = publisher
        .declare_subscriber("threads/probe", move |_| {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        })
        .unwrap();
    publisher
        .put("threads/probe", b"x", &PutOptions::default())
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !got.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the new session got nothing");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(sub);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let names = thread_names(pid);
    eprintln!(
        "{SESSIONS} sessions, {UDP_SESSIONS} over UDP, {STALLED} stalled handshakes, 5 \
         listeners, {DEAD_ENDPOINTS} connectors: weftd runs {} threads on {cores} cores: \
         {names:?}",
        names.len()
    );
    assert!(
        names.len() <= cores + 4,
        "weftd runs {} threads, more than {cores} cores + 4: {names:?}",
        names.len()
    );
    drop((clients, stalled, over_udp));
    let _ = std::fs::remove_dir_all(&dir);
}
