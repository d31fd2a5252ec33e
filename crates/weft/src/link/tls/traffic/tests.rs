//! A weft TLS link against a rustls client on loopback: data both ways, key updates
//! asked by either side, and the ends of the stream.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::{ClientConnection, StreamOwned};
use weft_testkit::certs::Pki;

use crate::link::tls::tests::{client_settings, server_settings};
use crate::link::tls::{LinkOptions, TlsLink};

type RustlsClient = StreamOwned<ClientConnection, TcpStream>;

/// A weft listener's link and a rustls client connected to it, handshakes done.
fn connected() -> (TlsLink, RustlsClient) {
    connected_with(|conn, tcp| {
        while conn.is_handshaking() {
            conn.complete_io(tcp).unwrap();
        }
    })
}

/// A weft listener's link and a rustls client whose side of the handshake `drive` runs.
fn connected_with(
    drive: impl FnOnce(&mut ClientConnection, &mut TcpStream) + Send + 'static,
) -> (TlsLink, RustlsClient) {
    let pki = Pki::new("traffic");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let client_config = client_settings(&pki, false).client_config().unwrap();
    let connecting = std::thread::spawn(move || {
        let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let name = "localhost".try_into().unwrap();
        let mut conn = ClientConnection::new(client_config, name).unwrap();
        drive(&mut conn, &mut tcp);
        StreamOwned::new(conn, tcp)
    });
    let (tcp, _) = listener.accept().unwrap();
    let config = server_settings(&pki, false).server_config().unwrap();
    let mut link = TlsLink::server(tcp, config, LinkOptions::default()).unwrap();
    link.handshake(Instant::now() + Duration::from_secs(10))
        .unwrap();
    (link, connecting.join().unwrap())
}

fn pattern(len: usize, seed: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 31 + seed) % 253) as u8).collect()
}

/// Reads exactly `len` bytes from the weft link.
fn weft_reads(link: &TlsLink, len: usize) -> Vec<u8> {
    let mut got = vec![0; len];
    let mut at = 0;
    while at < len {
        let n = link.read(&mut got[at..]).unwrap();
        assert!(n > 0, "the link ended after {at} of {len} bytes");
        at += n;
    }
    got
}

#[test]
fn data_crosses_both_ways_in_records_of_every_size() {
    let (link, mut client) = connected();
    let link = Arc::new(link);
    let sent_by_client = pattern(3 << 20, 1);
    let sent_by_weft = pattern(3 << 20, 2);
    let writer = {
        let link = link.clone();
        let data = sent_by_weft.clone();
        std::thread::spawn(move || {
            // Writes of many sizes, one byte to several records.
            let mut at = 0;
            for size in [1, 5, 16_384, 16_385, 70_000, 300_000].iter().cycle() {
                if at == data.len() {
                    break;
                }
                let end = (at + size).min(data.len());
                (&*link).write_all(&data[at..end]).unwrap();
                at = end;
            }
        })
    };
    let reader = {
        let link = link.clone();
        std::thread::spawn(move || weft_reads(&link, 3 << 20))
    };
    client.write_all(&sent_by_client).unwrap();
    client.flush().unwrap();
    let mut got = vec![0; sent_by_weft.len()];
    client.read_exact(&mut got).unwrap();
    assert!(got == sent_by_weft, "what weft sent arrived altered");
    writer.join().unwrap();
    assert!(
        reader.join().unwrap() == sent_by_client,
        "what rustls sent arrived altered"
    );
}

#[test]
fn a_key_update_the_peer_asks_for_is_followed_and_answered() {
    let (link, mut client) = connected();
    client.write_all(b"old keys").unwrap();
    // rustls moves to new keys and asks weft to do the same.
    client.conn.refresh_traffic_keys().unwrap();
    client.write_all(b"new keys").unwrap();
    client.flush().unwrap();
    assert_eq!(weft_reads(&link, 16), b"old keysnew keys");
    let traffic = link.traffic.as_ref().unwrap();
    assert!(traffic.shared.update_asked.load(Ordering::Acquire));
    // weft's next write carries its own key update first.
    (&link).write_all(b"answer").unwrap();
    assert!(!traffic.shared.update_asked.load(Ordering::Acquire));
    let mut got = [0; 6];
    client.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"answer");
}

#[test]
fn weft_updates_its_keys_before_they_are_spent() {
    let (link, mut client) = connected();
    let traffic = link.traffic.as_ref().unwrap();
    traffic.tx.lock().unwrap().sealer.set_limit(3);
    // 40 records: a key update after every 3.
    let data = pattern(40 * 16_384, 3);
    let link = Arc::new(link);
    let writer = {
        let (data, link) = (data.clone(), link.clone());
        std::thread::spawn(move || {
            for chunk in data.chunks(16_384) {
                (&*link).write_all(chunk).unwrap();
            }
        })
    };
    let mut got = vec![0; data.len()];
    client.read_exact(&mut got).unwrap();
    writer.join().unwrap();
    assert!(
        got == data,
        "rustls read other bytes across weft's key updates"
    );
}

