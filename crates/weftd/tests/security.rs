//! Security settings fail closed: a configuration asking for authentication or TLS that
//! weft cannot honour, or holding a mistake in its access control, stops weftd before it
//! listens, with a message naming the key; access control is enforced as Zenoh's router
//! enforces it: the same clients (by user name, certificate name, ZenohID, interface and
//! link protocol) probe every message kind on both flows through weftd and through
//! Zenoh's router, with the default permission deny and allow, and must get the same
//! deliveries (`acl_probes` runs the probes).

mod acl_probes;
mod common;

use std::time::{Duration, Instant};

use acl_probes::{Client, Flow, Pair, MESSAGES};

use common::{run_weftd, Weftd};
use weft_testkit::free_port;

#[test]
fn weftd_refuses_to_start_with_security_settings_it_cannot_honour() {
    let dir = std::env::temp_dir().join(format!("weftd-security-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            r#"{ transport: { auth: { pubkey: { public_key_file: "pub.pem" } } } }"#,
            "transport.auth.pubkey.public_key_file",
        ),
        (
            r#"{ transport: { link: { tls: { certificate_revocation_list: "crl.pem" } } } }"#,
            "transport.link.tls.certificate_revocation_list",
        ),
    ];
    for (n, (text, key)) in cases.into_iter().enumerate() {
        let path = dir.join(format!("case{n}.json5"));
        std::fs::write(&path, text).unwrap();
        let (code, stderr) = run_weftd(&["-c", path.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{text}: {stderr}");
        assert!(stderr.contains(key), "{text}: {stderr}");
        assert!(stderr.contains("refuses to run"), "{text}: {stderr}");
    }
    // The same through --cfg.
    let (code, stderr) = run_weftd(&["--cfg", "transport/auth/pubkey/key_size:2048"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("transport.auth.pubkey.key_size"),
        "{stderr}"
    );
    // A mistake in the section is refused, naming the field, even when disabled.
    let (code, stderr) = run_weftd(&[
        "--cfg",
        "access_control:{enabled:false,rules:[{id:'r',messages:['publish'],permission:'allow',key_exprs:['a']}]}",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("access_control.rules[0].messages"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An access-control policy exercising both flows, a deny rule inside an allow rule, and
/// a key outside every rule.
const ACL: &str = r#"{ enabled: true, default_permission: "deny",
  rules: [
    { id: "publish", messages: ["put"], flows: ["ingress"], permission: "allow",
      key_exprs: ["demo/**"] },
    { id: "subscribe", messages: ["declare_subscriber"], flows: ["ingress"],
      permission: "allow", key_exprs: ["demo/**", "other/**"] },
    { id: "deliver", messages: ["put", "declare_subscriber"], flows: ["egress"],
      permission: "allow", key_exprs: ["demo/**"] },
    { id: "secret", messages: ["put"], permission: "deny", key_exprs: ["demo/secret/**"] },
    { id: "admin", messages: ["query", "reply"], permission: "allow", key_exprs: ["@/**"] },
  ],
  subjects: [ { id: "loopback", interfaces: ["lo"] } ],
  policies: [ { id: "clients", rules: ["publish", "subscribe", "deliver", "secret", "admin"],
                subjects: ["loopback"] } ] }"#;

/// What a weft client subscribed to `demo/**` and `other/**` receives of a weft client's
/// puts on a few keys through the router at `port` (up to an end marker); `then` runs
/// before both close.
fn delivered_through(port: u16, then: impl FnOnce()) -> Vec<String> {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let client = || {
        weft::open(weft::Config {
            mode: weft::WhatAmI::Client,
            multicast_scouting: false,
            connect: vec![endpoint.parse().unwrap()],
            ..weft::Config::default()
        })
        .unwrap()
    };
    let subscriber = client();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut subs = Vec::new();
    for key in ["demo/**", "other/**"] {
        let seen = seen.clone();
        subs.push(
            subscriber
                .declare_subscriber(key, move |s| {
                    seen.lock().unwrap().push(s.key_expr.to_string())
                })
                .unwrap(),
        );
    }
    let publisher = client();
    let options = weft::PutOptions::default();
    let deadline = Instant::now() + Duration::from_secs(20);
    let arrived = |key: &str| seen.lock().unwrap().iter().any(|k| k == key);
    while !arrived("demo/warmup") {
        assert!(Instant::now() < deadline, "nothing reached the subscriber");
        publisher.put("demo/warmup", b"w", &options).unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    for key in ["demo/a", "demo/secret/b", "other/c", "demo/end"] {
        publisher.put(key, b"x", &options).unwrap();
    }
    while !arrived("demo/end") {
        assert!(Instant::now() < deadline, "the end marker did not arrive");
        std::thread::sleep(Duration::from_millis(10));
    }
    let got: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|k| !["demo/warmup", "demo/end"].contains(&k.as_str()))
        .cloned()
        .collect();
    then();
    drop(subs);
    publisher.close();
    subscriber.close();
    got
}

#[test]
fn weftd_enforces_access_control_as_zenohs_router_does() {
    let config = format!("{{ access_control: {ACL} }}");
    let port = free_port();
    let weftd = Weftd::with_config(port, &config, &[]);
    let denied_in_admin_space = || {
        let admin = weftd.weft_client();
        let replies: Vec<_> = admin
            .get("@/*/router", &weft::GetOptions::default())
            .unwrap()
            .iter()
            .collect();
        let reply = replies.first().expect("the admin space answered");
        let router: serde_json::Value =
            serde_json::from_slice(&reply.result.as_ref().unwrap().payload).unwrap();
        admin.close();
        router["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["counters"]["denied"].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    let mut denied = 0;
    let got = delivered_through(port, || denied = denied_in_admin_space());
    assert_eq!(got, ["demo/a"], "through weftd");
    // demo/secret/b and other/c at least, counted on the publisher's session.
    assert!(denied >= 2, "denials counted: {denied}");
    drop(weftd);

    // The same clients through Zenoh's router with the same policy.
    let port = free_port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let insert = format!("access_control={ACL}");
    let Some(_zenoh) = weft_testkit::ZenohNode::start(&[
        "--mode",
        "router",
        "--listen",
        &endpoint,
        "--insert",
        &insert,
        "--timeout",
        "60",
    ]) else {
        return;
    };
    assert_eq!(
        delivered_through(port, || ()),
        ["demo/a"],
        "through Zenoh's router"
    );
}

#[test]
fn weftd_refuses_to_start_with_a_bad_usrpwd_dictionary() {
    let dir = std::env::temp_dir().join(format!("weftd-usrpwd-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("users.txt");
    std::fs::write(&bad, "alice:wonderland\nbob\n").unwrap();
    let missing = dir.join("missing.txt");
    for (file, reason) in [
        (&bad, "line 2: expected `user:password`"),
        (&missing, "No such file"),
    ] {
        let text = format!(
            "{{ transport: {{ auth: {{ usrpwd: {{ dictionary_file: {:?} }} }} }} }}",
            file.to_str().unwrap()
        );
        let path = dir.join("config.json5");
        std::fs::write(&path, text).unwrap();
        let (code, stderr) = run_weftd(&["-c", path.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("`transport.auth.usrpwd.dictionary_file`"),
            "{stderr}"
        );
        assert!(stderr.contains(reason), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The configuration of a weft client of `endpoint` presenting `credentials`, if any.
fn client_config(endpoint: &str, credentials: Option<(&str, &str)>) -> weft::Config {
    let auth = credentials.map_or(String::new(), |(user, password)| {
        format!(
            r#", transport: {{ auth: {{ usrpwd: {{ user: "{user}", password: "{password}" }} }} }}"#
        )
    });
    let text = format!(
        r#"{{ mode: "client", connect: {{ endpoints: ["{endpoint}"] }},
              scouting: {{ multicast: {{ enabled: false }} }} {auth} }}"#
    );
    weft::Config::from_json5(&text).unwrap().0
}

#[test]
fn weftd_with_a_dictionary_accepts_known_users_only() {
    let dir = std::env::temp_dir().join(format!("weftd-usrpwd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let users = dir.join("users.txt");
    std::fs::write(&users, "alice:wonderland\n").unwrap();
    let config = format!(
        "{{ transport: {{ auth: {{ usrpwd: {{ dictionary_file: {:?} }} }} }} }}",
        users.to_str().unwrap()
    );
    let weftd = Weftd::with_config(free_port(), &config, &[]);
    for refused in [
        Some(("alice", "looking-glass")),
        Some(("carol", "wonderland")),
        None,
    ] {
        let Err(e) = weft::open(client_config(&weftd.endpoint, refused)) else {
            panic!("{refused:?} was accepted");
        };
        assert!(e.to_string().contains("GENERIC"), "{refused:?}: {e}");
    }
    let alice = weft::open(client_config(
        &weftd.endpoint,
        Some(("alice", "wonderland")),
    ))
    .expect("alice is accepted");
    // Data flows through the router between two authenticated clients.
    let (_sub, rx) = alice
        .declare_subscriber_channel("demo/auth/**", 16)
        .unwrap();
    let other = weft::open(client_config(
        &weftd.endpoint,
        Some(("alice", "wonderland")),
    ))
    .expect("a second session of alice");
    let publisher = other
        .declare_publisher("demo/auth/x", weft::PutOptions::default())
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let sample = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "no sample within 10 s"
        );
        publisher.put(b"through weftd").unwrap();
        if let Ok(s) = rx.recv_timeout(std::time::Duration::from_millis(100)) {
            break s;
        }
    };
    assert_eq!(sample.payload, b"through weftd");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The ZenohID of the client `erin`, the subject of the `zids` cases.
const ERIN_ZID: &str = "e1e2e3e4";

/// The clients of the side-by-side access-control test: name in keys, user, and the
/// common name of its certificate for those connecting over mTLS.
const CLIENTS: [(&str, &str, Option<&str>); 6] = [
    ("observer", "observer", None),
    ("alice", "alice", None),
    ("bob", "bob", None),
    ("erin", "erin", None),
    ("tls-a", "carol", Some("client-a")),
    ("tls-b", "dave", Some("client-b")),
];

/// One case: a message kind on a flow, a rule for it tied to one subject, and the
/// clients whose delivery is probed, each with whether it matches the subject.
struct Case {
    name: String,
    subject: &'static str,
    message: &'static str,
    flow: Flow,
    actors: Vec<(&'static str, bool)>,
}

impl Case {
    fn new(name: &str, subject: &'static str, message: &'static str, flow: Flow) -> Self {
        Self {
            name: name.to_owned(),
            subject,
            message,
            flow,
            actors: Vec::new(),
        }
    }

    /// Probed with `matching` (clients of the subject) and `others`.
    fn actors(mut self, matching: &[&'static str], others: &[&'static str]) -> Self {
        self.actors = matching.iter().map(|a| (*a, true)).collect();
        self.actors.extend(others.iter().map(|a| (*a, false)));
        self
    }
}

/// What a client connected to a router sees nothing of, whatever access control says:
/// a router does not send a client its queryables' declarations (a client's queries go
/// to the router anyway), nor liveliness subscribers or liveliness queries (it answers
/// those from its own tokens).
fn unobservable(message: &str, flow: Flow) -> bool {
    flow == Flow::Egress
        && [
            "declare_queryable",
            "declare_liveliness_subscriber",
            "liveliness_query",
        ]
        .contains(&message)
}

/// Every message on both flows for the subject `alice`, probed with alice and bob,
/// then the cases of the other subject kinds.
fn cases(others: Vec<Case>) -> Vec<Case> {
    let mut all = Vec::new();
    for message in MESSAGES {
        for flow in [Flow::Ingress, Flow::Egress] {
            let name = format!("{message}-{}", flow.name());
            all.push(Case::new(&name, "alice", message, flow).actors(&["alice"], &["bob"]));
        }
    }
    all.extend(others);
    all
}

/// The key expression of a case's probes.
fn probe_key(case: &Case) -> String {
    format!("acl/{}/*/p", case.name)
}

/// A policy denying by default: each case's rule allows its message to its subject,
/// everyone may do everything else on the case's keys, the observer everything.
fn allow_policy() -> (serde_json::Value, Vec<Case>) {
    use serde_json::json;
    let put = "put";
    let cases = cases(vec![
        Case::new("cn", "cn-a", put, Flow::Ingress).actors(&["tls-a"], &["tls-b", "alice"]),
        Case::new("cn-out", "cn-a", put, Flow::Egress).actors(&["tls-a"], &["tls-b"]),
        Case::new("zid", "zid", put, Flow::Ingress).actors(&["erin"], &["bob"]),
        Case::new("iface", "lo", put, Flow::Ingress).actors(&["alice", "tls-a"], &[]),
        Case::new("iface-none", "nowhere", put, Flow::Ingress).actors(&[], &["alice"]),
        Case::new("proto", "tls", put, Flow::Ingress).actors(&["tls-a"], &["alice"]),
        Case::new("proto-tcp", "tcp", put, Flow::Ingress).actors(&["alice"], &["tls-a"]),
        Case::new("user-tls", "carol", put, Flow::Ingress).actors(&["tls-a"], &["tls-b"]),
        Case::new("and", "carol-tls", put, Flow::Ingress).actors(&["tls-a"], &["tls-b"]),
        Case::new("and-none", "dave-a", put, Flow::Ingress).actors(&[], &["tls-a", "tls-b"]),
    ]);
    let mut rules = vec![
        json!({ "id": "observe", "messages": MESSAGES, "permission": "allow",
                "key_exprs": ["**"] }),
        json!({ "id": "sync", "messages": ["put", "declare_subscriber"],
                "permission": "allow", "key_exprs": ["acl/sync/**"] }),
        json!({ "id": "markers", "messages": MESSAGES, "permission": "allow",
                "key_exprs": ["acl/*/*/m"] }),
    ];
    let mut policies = vec![json!({ "id": "observer", "rules": ["observe"],
                                    "subjects": ["observer"] })];
    let mut everyone = vec![json!("sync"), json!("markers")];
    for case in &cases {
        let (c, key) = (&case.name, probe_key(case));
        let other = match case.flow {
            Flow::Ingress => Flow::Egress,
            Flow::Egress => Flow::Ingress,
        };
        let rest: Vec<&str> = MESSAGES
            .into_iter()
            .filter(|m| *m != case.message)
            .collect();
        rules.push(
            json!({ "id": format!("allow-{c}"), "messages": [case.message],
                           "flows": [case.flow.name()], "permission": "allow",
                           "key_exprs": [key] }),
        );
        rules.push(json!({ "id": format!("base-{c}"), "messages": rest,
                           "flows": [case.flow.name()], "permission": "allow",
                           "key_exprs": [key] }));
        rules.push(json!({ "id": format!("other-{c}"), "messages": MESSAGES,
                           "flows": [other.name()], "permission": "allow",
                           "key_exprs": [key] }));
        everyone.push(json!(format!("base-{c}")));
        everyone.push(json!(format!("other-{c}")));
        policies.push(json!({ "id": c, "rules": [format!("allow-{c}")],
                              "subjects": [case.subject] }));
    }
    policies.push(json!({ "id": "everyone", "rules": everyone, "subjects": ["everyone"] }));
    let subjects = json!([
        { "id": "observer", "usernames": ["observer"] },
        { "id": "everyone" },
        { "id": "alice", "usernames": ["alice"] },
        { "id": "cn-a", "cert_common_names": ["client-a"] },
        { "id": "zid", "zids": [ERIN_ZID] },
        { "id": "lo", "interfaces": ["lo"] },
        { "id": "nowhere", "interfaces": ["weft-none0"] },
        { "id": "tls", "link_protocols": ["tls"] },
        { "id": "tcp", "link_protocols": ["tcp"] },
        { "id": "carol", "usernames": ["carol"] },
        { "id": "carol-tls", "cert_common_names": ["client-a"], "usernames": ["carol"],
          "link_protocols": ["tls"] },
        { "id": "dave-a", "cert_common_names": ["client-a"], "usernames": ["dave"] },
    ]);
    let policy = json!({ "enabled": true, "default_permission": "deny", "rules": rules,
                         "subjects": subjects, "policies": policies });
    (policy, cases)
}

/// A policy allowing by default: each case's rule denies its message to its subject.
/// Every client matches one subject at most (with the default allow, any other subject
/// it matched would allow what the first denies), but `alice` twice over: two subjects
/// with the same properties are one, whose rules all apply.
fn deny_policy() -> (serde_json::Value, Vec<Case>) {
    use serde_json::json;
    let put = "put";
    let cases = cases(vec![
        Case::new("cn", "cn-b", put, Flow::Ingress).actors(&["tls-b"], &["tls-a"]),
        Case::new("cn-out", "cn-b", put, Flow::Egress).actors(&["tls-b"], &["tls-a"]),
        Case::new("zid", "zid", put, Flow::Ingress).actors(&["erin"], &["bob"]),
        Case::new("iface", "lo-bob", put, Flow::Ingress).actors(&["bob"], &["alice"]),
        Case::new("proto", "tls-carol", put, Flow::Ingress).actors(&["tls-a"], &["alice"]),
    ]);
    let mut rules = vec![
        json!({ "id": "unused", "messages": ["put"], "permission": "deny",
                                 "key_exprs": ["acl/unused"] }),
    ];
    let mut policies = vec![json!({ "rules": ["unused"], "subjects": ["alice-again"] })];
    for case in &cases {
        let c = &case.name;
        rules.push(
            json!({ "id": format!("deny-{c}"), "messages": [case.message],
                           "flows": [case.flow.name()], "permission": "deny",
                           "key_exprs": [probe_key(case)] }),
        );
        policies.push(json!({ "id": c, "rules": [format!("deny-{c}")],
                              "subjects": [case.subject] }));
    }
    let subjects = json!([
        { "id": "alice", "usernames": ["alice"] },
        { "id": "alice-again", "usernames": ["alice"] },
        { "id": "cn-b", "cert_common_names": ["client-b"] },
        { "id": "zid", "zids": [ERIN_ZID] },
        { "id": "lo-bob", "interfaces": ["lo"], "usernames": ["bob"] },
        { "id": "tls-carol", "link_protocols": ["tls"], "usernames": ["carol"] },
    ]);
    let policy = json!({ "enabled": true, "default_permission": "allow", "rules": rules,
                         "subjects": subjects, "policies": policies });
    (policy, cases)
}

/// The files both routers use: a PKI (client certificates named `client-a` and
/// `client-b`) and the user dictionary.
struct Secrets {
    pki: weft_testkit::certs::Pki,
    client_certs: std::collections::HashMap<&'static str, (String, String)>,
    dictionary: String,
}

impl Secrets {
    fn new() -> Self {
        let pki = weft_testkit::certs::Pki::new("acl");
        let mut client_certs = std::collections::HashMap::new();
        let mut users = String::new();
        for (name, user, cn) in CLIENTS {
            users.push_str(&format!("{user}:{user}-pw\n"));
            if let Some(cn) = cn {
                let issued = pki.authority.issue(&[cn], None);
                let cert = pki.dir.write(&format!("{cn}.pem"), &issued.cert_pem);
                let key = pki.dir.write(&format!("{cn}-key.pem"), &issued.key_pem);
                client_certs.insert(name, (cert, key));
            }
        }
        let dictionary = pki.dir.write("users.txt", &users);
        Self {
            pki,
            client_certs,
            dictionary,
        }
    }

    /// The router's settings beside its access control: users, TLS with mTLS.
    fn router_config(&self, acl: &serde_json::Value) -> String {
        format!(
            r#"{{ access_control: {acl},
                 transport: {{ auth: {{ usrpwd: {{ dictionary_file: {dict:?} }} }},
                   link: {{ tls: {{ root_ca_certificate: {ca:?}, listen_certificate: {cert:?},
                                   listen_private_key: {key:?}, enable_mtls: true }} }} }} }}"#,
            dict = self.dictionary,
            ca = self.pki.ca,
            cert = self.pki.server_cert,
            key = self.pki.server_key,
        )
    }

    /// The clients, connected to the router's TCP and TLS ports.
    fn clients(&self, tcp: u16, tls: u16) -> Vec<Client> {
        CLIENTS
            .iter()
            .map(|&(name, user, _)| {
                let id = if name == "erin" {
                    format!("id: {ERIN_ZID:?},")
                } else {
                    String::new()
                };
                let (endpoint, tls_settings) = match self.client_certs.get(name) {
                    Some((cert, key)) => (
                        format!("tls/127.0.0.1:{tls}"),
                        format!(
                            r#", link: {{ tls: {{ root_ca_certificate: {ca:?},
                                 connect_certificate: {cert:?}, connect_private_key: {key:?},
                                 enable_mtls: true }} }}"#,
                            ca = self.pki.ca
                        ),
                    ),
                    None => (format!("tcp/127.0.0.1:{tcp}"), String::new()),
                };
                let text = format!(
                    r#"{{ mode: "client", {id} connect: {{ endpoints: ["{endpoint}"] }},
                         scouting: {{ multicast: {{ enabled: false }} }},
                         transport: {{ auth: {{ usrpwd: {{ user: "{user}", password: "{user}-pw" }} }}
                                       {tls_settings} }} }}"#
                );
                let config = weft::Config::from_json5(&text).unwrap().0;
                let session = weft::open(config)
                    .unwrap_or_else(|e| panic!("{name} cannot open its session: {e}"));
                Client { name, session }
            })
            .collect()
    }
}

/// What the router listening on `tcp` and `tls` delivers in each case: (case, actor,
/// delivered).
fn probe_all(
    secrets: &Secrets,
    tcp: u16,
    tls: u16,
    cases: &[Case],
) -> Vec<(String, &'static str, bool)> {
    let clients = secrets.clients(tcp, tls);
    let observer = &clients[0];
    let pairs: Vec<Pair<'_>> = clients[1..]
        .iter()
        .map(|c| Pair::new(c, observer))
        .collect();
    let pair = |name: &str| {
        pairs
            .iter()
            .zip(&clients[1..])
            .find(|(_, c)| c.name == name)
            .map(|(p, _)| p)
            .unwrap()
    };
    let mut outcomes = Vec::new();
    for case in cases {
        for &(actor, _) in &case.actors {
            let delivered = pair(actor).delivers(&case.name, case.message, case.flow);
            outcomes.push((case.name.clone(), actor, delivered));
        }
    }
    drop(pairs);
    for c in &clients {
        c.session.close();
    }
    outcomes
}

/// The same probes through weftd and through Zenoh's router, with one policy.
fn side_by_side(
    secrets: &Secrets,
    policy: &serde_json::Value,
    cases: &[Case],
) -> Vec<(String, &'static str, bool)> {
    let (tcp, tls) = (free_port(), free_port());
    let tls_endpoint = format!("tls/127.0.0.1:{tls}");
    let weftd = Weftd::with_config(tcp, &secrets.router_config(policy), &["-l", &tls_endpoint]);
    common::wait_for_port(tls);
    let through_weftd = probe_all(secrets, tcp, tls, cases);
    drop(weftd);

    let (tcp, tls) = (free_port(), free_port());
    let (tcp_endpoint, tls_endpoint) = (
        format!("tcp/127.0.0.1:{tcp}"),
        format!("tls/127.0.0.1:{tls}"),
    );
    let insert = format!("access_control={policy}");
    let Some(zenoh) = weft_testkit::ZenohNode::start(&[
        "--mode",
        "router",
        "--listen",
        &tcp_endpoint,
        "--listen",
        &tls_endpoint,
        "--usrpwd-dictionary",
        &secrets.dictionary,
        "--tls-root-ca",
        &secrets.pki.ca,
        "--tls-listen-cert",
        &secrets.pki.server_cert,
        "--tls-listen-key",
        &secrets.pki.server_key,
        "--tls-mtls",
        "--insert",
        &insert,
        "--timeout",
        "120",
    ]) else {
        return through_weftd;
    };
    let through_zenoh = probe_all(secrets, tcp, tls, cases);
    drop(zenoh);
    let differences: Vec<String> = through_weftd
        .iter()
        .zip(&through_zenoh)
        .filter(|(w, z)| w != z)
        .map(|(w, z)| format!("{} by {}: weftd {}, Zenoh {}", w.0, w.1, w.2, z.2))
        .collect();
    assert!(
        differences.is_empty(),
        "weftd and Zenoh differ:\n{}",
        differences.join("\n")
    );
    through_weftd
}

#[test]
fn weftd_delivers_what_zenohs_router_delivers_under_each_subject_and_message() {
    let secrets = Secrets::new();
    for (policy, cases) in [allow_policy(), deny_policy()] {
        let outcomes = side_by_side(&secrets, &policy, &cases);
        // What a client of the subject may do is delivered, and only that (default deny);
        // what it may not is dropped, and only that (default allow).
        let default_allows = policy["default_permission"] == "allow";
        let expected: Vec<(String, &str, bool)> = cases
            .iter()
            .flat_map(|c| {
                c.actors.iter().map(|&(actor, matches)| {
                    let delivered = unobservable(c.message, c.flow) || matches != default_allows;
                    (c.name.clone(), actor, delivered)
                })
            })
            .collect();
        let wrong: Vec<String> = outcomes
            .iter()
            .zip(&expected)
            .filter(|(got, want)| got != want)
            .map(|(got, _)| format!("{} by {}: delivered {}", got.0, got.1, got.2))
            .collect();
        assert!(
            wrong.is_empty(),
            "default {}: unexpected\n{}",
            policy["default_permission"],
            wrong.join("\n")
        );
    }
}

/// A client's policy: it takes puts from its router on `side/cn/**` if the router's
/// certificate is named `localhost`, on `side/user/**` if the router authenticated as
/// `carol` (which the opening side never knows), and markers from anyone.
const CLIENT_ACL: &str = r#"{ enabled: true, default_permission: "deny",
  rules: [
    { id: "subscribe", messages: ["declare_subscriber"], flows: ["egress"],
      permission: "allow", key_exprs: ["side/**"] },
    { id: "marker", messages: ["put"], flows: ["ingress"], permission: "allow",
      key_exprs: ["side/marker"] },
    { id: "cn", messages: ["put"], flows: ["ingress"], permission: "allow",
      key_exprs: ["side/cn/**"] },
    { id: "user", messages: ["put"], flows: ["ingress"], permission: "allow",
      key_exprs: ["side/user/**"] },
  ],
  subjects: [ { id: "everyone" }, { id: "router-cert", cert_common_names: ["localhost"] },
              { id: "carol", usernames: ["carol"] } ],
  policies: [ { rules: ["subscribe", "marker"], subjects: ["everyone"] },
              { rules: ["cn"], subjects: ["router-cert"] },
              { rules: ["user"], subjects: ["carol"] } ] }"#;

/// The keys a subscriber received of a publisher's puts on `side/cn/x` and
/// `side/user/x`: `publisher` puts the marker until the subscriber has it, then both keys
/// and the marker again, with `end`. `received(wait)` is the subscriber's next sample
/// (key, payload), if one comes within `wait`.
fn side_keys(
    publisher: &weft::Session,
    mut received: impl FnMut(Duration) -> Option<(String, String)>,
) -> Vec<String> {
    let options = weft::PutOptions::default();
    let deadline = Instant::now() + Duration::from_secs(10);
    'warm: loop {
        publisher.put("side/marker", b"warm", &options).unwrap();
        while let Some((key, _)) = received(Duration::from_millis(100)) {
            if key == "side/marker" {
                break 'warm;
            }
        }
        assert!(Instant::now() < deadline, "no marker through");
    }
    for key in ["side/cn/x", "side/user/x"] {
        publisher.put(key, b"probe", &options).unwrap();
    }
    publisher.put("side/marker", b"end", &options).unwrap();
    let mut keys = Vec::new();
    loop {
        match received(Duration::from_secs(10)).expect("the end marker arrives") {
            (key, payload) if key == "side/marker" => {
                if payload == "end" {
                    return keys;
                }
            }
            (key, _) => keys.push(key),
        }
    }
}

#[test]
fn a_client_sees_its_routers_certificate_name_and_no_user_name_as_zenohs_does() {
    let secrets = Secrets::new();
    let (tcp, tls) = (free_port(), free_port());
    let tls_endpoint = format!("tls/127.0.0.1:{tls}");
    let disabled = serde_json::json!({ "enabled": false });
    let _weftd = Weftd::with_config(
        tcp,
        &secrets.router_config(&disabled),
        &["-l", &tls_endpoint],
    );
    common::wait_for_port(tls);
    let observer = secrets.clients(tcp, tls).swap_remove(0);
    let (cert, key) = &secrets.client_certs["tls-a"];

    // A weft client with the policy.
    let text = format!(
        r#"{{ mode: "client", connect: {{ endpoints: ["{tls_endpoint}"] }},
             scouting: {{ multicast: {{ enabled: false }} }}, access_control: {CLIENT_ACL},
             transport: {{ auth: {{ usrpwd: {{ user: "carol", password: "carol-pw" }} }},
               link: {{ tls: {{ root_ca_certificate: {ca:?}, connect_certificate: {cert:?},
                               connect_private_key: {key:?}, enable_mtls: true }} }} }} }}"#,
        ca = secrets.pki.ca
    );
    let client = weft::open(weft::Config::from_json5(&text).unwrap().0).unwrap();
    let (_sub, rx) = client.declare_subscriber_channel("side/**", 64).unwrap();
    let through_weft = side_keys(&observer.session, |wait| {
        let s = rx.recv_timeout(wait).ok()?;
        Some((
            s.key_expr.to_string(),
            String::from_utf8_lossy(&s.payload).into_owned(),
        ))
    });
    client.close();
    assert_eq!(through_weft, ["side/cn/x"], "through a weft client");

    // An Eclipse Zenoh client with the same policy.
    let insert = format!("access_control={CLIENT_ACL}");
    let Some(zenoh) = weft_testkit::ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &tls_endpoint,
        "--usrpwd-user",
        "carol",
        "--usrpwd-password",
        "carol-pw",
        "--tls-root-ca",
        &secrets.pki.ca,
        "--tls-connect-cert",
        cert,
        "--tls-connect-key",
        key,
        "--tls-mtls",
        "--insert",
        &insert,
        "--sub",
        "side/**",
        "--count",
        "1000",
        "--timeout",
        "60",
    ]) else {
        return;
    };
    let through_zenoh = side_keys(&observer.session, |wait| {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let line = zenoh.lines.recv_timeout(left).ok()?;
            if let Ok(sample) = serde_json::from_str::<serde_json::Value>(&line) {
                let field = |name: &str| sample[name].as_str().unwrap_or_default().to_owned();
                return Some((field("key"), field("payload")));
            }
        }
    });
    assert_eq!(through_zenoh, through_weft, "through a Zenoh client");
}
