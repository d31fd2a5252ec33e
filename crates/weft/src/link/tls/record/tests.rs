//! weft's records against rustls's own record layer, in memory: a rustls client and
//! server finish a handshake, then the server's keys go to a [`Sealer`] and an
//! [`Opener`] while the client stays with rustls.

use std::io::{IoSlice, Read, Write};

use rustls::{ClientConnection, ServerConnection};
use weft_testkit::certs::Pki;

use super::*;
use crate::link::tls::tests::{client_settings, server_settings};

/// A rustls client and server after their handshake, in memory.
fn handshake_pair() -> (ClientConnection, ServerConnection) {
    let pki = Pki::new("records");
    let (server, client) = (server_settings(&pki, false), client_settings(&pki, false));
    let mut server = ServerConnection::new(server.server_config().unwrap()).unwrap();
    let name = "localhost".try_into().unwrap();
    let mut client = ClientConnection::new(client.client_config().unwrap(), name).unwrap();
    while client.is_handshaking() || server.is_handshaking() || server.wants_write() {
        let mut wire = Vec::new();
        client.write_tls(&mut wire).unwrap();
        let mut wire = &wire[..];
        while !wire.is_empty() {
            server.read_tls(&mut wire).unwrap();
        }
        server.process_new_packets().unwrap();
        let mut wire = Vec::new();
        server.write_tls(&mut wire).unwrap();
        let mut wire = &wire[..];
        while !wire.is_empty() {
            client.read_tls(&mut wire).unwrap();
        }
        client.process_new_packets().unwrap();
    }
    (client, server)
}

/// A finished handshake: the client (rustls) and the server's keys (weft).
fn established() -> (ClientConnection, Sealer, Opener) {
    let (client, server) = handshake_pair();
    let secrets = server.dangerous_extract_secrets().unwrap();
    let sealer = Sealer::new(&secrets.tx.1, secrets.tx.0, u64::MAX).unwrap();
    let opener = Opener::new(&secrets.rx.1, secrets.rx.0).unwrap();
    (client, sealer, opener)
}

/// What the rustls client reads of `wire`.
fn client_reads(client: &mut ClientConnection, wire: &[u8]) -> Vec<u8> {
    let mut wire = wire;
    let mut got = Vec::new();
    while !wire.is_empty() {
        client.read_tls(&mut wire).unwrap();
        client.process_new_packets().unwrap();
        let mut buf = [0; 65536];
        while let Ok(n) = client.reader().read(&mut buf) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
    }
    got
}

/// Opens every record of `wire` in place; the plaintext of each, by kind.
fn open_all(opener: &mut Opener, mut wire: Vec<u8>) -> Vec<(Content, Vec<u8>)> {
    let mut at = 0;
    let mut got = Vec::new();
    while at < wire.len() {
        let opened = opener
            .open(&mut wire[at..])
            .unwrap()
            .expect("a whole record");
        got.push((opened.content, wire[at..at + opened.plaintext_len].to_vec()));
        at += opened.len;
    }
    got
}

#[test]
fn rustls_reads_what_weft_seals_from_scattered_buffers() {
    let (mut client, mut sealer, _) = established();
    let parts: Vec<Vec<u8>> = [0, 1, 700, 16_384, 40_000, 3, 65_535]
        .iter()
        .enumerate()
        .map(|(i, &len)| (0..len).map(|j| (i * 7 + j) as u8).collect())
        .collect();
    let bufs: Vec<IoSlice<'_>> = parts.iter().map(|p| IoSlice::new(p)).collect();
    let total: usize = parts.iter().map(Vec::len).sum();
    let mut wire = Vec::new();
    // Taken in two turns, the first stopping inside a buffer.
    let first = sealer.seal_data(&bufs, 50_000, &mut wire).unwrap();
    assert_eq!(first, 50_000);
    let mut rest = bufs.clone();
    let mut rest = &mut rest[..];
    IoSlice::advance_slices(&mut rest, first);
    let second = sealer.seal_data(rest, usize::MAX, &mut wire).unwrap();
    assert_eq!(first + second, total);
    let expected: Vec<u8> = parts.concat();
    assert!(client_reads(&mut client, &wire) == expected);
    // No record is larger than TLS allows, and each costs the expected overhead.
    let records = total.div_ceil(MAX_PLAINTEXT) + 1;
    assert!(wire.len() <= total + records * OVERHEAD);
}

