//! User/password authentication in both roles, in memory.

use std::sync::Arc;

use weft_proto::batch::{decode_batch, BatchMessage};
use weft_proto::core::{WhatAmI, ZenohId};
use weft_proto::transport::{CloseReason, Init, Open, TransportMessage};
use weft_proto::DecodeErrorKind;

use super::*;

const CHALLENGE: u64 = 0x1122_3344_5566_7788;

fn zid(v: u128) -> ZenohId {
    ZenohId::new(v).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn client(user: &str, password: &str) -> Initiator {
    Initiator::new(LocalParams::new(zid(0x0403_0201), WhatAmI::Client))
        .with_usrpwd(Arc::new(UsrPwd::new().with_credentials(user, password)))
}

fn dictionary() -> Arc<UsrPwd> {
    let dict = Dictionary::parse("alice:wonderland\nbob:builder\n").unwrap();
    Arc::new(UsrPwd::new().with_dictionary(dict))
}

fn router(usrpwd: Arc<UsrPwd>) -> Acceptor {
    Acceptor::new(LocalParams::new(zid(0xA0), WhatAmI::Router), [5; 16])
        .with_usrpwd(usrpwd, CHALLENGE)
}

fn message(batch: &[u8]) -> TransportMessage<'_> {
    match decode_batch(batch, false).unwrap().remove(0) {
        BatchMessage::Transport(m) => m,
        other => panic!("a transport message expected, got {other:?}"),
    }
}

/// Runs the handshake; returns what each side ended with, and the four batches.
fn run(mut i: Initiator, a: &mut Acceptor) -> (Result<Negotiated, EstablishError>, Vec<Vec<u8>>) {
    let mut sent = Vec::new();
    let (mut to_a, mut to_i) = (Vec::new(), Vec::new());
    let result = (|| {
        i.start(&mut to_a)?;
        sent.push(to_a.clone());
        a.on_batch(&to_a, &mut to_i)?;
        sent.push(to_i.clone());
        i.on_batch(&to_i, &mut to_a)?;
        sent.push(to_a.clone());
        let Progress::Established(at_a) = a.on_batch(&to_a, &mut to_i)? else {
            panic!("the acceptor did not finish");
        };
        sent.push(to_i.clone());
        let Progress::Established(at_i) = i.on_batch(&to_i, &mut to_a)? else {
            panic!("the initiator did not finish");
        };
        assert_eq!(at_i.peer_zid, zid(0xA0));
        Ok(at_a)
    })();
    (result, sent)
}

#[test]
fn a_known_user_with_the_right_password_is_accepted() {
    let mut a = router(dictionary());
    let (result, sent) = run(client("alice", "wonderland"), &mut a);
    let at_a = result.unwrap();
    assert_eq!(at_a.peer_zid, zid(0x0403_0201));
    assert_eq!(a.authenticated_user(), Some("alice"));

    // InitSyn: QoS, Auth [usrpwd unit], Patch 1.
    assert_eq!(hex(&sent[0]), "8109320102030481c301022701");
    // InitAck: Auth [usrpwd z64 challenge].
    let TransportMessage::Init(ack) = message(&sent[1]) else {
        panic!("InitAck expected");
    };
    let mut challenge = vec![0x22];
    weft_proto::Writer::zint(&mut challenge, CHALLENGE).unwrap();
    assert_eq!(ack.auth, Some(&challenge[..]));
    // OpenSyn: Auth [usrpwd zbuf: user, HMAC-SHA3-256 of the password keyed by the nonce].
    let TransportMessage::Open(syn) = message(&sent[2]) else {
        panic!("OpenSyn expected");
    };
    let mut value = vec![0x05];
    value.extend_from_slice(b"alice");
    value.push(32);
    value.extend_from_slice(&sign(CHALLENGE, b"wonderland"));
    let mut expected = vec![0x42, value.len() as u8];
    expected.extend_from_slice(&value);
    assert_eq!(syn.auth, Some(&expected[..]));
    // OpenAck: Auth [usrpwd unit].
    let TransportMessage::Open(ack) = message(&sent[3]) else {
        panic!("OpenAck expected");
    };
    assert_eq!(ack.auth, Some(&[0x02][..]));
}

