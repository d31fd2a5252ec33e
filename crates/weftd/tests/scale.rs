//! One weftd holds many client sessions with few threads: the I/O threads serve every
//! link, whatever the number of sessions.

mod common;

use std::time::{Duration, Instant};

use common::{raise_open_files_limit, threads, Weftd};
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
        loaded <= at_rest + weft::transport::MAX_IO_THREADS,
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
/// threads and one timer thread, whatever the number of sessions: no thread waits for a
/// session's end (the face reconnects when it ends) or for a get's deadline. Each session
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
        loaded <= at_rest + weft::transport::MAX_IO_THREADS + 1,
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
    assert!(own_threads() <= at_rest + weft::transport::MAX_IO_THREADS + 1);
}
