//! Routing scenarios of a router with in-memory faces.

use std::sync::atomic::Ordering;

use weft_proto::core::{CongestionControl, WhatAmI};
use weft_proto::network::{InterestMode, InterestOptions};

use super::super::entity::EntityKind;
use super::super::face_transport::FaceTransport;
use super::*;

const CLIENT: WhatAmI = WhatAmI::Client;

#[test]
fn data_reaches_the_subscribed_faces_only() {
    let router = Scenario::new(WhatAmI::Router);
    let subscriber = router.attach(1, CLIENT);
    let publisher = router.attach(2, CLIENT);
    let bystander = router.attach(3, CLIENT);
    router.receive(&subscriber, &super::subscriber(1, "demo/**"));
    router.receive(&publisher, &put("demo/a", b"one", CongestionControl::Drop));
    router.receive(&publisher, &put("other/a", b"two", CongestionControl::Drop));

    assert_eq!(
        data(&subscriber.take_sent()),
        [("demo/a".to_owned(), b"one".to_vec())]
    );
    assert_eq!(data(&publisher.take_sent()), []);
    assert_eq!(data(&bystander.take_sent()), []);
}

#[test]
fn a_congested_destination_loses_only_its_own_copies() {
    let router = Scenario::new(WhatAmI::Router);
    let slow = router.attach(1, CLIENT);
    let normal = router.attach(2, CLIENT);
    let publisher = router.attach(3, CLIENT);
    for s in [&slow, &normal] {
        router.receive(s, &super::subscriber(1, "demo/**"));
    }
    slow.set_congested(true);
    for i in 0..100u32 {
        let payload = i.to_le_bytes();
        router.receive(
            &publisher,
            &put("demo/a", &payload, CongestionControl::Drop),
        );
    }

    assert_eq!(data(&normal.take_sent()).len(), 100);
    assert_eq!(data(&slow.take_sent()).len(), 0);
    assert_eq!(slow.stats().dropped.load(Ordering::Relaxed), 100);
    assert_eq!(normal.stats().dropped.load(Ordering::Relaxed), 0);
    // Each face's subscription counts what it drew: sent, or dropped.
    let traffic = |t: &dyn FaceTransport| {
        let st = router.inner().lock();
        let face = &st.faces[&t.peer_zid()];
        st.declared
            .subscribers
            .traffic_of(t.peer_zid(), &face.subscribers)
    };
    assert_eq!(traffic(&*slow), [("demo/**".to_owned(), 0, 0, 100)]);
    assert_eq!(traffic(&*normal), [("demo/**".to_owned(), 100, 400, 0)]);
    // "Why didn't it get it": it would receive the put, and 100 were dropped to it.
    let explained = router
        .inner()
        .explain_put("demo/a", Some(publisher.peer_zid()))
        .unwrap();
    let verdict = |t: &dyn FaceTransport| {
        explained
            .faces
            .iter()
            .find(|f| f.zid == t.peer_zid())
            .cloned()
            .unwrap()
    };
    let (slow_says, normal_says) = (verdict(&*slow), verdict(&*normal));
    assert!(slow_says.receives, "{slow_says:?}");
    assert_eq!(slow_says.congestion_drops, 100);
    assert_eq!(normal_says.congestion_drops, 0);
    // Nobody was closed for it.
    for t in [&slow, &normal, &publisher] {
        assert_eq!(t.closed_for(), None);
    }
    assert_eq!(router.inner().lock().faces.len(), 3);

    // Once it has room again, it gets what follows.
    slow.set_congested(false);
    router.receive(
        &publisher,
        &put("demo/a", b"later", CongestionControl::Drop),
    );
    assert_eq!(
        data(&slow.take_sent()),
        [("demo/a".to_owned(), b"later".to_vec())]
    );
}