#[test]
fn a_wrong_password_or_an_unknown_user_is_refused_with_close_generic() {
    let mut a = router(dictionary());
    let (result, _) = run(client("alice", "looking-glass"), &mut a);
    let err = result.unwrap_err();
    assert_eq!(
        err,
        EstablishError::Auth(AuthError::WrongPassword("alice".into()))
    );
    assert_eq!(err.close_reason(), Some(CloseReason::GENERIC));
    assert!(!err.to_string().contains("looking-glass"));
    assert_eq!(a.authenticated_user(), None);

    let (result, _) = run(client("carol", "wonderland"), &mut router(dictionary()));
    let err = result.unwrap_err();
    assert_eq!(
        err,
        EstablishError::Auth(AuthError::UnknownUser("carol".into()))
    );
    assert_eq!(err.close_reason(), Some(CloseReason::GENERIC));
    assert_eq!(
        err.to_string(),
        "authentication failed: unknown user `carol`"
    );
}

#[test]
fn an_initiator_without_credentials_is_refused_at_its_init_syn() {
    let mut a = router(dictionary());
    let plain = Initiator::new(LocalParams::new(zid(0xC1), WhatAmI::Client));
    let (result, sent) = run(plain, &mut a);
    let err = result.unwrap_err();
    assert_eq!(err, EstablishError::Auth(AuthError::Missing("InitSyn")));
    assert_eq!(err.close_reason(), Some(CloseReason::GENERIC));
    assert_eq!(sent.len(), 1, "no InitAck");
    // Settings with a dictionary but no credentials open links without authenticating.
    let dict_only =
        Initiator::new(LocalParams::new(zid(0xC1), WhatAmI::Client)).with_usrpwd(dictionary());
    let (result, _) = run(dict_only, &mut router(dictionary()));
    assert_eq!(
        result.unwrap_err(),
        EstablishError::Auth(AuthError::Missing("InitSyn"))
    );
}

#[test]
fn credentials_without_a_dictionary_refuse_every_initiator() {
    // As in Zenoh: user/password settings make a node require authentication, and
    // without a dictionary nobody passes.
    let own = Arc::new(UsrPwd::new().with_credentials("alice", "wonderland"));
    let (result, _) = run(client("alice", "wonderland"), &mut router(own));
    assert_eq!(
        result.unwrap_err(),
        EstablishError::Auth(AuthError::UnknownUser("alice".into()))
    );
}

#[test]
fn two_routers_with_credentials_and_dictionaries_connect() {
    let both = |user: &str, password: &str| {
        let dict = Dictionary::parse("r1:one\nr2:two\n").unwrap();
        Arc::new(
            UsrPwd::new()
                .with_credentials(user, password)
                .with_dictionary(dict),
        )
    };
    let i = Initiator::new(LocalParams::new(zid(0x0403_0201), WhatAmI::Router))
        .with_usrpwd(both("r1", "one"));
    let mut a = router(both("r2", "two"));
    let (result, _) = run(i, &mut a);
    assert_eq!(result.unwrap().peer_whatami, WhatAmI::Router);
    assert_eq!(a.authenticated_user(), Some("r1"));
}