#[test]
fn weft_opens_what_rustls_seals_in_place() {
    let (mut client, _, mut opener) = established();
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let mut wire = Vec::new();
    for chunk in data.chunks(30_000) {
        client.writer().write_all(chunk).unwrap();
        while client.wants_write() {
            client.write_tls(&mut wire).unwrap();
        }
    }
    client.send_close_notify();
    while client.wants_write() {
        client.write_tls(&mut wire).unwrap();
    }
    let records = open_all(&mut opener, wire);
    let (alerts, data_records): (Vec<_>, Vec<_>) =
        records.into_iter().partition(|(c, _)| *c == Content::Alert);
    let got: Vec<u8> = data_records
        .into_iter()
        .flat_map(|(c, p)| {
            assert_eq!(c, Content::Data);
            p
        })
        .collect();
    assert!(got == data);
    assert_eq!(alerts, vec![(Content::Alert, vec![1, 0])], "close_notify");
}

#[test]
fn a_key_update_sealed_by_weft_moves_rustls_to_the_next_keys() {
    let (mut client, mut sealer, _) = established();
    let mut wire = Vec::new();
    sealer
        .seal_data(&[IoSlice::new(b"before")], usize::MAX, &mut wire)
        .unwrap();
    sealer
        .seal(Content::Handshake, &[24, 0, 0, 1, 0], &mut wire)
        .unwrap();
    assert_eq!(client_reads(&mut client, &wire), b"before");
    // Records sealed with the old keys after the update are refused...
    let mut stale = Vec::new();
    sealer
        .seal_data(&[IoSlice::new(b"stale")], usize::MAX, &mut stale)
        .unwrap();
    let mut stale_wire = &stale[..];
    client.read_tls(&mut stale_wire).unwrap();
    assert!(
        client.process_new_packets().is_err(),
        "old keys after an update"
    );
}

#[test]
fn altered_foreign_oversized_and_partial_records_are_told_apart() {
    // Both ends' keys: the server's sealer, the client's opener.
    let (client, server) = handshake_pair();
    let server = server.dangerous_extract_secrets().unwrap();
    let client = client.dangerous_extract_secrets().unwrap();
    let mut sealer = Sealer::new(&server.tx.1, server.tx.0, u64::MAX).unwrap();
    let fresh_opener = || Opener::new(&client.rx.1, client.rx.0).unwrap();
    let mut wire = Vec::new();
    sealer
        .seal_data(&[IoSlice::new(&[5; 300])], usize::MAX, &mut wire)
        .unwrap();
    // Partial: the header alone, then all but the last byte.
    let mut opener = fresh_opener();
    assert_eq!(opener.open(&mut wire[..3].to_vec()), Ok(None));
    assert_eq!(opener.open(&mut wire[..wire.len() - 1].to_vec()), Ok(None));
    // Altered: one bit of the ciphertext.
    let mut altered = wire.clone();
    altered[HEADER + 10] ^= 1;
    assert_eq!(opener.open(&mut altered), Err(RecordError::BadMac));
    // Whole and unaltered, with the right sequence number.
    let mut whole = wire.clone();
    let opened = fresh_opener().open(&mut whole).unwrap().unwrap();
    assert_eq!(opened.content, Content::Data);
    assert_eq!(&whole[..opened.plaintext_len], &[5; 300][..]);
    assert_eq!(opened.len, wire.len());
    // Foreign: a handshake record, unprotected.
    let mut foreign = wire.clone();
    foreign[0] = 22;
    assert_eq!(
        Opener::record_len(&foreign),
        Err(RecordError::UnexpectedType(22))
    );
    // Oversized: a length past 2^14 + 256.
    let mut oversized = wire;
    oversized[3..5].copy_from_slice(&((MAX_CIPHERTEXT + 1) as u16).to_be_bytes());
    assert_eq!(
        Opener::record_len(&oversized),
        Err(RecordError::Overflow(MAX_CIPHERTEXT + 1))
    );
}