#[test]
fn a_closed_face_takes_its_declarations_with_it() {
    let router = Scenario::new(WhatAmI::Router);
    let leaving = router.attach(1, CLIENT);
    let staying = router.attach(2, CLIENT);
    let publisher = router.attach(3, CLIENT);
    router.receive(&leaving, &super::subscriber(1, "demo/**"));
    router.receive(&leaving, &queryable(2, "store/**"));
    router.receive(&staying, &super::subscriber(1, "demo/a"));
    router.receive(
        &publisher,
        &put("demo/a", b"before", CongestionControl::Block),
    );
    assert_eq!(data(&leaving.take_sent()).len(), 1);

    router.detach(&leaving);
    router.receive(
        &publisher,
        &put("demo/a", b"after", CongestionControl::Block),
    );

    assert_eq!(data(&leaving.take_sent()), []);
    assert_eq!(
        data(&staying.take_sent()),
        [
            ("demo/a".to_owned(), b"before".to_vec()),
            ("demo/a".to_owned(), b"after".to_vec())
        ]
    );
    let st = router.inner().lock();
    assert_eq!(st.declared.subscribers.keys(), 1, "only demo/a is left");
    assert_eq!(st.declared.queryables.keys(), 0);
}

#[test]
fn declaration_churn_leaves_nothing_behind() {
    let router = Scenario::new(WhatAmI::Router);
    let watcher = router.attach(1, WhatAmI::Peer);
    for cycle in 0..2_000u32 {
        let node = router.attach(100 + u128::from(cycle), CLIENT);
        let key = format!("churn/{cycle}/**");
        router.receive(&node, &super::subscriber(1, &key));
        router.receive(&node, &queryable(2, &key));
        router.receive(
            &node,
            &own_declaration(EntityKind::Token, 3, &key, false, None),
        );
        router.receive(&node, &request(7, "elsewhere/**"));
        router.detach(&node);
        // The peer is told of each declaration and of its withdrawal.
        let told = watcher.take_sent();
        assert!(told.len() >= 6, "cycle {cycle}: {:?}", seen(&told));
    }
    let st = router.inner().lock();
    assert_eq!(st.faces.len(), 1);
    assert_eq!(st.declared.subscribers.keys(), 0);
    assert_eq!(st.declared.queryables.keys(), 0);
    assert!(
        st.routing.routed_ids.is_empty(),
        "{} routed ids kept",
        st.routing.routed_ids.len()
    );
    let queries = router.inner().queries();
    assert!(queries.forwarded.is_empty());
    assert!(queries.fanout.is_empty());
}

#[test]
fn every_reply_reaches_the_querier_then_one_final() {
    const PER_QUERYABLE: usize = 2_000;
    let router = Scenario::new(WhatAmI::Router);
    let querier = router.attach(1, CLIENT);
    let stores: Vec<_> = (0..3).map(|i| router.attach(10 + i, CLIENT)).collect();
    for s in &stores {
        router.receive(s, &queryable(1, "store/**"));
    }
    router.receive(&querier, &request(42, "store/**"));

    for (n, store) in stores.iter().enumerate() {
        let queries: Vec<u32> = seen(&store.take_sent())
            .into_iter()
            .filter_map(|s| match s {
                Seen::Query(id, key) if key == "store/**" => Some(id),
                _ => None,
            })
            .collect();
        assert_eq!(queries.len(), 1, "store {n} gets the query once");
        for i in 0..PER_QUERYABLE {
            let key = format!("store/{n}/{i}");
            router.receive(store, &reply(queries[0], &key, b"v"));
        }
        router.receive(store, &reply_final(queries[0]));
    }

    let got = seen(&querier.take_sent());
    let replies = got
        .iter()
        .filter(|s| matches!(s, Seen::Reply(42, _, _)))
        .count();
    assert_eq!(replies, 3 * PER_QUERYABLE);
    assert_eq!(got.last(), Some(&Seen::Final(42)));
    assert_eq!(
        got.iter().filter(|s| matches!(s, Seen::Final(_))).count(),
        1
    );
}

#[test]
fn a_query_nobody_answers_ends_at_once() {
    let router = Scenario::new(WhatAmI::Router);
    let querier = router.attach(1, CLIENT);
    router.receive(&querier, &request(5, "nothing/**"));
    assert_eq!(seen(&querier.take_sent()), [Seen::Final(5)]);
}