#[test]
fn an_initiator_with_credentials_refuses_an_acceptor_that_does_not_ask() {
    let mut plain = Acceptor::new(LocalParams::new(zid(0xA0), WhatAmI::Router), [5; 16])
        .with_usrpwd(Arc::new(UsrPwd::new()), CHALLENGE);
    let (result, sent) = run(client("alice", "wonderland"), &mut plain);
    let err = result.unwrap_err();
    assert_eq!(err, EstablishError::Auth(AuthError::Missing("InitAck")));
    assert_eq!(err.close_reason(), Some(CloseReason::GENERIC));
    // The acceptor without settings ignored the Auth extension: no Auth in its InitAck.
    let TransportMessage::Init(ack) = message(&sent[1]) else {
        panic!("InitAck expected");
    };
    assert_eq!(ack.auth, None);

    // An OpenAck without the user/password acknowledgement is refused too.
    let mut i = client("alice", "wonderland");
    let mut a = router(dictionary());
    let (mut to_a, mut to_i) = (Vec::new(), Vec::new());
    i.start(&mut to_a).unwrap();
    a.on_batch(&to_a, &mut to_i).unwrap();
    i.on_batch(&to_i, &mut to_a).unwrap();
    let mut bare = Vec::new();
    TransportMessage::Open(Open::ack(10_000, 1))
        .encode(&mut bare)
        .unwrap();
    assert_eq!(
        i.on_batch(&bare, &mut to_a).unwrap_err(),
        EstablishError::Auth(AuthError::Missing("OpenAck"))
    );
}

#[test]
fn without_settings_nothing_changes_on_the_wire() {
    let params = LocalParams::new(zid(0x0403_0201), WhatAmI::Client);
    let mut plain = Vec::new();
    Initiator::new(params).start(&mut plain).unwrap();
    let mut with_empty = Vec::new();
    Initiator::new(params)
        .with_usrpwd(Arc::new(UsrPwd::new()))
        .with_usrpwd(dictionary())
        .start(&mut with_empty)
        .unwrap();
    assert_eq!(plain, with_empty);
    assert_eq!(hex(&plain), "81093201020304812701");
}

/// An InitSyn from `zid(0xC1)` whose Auth value is `auth`.
fn init_syn_with(auth: &[u8]) -> Vec<u8> {
    let mut syn = Init::syn(WhatAmI::Client, zid(0xC1));
    syn.auth = Some(auth);
    let mut bytes = Vec::new();
    TransportMessage::Init(syn).encode(&mut bytes).unwrap();
    bytes
}

/// An acceptor past a good InitSyn, and the cookie to echo.
fn acceptor_after_init() -> (Acceptor, Vec<u8>) {
    let mut a = router(dictionary());
    let mut out = Vec::new();
    a.on_batch(&init_syn_with(&[0x02]), &mut out).unwrap();
    let TransportMessage::Init(ack) = message(&out) else {
        panic!("InitAck expected");
    };
    let cookie = ack.cookie.unwrap().to_vec();
    (a, cookie)
}

fn open_syn_with(cookie: &[u8], auth: Option<&[u8]>) -> Vec<u8> {
    let mut syn = Open::syn(10_000, 7, cookie);
    syn.auth = auth;
    let mut bytes = Vec::new();
    TransportMessage::Open(syn).encode(&mut bytes).unwrap();
    bytes
}

fn malformed(err: EstablishError) -> weft_proto::DecodeError {
    match err {
        EstablishError::Auth(AuthError::Malformed(e)) => e,
        other => panic!("a malformed-extension error expected, got {other:?}"),
    }
}