#[test]
fn both_ends_of_the_stream_are_seen_with_and_without_close_notify() {
    // weft closes with a close_notify: rustls sees a clean end.
    let (link, mut client) = connected();
    (&link).write_all(b"last words").unwrap();
    link.shutdown_write();
    let mut got = Vec::new();
    client.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"last words");
    // rustls closes with a close_notify: weft reads the data, then the end.
    client.write_all(b"bye").unwrap();
    client.conn.send_close_notify();
    client.flush().unwrap();
    assert_eq!(weft_reads(&link, 3), b"bye");
    assert_eq!(link.read(&mut [0; 10]).unwrap(), 0);

    // A TCP end without close_notify (as Zenoh's links close) ends the stream too.
    let (link, mut client) = connected();
    client.write_all(b"abrupt").unwrap();
    client.flush().unwrap();
    client.sock.shutdown(std::net::Shutdown::Both).unwrap();
    assert_eq!(weft_reads(&link, 6), b"abrupt");
    assert_eq!(link.read(&mut [0; 10]).unwrap(), 0);
}

#[test]
fn reads_of_every_size_see_the_same_bytes_decrypted_in_place_or_buffered() {
    let (link, mut client) = connected();
    let data = pattern(2 << 20, 4);
    let writer = {
        let data = data.clone();
        std::thread::spawn(move || {
            for chunk in data.chunks(50_000) {
                client.write_all(chunk).unwrap();
            }
            client.flush().unwrap();
            client
        })
    };
    // Small reads go through the link's own buffer; reads with room for a whole record
    // decrypt into the reader's buffer, carrying a record's start from one to the next.
    let mut got = Vec::with_capacity(data.len());
    let mut buf = vec![0; 300_000];
    for size in [1, 100, 17_000, 16_000 + 420, 40_000, 300_000]
        .iter()
        .cycle()
    {
        if got.len() == data.len() {
            break;
        }
        let size = (*size).min(data.len() - got.len());
        let n = link.read(&mut buf[..size]).unwrap();
        assert!(n > 0, "the link ended after {} bytes", got.len());
        got.extend_from_slice(&buf[..n]);
    }
    writer.join().unwrap();
    assert!(got == data, "the bytes differ");
}

#[test]
fn bytes_that_are_not_a_record_of_the_session_close_the_link_with_a_reason() {
    // Plain bytes where a record should be.
    let (link, mut client) = connected();
    client.sock.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let e = link.read(&mut [0; 100]).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    assert!(e.to_string().contains("type 71"), "{e}");
    // A record whose ciphertext was altered on the way.
    let (link, client) = connected();
    let mut conn = client.conn;
    let mut sock = client.sock;
    conn.writer().write_all(b"payload").unwrap();
    let mut wire = Vec::new();
    conn.write_tls(&mut wire).unwrap();
    let last = wire.len() - 1;
    wire[last] ^= 0x40;
    sock.write_all(&wire).unwrap();
    let e = link.read(&mut [0; 100]).unwrap_err();
    assert!(e.to_string().contains("bad_record_mac"), "{e}");
}

#[test]
fn a_key_update_sent_with_the_peers_finished_is_the_record_layers_to_answer() {
    // The rustls client sends its Finished, a key update asking weft for its own, and
    // data in one write: weft's handshake must leave what follows the Finished to the
    // record layer (rustls would take the key update and drop its answer).
    let (link, mut client) = connected_with(|conn, tcp| {
        // Until the server's Finished: the client's own stays queued.
        while conn.is_handshaking() {
            while conn.wants_write() {
                conn.write_tls(tcp).unwrap();
            }
            conn.read_tls(tcp).unwrap();
            conn.process_new_packets().unwrap();
        }
        conn.refresh_traffic_keys().unwrap();
        conn.writer().write_all(b"after the update").unwrap();
        let mut wire = Vec::new();
        while conn.wants_write() {
            conn.write_tls(&mut wire).unwrap();
        }
        tcp.write_all(&wire).unwrap();
    });
    assert_eq!(weft_reads(&link, 16), b"after the update");
    (&link).write_all(b"answer").unwrap();
    let mut got = [0; 6];
    client.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"answer");
}

#[test]
fn an_alert_is_named_and_a_stream_cut_inside_a_record_is_an_error() {
    use crate::link::tls::record::{Content, Sealer};
    // A fatal alert, sealed with the client's own keys: weft names it.
    let (link, client) = connected();
    let mut sock = client.sock;
    let secrets = client.conn.dangerous_extract_secrets().unwrap();
    let mut sealer = Sealer::new(&secrets.tx.1, secrets.tx.0, u64::MAX).unwrap();
    let mut wire = Vec::new();
    sealer.seal(Content::Alert, &[2, 116], &mut wire).unwrap();
    sock.write_all(&wire).unwrap();
    let e = link.read(&mut [0; 100]).unwrap_err();
    assert!(
        e.to_string().contains("fatal alert: CertificateRequired"),
        "{e}"
    );
    // A record cut short by the end of the stream: an error, not a clean end.
    let (link, client) = connected();
    let (mut conn, mut sock) = (client.conn, client.sock);
    conn.writer().write_all(&[7; 1000]).unwrap();
    let mut wire = Vec::new();
    conn.write_tls(&mut wire).unwrap();
    sock.write_all(&wire[..wire.len() / 2]).unwrap();
    sock.shutdown(std::net::Shutdown::Write).unwrap();
    let e = link.read(&mut [0; 100]).unwrap_err();
    assert!(e.to_string().contains("ended inside a TLS record"), "{e}");
}