#[test]
fn a_queryable_that_leaves_mid_query_ends_its_share() {
    let router = Scenario::new(WhatAmI::Router);
    let querier = router.attach(1, CLIENT);
    let leaving = router.attach(2, CLIENT);
    let staying = router.attach(3, CLIENT);
    for s in [&leaving, &staying] {
        router.receive(s, &queryable(1, "store/**"));
    }
    router.receive(&querier, &request(9, "store/**"));
    let rid = |t: &Arc<MemoryTransport>| {
        seen(&t.take_sent())
            .into_iter()
            .find_map(|s| match s {
                Seen::Query(id, _) => Some(id),
                _ => None,
            })
            .expect("the query was forwarded")
    };
    let (leaving_rid, staying_rid) = (rid(&leaving), rid(&staying));
    router.receive(&leaving, &reply(leaving_rid, "store/a", b"a"));
    router.detach(&leaving);
    assert!(!seen(&querier.take_sent()).contains(&Seen::Final(9)));
    router.receive(&staying, &reply(staying_rid, "store/b", b"b"));
    router.receive(&staying, &reply_final(staying_rid));

    assert_eq!(
        seen(&querier.take_sent()),
        [
            Seen::Reply(9, "store/b".into(), b"b".to_vec()),
            Seen::Final(9)
        ]
    );
    let queries = router.inner().queries();
    assert!(queries.forwarded.is_empty() && queries.fanout.is_empty());
}

/// What Zenoh-Pico's publisher does: an aggregated subscriber interest on its own key.
#[test]
fn an_aggregated_interest_is_answered_on_its_own_key() {
    let router = Scenario::new(WhatAmI::Router);
    let subscriber = router.attach(1, CLIENT);
    let publisher = router.attach(2, CLIENT);
    router.receive(&subscriber, &super::subscriber(1, "demo/example/**"));
    let options = InterestOptions::SUBSCRIBERS.with(InterestOptions::AGGREGATE);
    let key = "demo/example/zenoh-pico-pub";
    router.receive(
        &publisher,
        &interest(5, InterestMode::CurrentFuture, options, Some(key)),
    );

    let told = seen(&publisher.take_sent());
    assert!(
        told.iter().any(|s| matches!(
            s,
            Seen::Declared(EntityKind::Subscriber, k, Some(5)) if k == key
        )),
        "{told:?}"
    );
    router.receive(&publisher, &put(key, b"hi", CongestionControl::Drop));
    assert_eq!(
        data(&subscriber.take_sent()),
        [(key.to_owned(), b"hi".to_vec())]
    );
}

#[test]
fn oversized_key_expressions_are_refused_without_harming_others() {
    let router = Scenario::new(WhatAmI::Router);
    let hostile = router.attach(1, CLIENT);
    let subscriber = router.attach(2, CLIENT);
    let publisher = router.attach(3, CLIENT);
    router.receive(&subscriber, &super::subscriber(1, "demo/**"));

    let long_sub = format!("**{}", "/a".repeat(13_000));
    router.receive(&hostile, &super::subscriber(1, &long_sub));
    let long_key = vec!["a"; 32_000].join("/");
    router.receive(&hostile, &put(&long_key, b"x", CongestionControl::Drop));
    let refused = router.inner().refused_keys.load(Ordering::Relaxed);
    assert_eq!(refused, 2, "both keys refused and counted");
    assert_eq!(router.inner().lock().declared.subscribers.keys(), 1);

    router.receive(&publisher, &put("demo/a", b"fine", CongestionControl::Drop));
    assert_eq!(
        data(&subscriber.take_sent()),
        [("demo/a".to_owned(), b"fine".to_vec())]
    );
    assert_eq!(hostile.closed_for(), None);
}

#[test]
fn a_get_is_sent_with_its_quality_of_service() {
    let peer = Scenario::new(WhatAmI::Peer);
    let router = peer.attach(1, WhatAmI::Router);
    peer.receive(&router, &super::queryable(1, "q/**"));
    let qos_of_request = |options: &crate::api::GetOptions| {
        drop(peer.session.get("q/k", options).expect("a get"));
        let sent = router.take_sent();
        let requests: Vec<NetworkQos> = sent
            .iter()
            .filter_map(
                |b| match NetworkMessage::decode_exact(b).expect("decodes") {
                    NetworkMessage::Request(r) => Some(r.qos),
                    _ => None,
                },
            )
            .collect();
        assert_eq!(requests.len(), 1, "one request");
        requests[0]
    };
    let default = crate::api::GetOptions::default();
    assert_eq!(qos_of_request(&default), NetworkQos::REQUEST);
    let urgent = crate::api::GetOptions {
        priority: Priority::RealTime,
        congestion_control: CongestionControl::Drop,
        express: true,
        ..crate::api::GetOptions::default()
    };
    assert_eq!(
        qos_of_request(&urgent),
        NetworkQos::new(Priority::RealTime, CongestionControl::Drop, true)
    );
}