#[test]
fn malformed_auth_extensions_are_typed_errors_with_offsets() {
    // InitSyn: a reserved encoding in the chain. The Auth value starts after the header,
    // version, flags, 1-byte zid and the extension's header and length: offset 6.
    let err = router(dictionary())
        .on_batch(&init_syn_with(&[0x62]), &mut Vec::new())
        .unwrap_err();
    assert_eq!(err.close_reason(), Some(CloseReason::GENERIC));
    let e = malformed(err);
    assert!(matches!(
        e.kind,
        DecodeErrorKind::ReservedExtensionEncoding { header: 0x62 }
    ));
    assert_eq!(e.offset, 6);
    // InitSyn: the user/password extension with a value where none belongs.
    let e = malformed(
        router(dictionary())
            .on_batch(&init_syn_with(&[0x22, 0x01]), &mut Vec::new())
            .unwrap_err(),
    );
    assert!(matches!(e.kind, DecodeErrorKind::MalformedExtension { .. }));
    assert_eq!(e.offset, 6);

    // OpenSyn: no Auth extension at all.
    let (mut a, cookie) = acceptor_after_init();
    assert_eq!(
        a.on_batch(&open_syn_with(&cookie, None), &mut Vec::new()),
        Err(EstablishError::Auth(AuthError::Missing("OpenSyn")))
    );
    // OpenSyn: a unit where the user and HMAC belong.
    let (mut a, cookie) = acceptor_after_init();
    let e = malformed(
        a.on_batch(&open_syn_with(&cookie, Some(&[0x02])), &mut Vec::new())
            .unwrap_err(),
    );
    assert!(matches!(e.kind, DecodeErrorKind::MalformedExtension { .. }));
    // OpenSyn: a user name longer than the value; the offset (of the name's first byte)
    // counts in the batch.
    let (mut a, cookie) = acceptor_after_init();
    let batch = open_syn_with(&cookie, Some(&[0x42, 0x02, 0x09, b'a']));
    let e = malformed(a.on_batch(&batch, &mut Vec::new()).unwrap_err());
    assert!(matches!(e.kind, DecodeErrorKind::Truncated { needed: 8 }));
    assert_eq!(e.offset, batch.len() - 1);
    // OpenSyn: bytes after the HMAC.
    let (mut a, cookie) = acceptor_after_init();
    let batch = open_syn_with(&cookie, Some(&[0x42, 0x03, 0x00, 0x00, 0xff]));
    let e = malformed(a.on_batch(&batch, &mut Vec::new()).unwrap_err());
    assert!(matches!(
        e.kind,
        DecodeErrorKind::TrailingBytes { count: 1, .. }
    ));
    assert_eq!(e.offset, batch.len() - 1);
}

#[test]
fn no_mutation_of_a_valid_open_syn_panics_or_passes() {
    let (_, cookie) = acceptor_after_init();
    let mut value = vec![0x05];
    value.extend_from_slice(b"alice");
    value.push(32);
    value.extend_from_slice(&sign(CHALLENGE, b"wonderland"));
    let mut auth = vec![0x42, value.len() as u8];
    auth.extend_from_slice(&value);
    let good = open_syn_with(&cookie, Some(&auth));
    let (mut a, _) = acceptor_after_init();
    assert!(matches!(
        a.on_batch(&good, &mut Vec::new()),
        Ok(Progress::Established(_))
    ));
    // Every byte of the Auth extension changed in turn, and every truncation.
    let start = good.len() - auth.len() - 2;
    for at in start..good.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = good.clone();
            bad[at] ^= flip;
            let (mut a, _) = acceptor_after_init();
            let result = a.on_batch(&bad, &mut Vec::new());
            // A change in the extension chain's length may still decode; it must not
            // authenticate.
            assert!(result.is_err(), "byte {at} ^ {flip:#x} was accepted");
        }
        let (mut a, _) = acceptor_after_init();
        assert!(a.on_batch(&good[..at], &mut Vec::new()).is_err());
    }
}

#[test]
fn a_user_name_is_escaped_where_it_is_displayed() {
    let forged = "mallory\n2026-12-02T00:00:00Z INFO session opened";
    let err = AuthError::UnknownUser(forged.into()).to_string();
    assert_eq!(
        err,
        "unknown user `mallory\\n2026-12-02T00:00:00Z INFO session opened`"
    );
    assert!(!err.contains('\n'));
    let err = AuthError::WrongPassword("a\u{1b}[31mb".into()).to_string();
    assert!(!err.contains('\u{1b}'), "{err}");
}
