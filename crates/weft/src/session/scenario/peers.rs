//! A router's peers, in memory: the router passes nothing from one peer to another, and
//! tells each where the others can be reached (gossip).

use weft_proto::core::{CongestionControl, WhatAmI};
use weft_proto::ext::ExtBody;
use weft_proto::network::linkstate::{decode_list, encode_list, LinkState};
use weft_proto::network::{InterestMode, InterestOptions, NetworkMessage, NetworkOam};

use super::super::entity::{own_declaration, EntityKind};
use super::*;

const PEER: WhatAmI = WhatAmI::Peer;
const CLIENT: WhatAmI = WhatAmI::Client;

/// One entry of a gossip list: id, role, locators.
type Named = (u128, WhatAmI, Option<Vec<String>>);

/// The gossip lists among what a node was sent, entry by entry.
fn gossip(sent: &[Vec<u8>]) -> Vec<Vec<Named>> {
    sent.iter()
        .filter_map(|bytes| {
            let msg = NetworkMessage::decode_exact(bytes).expect("what was sent decodes");
            let NetworkMessage::Oam(oam) = msg else {
                return None;
            };
            let ExtBody::ZBuf(body) = oam.body else {
                return None;
            };
            assert_eq!(oam.id, NetworkOam::LINK_STATE);
            let list = decode_list(body).expect("a link-state list");
            Some(
                list.iter()
                    .map(|e| {
                        (
                            e.zid.expect("an id").to_u128(),
                            e.whatami.expect("a role"),
                            e.locators
                                .as_ref()
                                .map(|l| l.iter().map(ToString::to_string).collect()),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

/// The list a peer sends when it connects: itself, reachable at `locator`.
fn introduction(zid: u128, locator: &str) -> Vec<u8> {
    let entry = LinkState {
        psid: 0,
        sn: 2,
        zid: Some(ZenohId::new(zid).unwrap()),
        whatami: Some(PEER),
        locators: Some(vec![locator]),
        links: Vec::new(),
        weights: None,
        gateway: false,
    };
    let mut body = Vec::new();
    encode_list(&[entry], &mut body).unwrap();
    body
}

fn oam(body: &[u8]) -> NetworkMessage<'_> {
    NetworkMessage::Oam(NetworkOam {
        id: NetworkOam::LINK_STATE,
        qos: weft_proto::core::NetworkQos::DECLARE,
        timestamp: None,
        unknown: Vec::new(),
        body: ExtBody::ZBuf(body),
    })
}

#[test]
fn nothing_passes_from_one_peer_to_another() {
    let router = Scenario::new(WhatAmI::Router);
    let p1 = router.attach(1, PEER);
    let p2 = router.attach(2, PEER);
    let client = router.attach(3, CLIENT);
    router.receive(&p1, &subscriber(1, "demo/**"));
    router.receive(
        &p1,
        &own_declaration(EntityKind::Token, 2, "lv/p1", false, None),
    );
    router.receive(&p1, &queryable(3, "q/**"));
    router.receive(&client, &subscriber(1, "demo/a"));
    // p2 hears of none of p1's entities (of the client's subscriber only).
    let told: Vec<Seen> = seen(&p2.take_sent())
        .into_iter()
        .filter(|s| matches!(s, Seen::Declared(..)))
        .collect();
    assert_eq!(
        told,
        [Seen::Declared(
            EntityKind::Subscriber,
            "demo/a".into(),
            None
        )]
    );
    // p2's data reaches the client, not p1.
    router.receive(&p2, &put("demo/a", b"from p2", CongestionControl::Drop));
    assert_eq!(data(&p1.take_sent()), []);
    assert_eq!(
        data(&client.take_sent()),
        [("demo/a".to_owned(), b"from p2".to_vec())]
    );
    // The client's data reaches the peer subscribed.
    router.receive(&client, &put("demo/b", b"from c", CongestionControl::Drop));
    assert_eq!(data(&p1.take_sent()).len(), 1);
    // A liveliness get from p2 does not list p1's token; a client's does.
    let tokens = InterestOptions::TOKENS;
    router.receive(
        &p2,
        &interest(7, InterestMode::Current, tokens, Some("lv/**")),
    );
    let told = seen(&p2.take_sent());
    assert!(
        !told
            .iter()
            .any(|s| matches!(s, Seen::Declared(EntityKind::Token, ..))),
        "{told:?}"
    );
    router.receive(
        &client,
        &interest(8, InterestMode::Current, tokens, Some("lv/**")),
    );
    assert!(seen(&client.take_sent()).contains(&Seen::Declared(
        EntityKind::Token,
        "lv/p1".into(),
        Some(8)
    )));
    // A query from p2 is not sent to p1's queryable: it ends at once.
    router.receive(&p2, &request(9, "q/x"));
    assert!(seen(&p1.take_sent()).is_empty());
    assert_eq!(seen(&p2.take_sent()), [Seen::Final(9)]);
}

#[test]
fn a_router_tells_its_peers_where_the_others_are() {
    let router = Scenario::new(WhatAmI::Router);
    let p1 = router.attach(1, PEER);
    let client = router.attach(3, CLIENT);
    // The first list names the router itself (it listens nowhere here).
    assert_eq!(gossip(&p1.take_sent())[0][0].1, WhatAmI::Router);
    assert!(
        gossip(&client.take_sent()).is_empty(),
        "clients do not gossip"
    );
    let p1_intro = introduction(1, "tcp/127.0.0.1:7001");
    router.receive(&p1, &oam(&p1_intro));
    // A peer arriving later is told where p1 is.
    let p2 = router.attach(2, PEER);
    let lists = gossip(&p2.take_sent());
    assert_eq!(
        lists[0][1],
        (1, PEER, Some(vec!["tcp/127.0.0.1:7001".to_string()]))
    );
    // And p1 is told where p2 is once p2 says it.
    let p2_intro = introduction(2, "tcp/127.0.0.1:7002");
    router.receive(&p2, &oam(&p2_intro));
    assert_eq!(
        gossip(&p1.take_sent()),
        [vec![(
            2,
            PEER,
            Some(vec!["tcp/127.0.0.1:7002".to_string()])
        )]]
    );
    assert!(gossip(&client.take_sent()).is_empty());
}