/// A link-state list (network OAM 1) naming, by psid, (zid, sn, links by psid).
fn link_state(entries: &[(u64, u128, u64, &[u64])]) -> Vec<u8> {
    use weft_proto::network::linkstate::{encode_list, LinkState};
    let list: Vec<LinkState<'_>> = entries
        .iter()
        .map(|(psid, zid, sn, links)| LinkState {
            psid: *psid,
            sn: *sn,
            zid: Some(weft_proto::core::ZenohId::new(*zid).unwrap()),
            whatami: Some(WhatAmI::Router),
            locators: None,
            links: links.to_vec(),
            weights: None,
            gateway: false,
        })
        .collect();
    let mut body = Vec::new();
    encode_list(&list, &mut body).unwrap();
    body
}

fn oam(body: &[u8]) -> weft_proto::network::NetworkMessage<'_> {
    weft_proto::network::NetworkMessage::Oam(weft_proto::network::NetworkOam {
        id: weft_proto::network::NetworkOam::LINK_STATE,
        qos: weft_proto::core::NetworkQos::DECLARE,
        timestamp: None,
        unknown: Vec::new(),
        body: weft_proto::ext::ExtBody::ZBuf(body),
    })
}

/// The declarations among what a node was sent: (declared, key if any, node id).
fn declares(sent: &[Vec<u8>]) -> Vec<(bool, String, u16)> {
    use weft_proto::network::{Declaration, NetworkMessage};
    sent.iter()
        .filter_map(|bytes| match NetworkMessage::decode_exact(bytes).ok()? {
            NetworkMessage::Declare(d) => {
                let (declared, key) = match &d.body {
                    Declaration::Subscriber(s) => (true, s.wire_expr.suffix.to_owned()),
                    Declaration::UndeclareSubscriber(u) => (
                        false,
                        u.wire_expr
                            .as_ref()
                            .map_or(String::new(), |w| w.suffix.to_owned()),
                    ),
                    _ => return None,
                };
                Some((declared, key, d.node_id))
            }
            _ => None,
        })
        .collect()
}

