//! TLS links on loopback, with certificates made by the test.

use std::io;
use std::time::{Duration, Instant, SystemTime};

use weft_testkit::certs::Pki;

use super::{PemSource, TlsSettings};
use crate::endpoint::Endpoint;
use crate::link::{BatchReader, Link, LinkSettings, Listener, TcpBuffers};

fn file(path: &str) -> Option<PemSource> {
    Some(PemSource::File(path.into()))
}

pub(super) fn server_settings(pki: &Pki, mtls: bool) -> TlsSettings {
    TlsSettings {
        root_ca_certificate: file(&pki.ca),
        listen_certificate: file(&pki.server_cert),
        listen_private_key: file(&pki.server_key),
        enable_mtls: mtls,
        ..TlsSettings::default()
    }
}

pub(super) fn client_settings(pki: &Pki, mtls: bool) -> TlsSettings {
    TlsSettings {
        root_ca_certificate: file(&pki.ca),
        connect_certificate: file(&pki.client_cert),
        connect_private_key: file(&pki.client_key),
        enable_mtls: mtls,
        ..TlsSettings::default()
    }
}

/// Both ends of a TLS link after their handshakes (each `Err` with why it failed).
fn pair(
    server: TlsSettings,
    client: TlsSettings,
    host: &str,
) -> (io::Result<Link>, io::Result<Link>) {
    let ep: Endpoint = "tls/127.0.0.1:0".parse().unwrap();
    let settings = LinkSettings {
        tcp: TcpBuffers::default(),
        tls: server,
    };
    let listener = Listener::bind(&ep, &settings).unwrap();
    let bound = listener.local_endpoint().unwrap();
    let port = bound.rsplit_once(':').unwrap().1;
    let deadline = Instant::now() + Duration::from_secs(10);
    let accepting = std::thread::spawn(move || {
        let mut link = listener.accept()?;
        link.handshake_tls(deadline)?;
        Ok(link)
    });
    let to: Endpoint = format!("tls/{host}:{port}").parse().unwrap();
    let settings = LinkSettings {
        tcp: TcpBuffers::default(),
        tls: client,
    };
    let connected = Link::connect(&to, Duration::from_secs(5), &settings).and_then(|mut l| {
        l.handshake_tls(deadline)?;
        Ok(l)
    });
    if connected.is_err() {
        // The server may wait for a peer that gave up: its own error is what it saw.
        let _ = std::net::TcpStream::connect(format!("127.0.0.1:{port}"));
    }
    (accepting.join().unwrap(), connected)
}

/// Waits at most 5 s for `link`'s socket to be ready for `events`.
fn wait(link: &Link, events: nix::poll::PollFlags) {
    use nix::poll::{poll, PollFd, PollTimeout};
    let _ = poll(
        &mut [PollFd::new(link.fd(), events)],
        PollTimeout::from(5000u16),
    );
}

#[test]
fn batches_cross_a_tls_link_whole_and_in_order_through_non_blocking_sockets() {
    let pki = Pki::new("stream");
    let (server, client) = pair(
        server_settings(&pki, false),
        client_settings(&pki, false),
        "localhost",
    );
    let (server, client) = (server.unwrap(), client.unwrap());
    client.set_nonblocking().unwrap();
    server.set_nonblocking().unwrap();
    // Batches of many sizes, far more than the socket buffers and rustls's own hold:
    // writes stop part-way and go on from where they stopped.
    let batches: Vec<Vec<u8>> = (0..400u32)
        .map(|i| {
            let len = [1, 100, 1500, 16_000, 40_000, 65_535][i as usize % 6];
            (0..len).map(|j| (i as usize + j) as u8).collect()
        })
        .collect();
    let expected: Vec<u8> = batches
        .iter()
        .flat_map(|b| {
            let mut framed = (b.len() as u16).to_le_bytes().to_vec();
            framed.extend_from_slice(b);
            framed
        })
        .collect();
    let total = expected.len();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::with_capacity(total);
        let mut buf = vec![0u8; 70_000];
        let deadline = Instant::now() + Duration::from_secs(30);
        while got.len() < total {
            assert!(Instant::now() < deadline, "read {} of {total}", got.len());
            match (&server).read_some(&mut buf) {
                Ok(0) => panic!("the link ended early"),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    wait(&server, nix::poll::PollFlags::POLLIN);
                }
                Err(e) => panic!("{e}"),
            }
        }
        got
    });
    for batch in &batches {
        let mut done = 0;
        while !client.write_batch_from(batch, &mut done).unwrap() {
            wait(&client, nix::poll::PollFlags::POLLOUT);
        }
    }
    let got = reader.join().unwrap();
    assert!(got == expected, "the bytes differ");
}