/// Routers a (1) and b (2) linked to this one; c (3) behind b, which b's list names by
/// psid 7. What b declares for c (node id 7) is kept under c, forwarded to a naming c by
/// this router's own index (b's own, naming b), withdrawn by key with the same node id, and forgotten when c
/// leaves the mesh.
#[test]
fn a_declaration_forwarded_between_routers_names_its_origin() {
    let router = Scenario::new(WhatAmI::Router);
    let me = router.inner().zid.to_u128();
    let a = router.attach(1, WhatAmI::Router);
    let b = router.attach(2, WhatAmI::Router);
    router.receive(&a, &oam(&link_state(&[(0, 1, 1, &[1]), (1, me, 0, &[])])));
    let with_c = link_state(&[(0, 2, 1, &[1, 7]), (1, me, 0, &[]), (7, 3, 1, &[0])]);
    router.receive(&b, &oam(&with_c));
    let index_here = |zid: u128| {
        router
            .inner()
            .mesh()
            .node_id(weft_proto::core::ZenohId::new(zid).unwrap())
            .expect("an index here")
    };
    let (b_here, c_here) = (index_here(2), index_here(3));
    assert!(b_here != 0 && c_here != 0 && b_here != c_here);
    a.take_sent();

    // b's own subscriber and c's, on one key.
    let declare = |node_id: u16| {
        let mut msg = super::subscriber(0, "far/x");
        if let weft_proto::network::NetworkMessage::Declare(d) = &mut msg {
            d.node_id = node_id;
        }
        msg
    };
    router.receive(&b, &declare(0));
    router.receive(&b, &declare(7));
    assert_eq!(
        declares(&a.take_sent()),
        [
            (true, "far/x".to_owned(), b_here),
            (true, "far/x".to_owned(), c_here)
        ]
    );
    let relayed = |router: &Scenario| {
        let admin = router.session.admin();
        let face = admin.faces.iter().find(|f| f.zid.to_u128() == 2).unwrap();
        (
            face.subscribers.clone(),
            face.relayed
                .iter()
                .map(|r| (r.kind, r.key_expr.clone(), r.origin.to_u128()))
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        relayed(&router),
        (
            vec!["far/x".to_owned(), "far/x".to_owned()],
            vec![("subscriber", "far/x".to_owned(), 3)]
        )
    );

    // c's goes (by key, as Zenoh routers withdraw): b's stays.
    let mut undeclare = super::super::entity::undeclare_msg(EntityKind::Subscriber, 0);
    if let weft_proto::network::NetworkMessage::Declare(d) = &mut undeclare {
        d.node_id = 7;
        if let weft_proto::network::Declaration::UndeclareSubscriber(u) = &mut d.body {
            u.wire_expr = Some(weft_proto::core::WireExpr::key("far/x"));
        }
    }
    router.receive(&b, &undeclare);
    assert_eq!(
        declares(&a.take_sent()),
        [(false, "far/x".to_owned(), c_here)]
    );
    assert_eq!(relayed(&router), (vec!["far/x".to_owned()], vec![]));

    // c declares again, then leaves the mesh: what b declared for it is withdrawn.
    router.receive(&b, &declare(7));
    a.take_sent();
    let without_c = link_state(&[(0, 2, 2, &[1]), (1, me, 0, &[])]);
    router.receive(&b, &oam(&without_c));
    assert_eq!(
        declares(&a.take_sent()),
        [(false, "far/x".to_owned(), c_here)]
    );
    assert_eq!(relayed(&router), (vec!["far/x".to_owned()], vec![]));
}

/// What a node was sent, for key expressions declared by id: each message as text.
fn by_id(sent: &[Vec<u8>]) -> Vec<String> {
    use weft_proto::network::{Declaration, NetworkMessage};
    use weft_proto::zenoh::PushBody;
    sent.iter()
        .filter_map(|bytes| {
            match NetworkMessage::decode_exact(bytes).expect("what was sent decodes") {
                NetworkMessage::Push(p) => {
                    let PushBody::Put(put) = &p.body else {
                        return None;
                    };
                    let payload = String::from_utf8_lossy(put.payload);
                    Some(format!(
                        "put {}{} {payload}",
                        p.wire_expr.scope, p.wire_expr.suffix
                    ))
                }
                NetworkMessage::Declare(d) => match &d.body {
                    Declaration::KeyExpr(k) => {
                        Some(format!("declare {} {}", k.id, k.wire_expr.suffix))
                    }
                    Declaration::UndeclareKeyExpr(k) => Some(format!("undeclare {}", k.id)),
                    _ => None,
                },
                _ => None,
            }
        })
        .collect()
}

#[test]
fn a_publisher_names_its_key_by_an_id_it_declared_once_to_each_face() {
    let router = Scenario::new(WhatAmI::Router);
    let first = router.attach(1, CLIENT);
    router.receive(&first, &super::subscriber(1, "demo/**"));
    let publisher = router
        .session
        .declare_publisher("demo/arm", crate::api::PutOptions::default())
        .unwrap();
    publisher.put(b"one").unwrap();
    publisher.put(b"two").unwrap();
    let second = router.attach(2, CLIENT);
    router.receive(&second, &super::subscriber(1, "demo/**"));
    publisher.put(b"three").unwrap();
    // A put on the session names its key in full, as before.
    router
        .session
        .put("demo/arm", b"four", &crate::api::PutOptions::default())
        .unwrap();
    drop(publisher);

    assert_eq!(
        by_id(&first.take_sent()),
        [
            "declare 1 demo/arm",
            "put 1 one",
            "put 1 two",
            "put 1 three",
            "put 0demo/arm four",
            "undeclare 1"
        ]
    );
    assert_eq!(
        by_id(&second.take_sent()),
        [
            "declare 1 demo/arm",
            "put 1 three",
            "put 0demo/arm four",
            "undeclare 1"
        ]
    );
    // The id is given back, and the next publisher declares it again.
    let again = router
        .session
        .declare_publisher("demo/other", crate::api::PutOptions::default())
        .unwrap();
    again.put(b"five").unwrap();
    assert_eq!(
        by_id(&first.take_sent()),
        ["declare 1 demo/other", "put 1 five"]
    );
}