trait ReadSome {
    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize>;
}

impl ReadSome for &Link {
    fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        io::Read::read(self, buf)
    }
}

#[test]
fn the_handshake_and_a_blocking_batch_reader_work_as_on_tcp() {
    let pki = Pki::new("blocking");
    let (server, client) = pair(
        server_settings(&pki, false),
        client_settings(&pki, false),
        "127.0.0.1",
    );
    let (server, client) = (server.unwrap(), client.unwrap());
    assert!(client.describe().starts_with("tls/127.0.0.1:"));
    client.write_batch(b"hello").unwrap();
    client.write_batch_parts(&[b"wor", b"ld"]).unwrap();
    let mut reader = BatchReader::new(server);
    let deadline = Instant::now() + Duration::from_secs(5);
    assert_eq!(
        reader.next_batch_before(deadline).unwrap(),
        Some(&b"hello"[..])
    );
    assert_eq!(
        reader.next_batch_before(deadline).unwrap(),
        Some(&b"world"[..])
    );
    client.shutdown_write();
    assert_eq!(reader.next_batch_before(deadline).unwrap(), None);
}

#[test]
fn a_server_certificate_for_another_name_is_refused_unless_names_are_not_verified() {
    let pki = Pki::new("names");
    let other = pki.authority.issue(&["elsewhere.example"], None);
    let mut server = server_settings(&pki, false);
    server.listen_certificate = Some(PemSource::Inline(other.cert_pem.as_bytes().into()));
    server.listen_private_key = Some(PemSource::Inline(other.key_pem.as_bytes().into()));
    let (_, client) = pair(server.clone(), client_settings(&pki, false), "localhost");
    let e = client.unwrap_err().to_string();
    assert!(e.contains("certificate"), "{e}");
    let lenient = TlsSettings {
        verify_name_on_connect: false,
        ..client_settings(&pki, false)
    };
    let (s, c) = pair(server, lenient, "localhost");
    assert!(s.is_ok() && c.is_ok());
}

#[test]
fn mtls_refuses_a_client_without_a_certificate_or_with_another_cas_and_says_why() {
    let pki = Pki::new("mtls");
    let (server, client) = pair(
        server_settings(&pki, true),
        client_settings(&pki, true),
        "localhost",
    );
    assert!(server.is_ok() && client.is_ok());

    let (server, _) = pair(
        server_settings(&pki, true),
        client_settings(&pki, false),
        "localhost",
    );
    let e = server.unwrap_err().to_string();
    assert!(e.contains("no certificate"), "{e}");

    let stranger = Pki::new("stranger");
    let mut foreign = client_settings(&stranger, true);
    foreign.root_ca_certificate = file(&pki.ca);
    let (server, _) = pair(server_settings(&pki, true), foreign, "localhost");
    let e = server.unwrap_err().to_string();
    assert!(
        e.contains("UnknownIssuer") || e.contains("unknown issuer"),
        "{e}"
    );
}

#[test]
fn the_expiry_of_the_peers_certificate_is_known_when_links_close_on_it() {
    let pki = Pki::new("expiry");
    let at = SystemTime::now() + Duration::from_secs(3600);
    let soon = pki.authority.issue(&["localhost"], Some(at));
    let server = TlsSettings {
        listen_certificate: Some(PemSource::Inline(soon.cert_pem.as_bytes().into())),
        listen_private_key: Some(PemSource::Inline(soon.key_pem.as_bytes().into())),
        ..TlsSettings::default()
    };
    let client = TlsSettings {
        close_link_on_expiration: true,
        ..client_settings(&pki, false)
    };
    let (_, link) = pair(server.clone(), client, "localhost");
    let expires = link.unwrap().closes_at().expect("an expiry");
    let off = expires.duration_since(at).unwrap_or_else(|e| e.duration());
    assert!(off <= Duration::from_secs(1), "{expires:?} vs {at:?}");
    // Not asked for: not watched.
    let (_, link) = pair(server, client_settings(&pki, false), "localhost");
    assert_eq!(link.unwrap().closes_at(), None);
}
