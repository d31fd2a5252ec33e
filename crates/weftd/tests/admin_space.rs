//! weftd's admin space read as Zenoh tools read it: an Eclipse Zenoh client gets `@/**`
//! from weftd and from Zenoh's own router (zenoh-python in router mode) and the two
//! answers are compared key by key: the same keys, the same encodings, the same JSON
//! fields with the same types (weft may add fields of its own), the same declarations'
//! sources, the same router-mesh graph.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use weft_testkit::zenohd::Zenohd;
use weft_testkit::{free_port, repo_root, zenoh_python, ZenohNode};

mod common;
use common::{weft_client_at, Weftd};

/// zenohd's metrics encoding.
const METRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One reply of a get.
#[derive(Debug, Clone)]
struct Reply {
    /// The selector it answers.
    selector: String,
    key: String,
    encoding: String,
    payload: Vec<u8>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.payload)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e})", self.key))
    }

    fn text(&self) -> String {
        String::from_utf8(self.payload.clone()).unwrap()
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn gunzip(data: &[u8]) -> String {
    let mut out = String::new();
    flate2::read::GzDecoder::new(data)
        .read_to_string(&mut out)
        .expect("a gzip payload");
    out
}

/// Runs `admin_probe.py` against the router on `port`: declares on `declare` first (if
/// given), then gets each selector. Returns the probe's ZenohID and the replies.
fn probe(port: u16, declare: Option<&str>, gets: &[&str]) -> (String, Vec<Reply>) {
    let python = zenoh_python().expect("checked by the caller");
    let mut command = Command::new(python);
    command
        .arg(repo_root().join("tests/interop/admin_probe.py"))
        .args(["--connect", &format!("tcp/127.0.0.1:{port}")])
        .args(["--timeout", "10"]);
    if let Some(prefix) = declare {
        command.args(["--declare", prefix]);
    }
    for g in gets {
        command.args(["--get", g]);
    }
    let out = command.stderr(Stdio::inherit()).output().unwrap();
    assert!(out.status.success(), "the probe failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let zid = lines
        .next()
        .and_then(|l| l.strip_prefix("ZID "))
        .expect("the probe's ZenohID")
        .to_string();
    let mut replies = Vec::new();
    for line in lines {
        if line == "DONE" {
            return (zid, replies);
        }
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(v.get("error").is_none(), "an error reply: {v}");
        replies.push(Reply {
            selector: v["selector"].as_str().unwrap().to_string(),
            key: v["key"].as_str().unwrap().to_string(),
            encoding: v["encoding"].as_str().unwrap().to_string(),
            payload: unhex(v["payload_hex"].as_str().unwrap()),
        });
    }
    panic!("the probe did not finish: {text}");
}

/// The replies under `@/<router>/router`, by key with the ZenohIDs named in `names`
/// replaced by their names (e.g. `<router>`), payloads likewise for JSON and text.
fn by_key(replies: &[Reply], router: &str, names: &[(&str, &str)]) -> BTreeMap<String, Reply> {
    let rename = |s: &str| {
        let mut s = s.to_string();
        for (zid, name) in names {
            s = s.replace(&format!("\"{zid}\""), &format!("\"{name}\""));
            s = s.replace(&format!("/{zid}/"), &format!("/{name}/"));
            if s.ends_with(&format!("/{zid}")) {
                s = format!("{}{name}", &s[..s.len() - zid.len()]);
            }
        }
        s
    };
    replies
        .iter()
        .filter(|r| r.key.starts_with(&format!("@/{router}/router")))
        .map(|r| {
            let mut r = r.clone();
            if !r.encoding.contains("gzip") {
                r.payload = rename(&String::from_utf8_lossy(&r.payload)).into_bytes();
            }
            (rename(&r.key), r)
        })
        .collect()
}

/// The JSON type of a value, for comparing shapes.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Where `weft` lacks a field of `zenoh` or holds it with another type. `nullable`
/// fields may be null on one side and an object on the other (zenohd itself gives
/// either, e.g. `weight`); arrays compare by their first elements.
fn shape_differences(path: &str, zenoh: &Value, weft: &Value, out: &mut Vec<String>) {
    const NULLABLE: [&str; 3] = ["weight", "metadata", "plugins"];
    match (zenoh, weft) {
        (Value::Object(z), Value::Object(w)) => {
            for (k, zv) in z {
                match w.get(k) {
                    Some(wv) => shape_differences(&format!("{path}.{k}"), zv, wv, out),
                    None => out.push(format!("{path}.{k}: missing")),
                }
            }
        }
        (Value::Array(z), Value::Array(w)) => {
            if let (Some(zf), Some(wf)) = (z.first(), w.first()) {
                shape_differences(&format!("{path}[0]"), zf, wf, out);
            }
        }
        (z, w) if type_name(z) == type_name(w) => {}
        (Value::Null, Value::Object(_)) | (Value::Object(_), Value::Null)
            if NULLABLE.iter().any(|n| path.ends_with(n)) => {}
        (z, w) => out.push(format!(
            "{path}: {} in Zenoh's, {} in weft's",
            type_name(z),
            type_name(w)
        )),
    }
}

/// The session of `peer` in a router's description.
fn session_of(router: &Value, peer: &str) -> Value {
    router["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["peer"] == peer)
        .cloned()
        .unwrap_or_else(|| panic!("no session of {peer} in {router}"))
}

/// Zenoh's router (zenoh-python) with its admin space on, as zenohd has it.
fn zenoh_router(port: u16, connect: Option<u16>, name: &str) -> ZenohNode {
    let listen = format!("tcp/127.0.0.1:{port}");
    let metadata = format!("metadata={{name:\"{name}\"}}");
    let connect_to = connect.map(|p| format!("tcp/127.0.0.1:{p}"));
    let mut args = vec![
        "--mode",
        "router",
        "--listen",
        &listen,
        "--insert",
        "adminspace/enabled=true",
        "--insert",
        &metadata,
        "--timeout",
        "90",
    ];
    if let Some(c) = &connect_to {
        args.extend(["--connect", c.as_str()]);
    }
    ZenohNode::start(&args).expect("a Zenoh router")
}

/// The ZenohID of the router listening on `port`, from a weft client's get on
/// `@/*/router` (in a mesh every router answers: the one with that locator).
fn router_zid(port: u16) -> String {
    let client = weft_client_at(port);
    let locator = Value::from(format!("tcp/127.0.0.1:{port}"));
    let zid = client
        .get("@/*/router", &weft::GetOptions::default())
        .unwrap()
        .iter()
        .filter_map(|r| r.result.ok())
        .map(|s| serde_json::from_slice::<Value>(&s.payload).unwrap())
        .find(|d| d["locators"].as_array().unwrap().contains(&locator))
        .map(|d| d["zid"].as_str().unwrap().to_string())
        .expect("the router's description");
    client.close();
    zid
}

/// Waits until the router on `port` shows a router mesh of `routers` routers.
fn wait_for_mesh(port: u16, routers: usize) {
    let client = weft_client_at(port);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let graph = client
            .get("@/*/router/linkstate/north", &weft::GetOptions::default())
            .unwrap()
            .iter()
            .filter_map(|r| r.result.ok())
            .map(|s| String::from_utf8_lossy(&s.payload).into_owned())
            .next()
            .unwrap_or_default();
        if graph.matches(" -- ").count() + 1 >= routers && graph.matches("label").count() >= routers
        {
            break;
        }
        assert!(Instant::now() < deadline, "no mesh of {routers}: {graph}");
        std::thread::sleep(Duration::from_millis(50));
    }
    client.close();
}

/// Gets `@/**` (after declaring on `probe/**`) from the router on `port`; returns its
/// replies by normalized key, its description, and the probe's ZenohID.
fn read_admin_space(port: u16) -> (BTreeMap<String, Reply>, String) {
    const ALL: &str = "@/**";
    let router = router_zid(port);
    let (client, replies) = probe(
        port,
        Some("probe"),
        &[
            ALL,
            "@/*/router/metrics?descriptors=false;compression=false",
        ],
    );
    let (all, plain): (Vec<Reply>, Vec<Reply>) =
        replies.into_iter().partition(|r| r.selector == ALL);
    let mut keyed = by_key(
        &all,
        &router,
        &[(&router, "<router>"), (&client, "<client>")],
    );
    // The second get's metrics (plain) under a name of their own.
    let plain: Vec<&Reply> = plain
        .iter()
        .filter(|r| r.key == format!("@/{router}/router/metrics"))
        .collect();
    assert_eq!(plain.len(), 1, "one plain metrics reply");
    keyed.insert("plain metrics".into(), plain[0].clone());
    (keyed, router)
}

#[test]
fn weftd_answers_what_zenohs_router_answers_on_its_admin_space() {
    if zenoh_python().is_none() {
        return;
    }
    let zenoh_port = free_port();
    let _zenoh = zenoh_router(zenoh_port, None, "zenoh");
    compare_with_zenoh(zenoh_port);
}

/// The same against the `zenohd` binary (1.10.2) when `WEFT_ZENOHD` names it.
#[test]
fn weftd_answers_what_the_zenohd_binary_answers_on_its_admin_space() {
    if zenoh_python().is_none() {
        return;
    }
    let Some(zenohd) = Zenohd::start(free_port(), &["--cfg", "metadata:{name:\"zenohd\"}"]) else {
        return;
    };
    compare_with_zenoh(zenohd.port());
}

/// Reads weftd's admin space and that of the Zenoh router on `zenoh_port` as a Zenoh
/// client does, and compares them.
fn compare_with_zenoh(zenoh_port: u16) {
    let weftd = Weftd::start(free_port(), &["--cfg", "metadata:{name:\"weft\"}"]);
    let (weft, weft_id) = read_admin_space(weftd.port);
    let (zenoh, _) = read_admin_space(zenoh_port);

    // The same keys.
    let zenoh_keys: BTreeSet<&String> = zenoh.keys().collect();
    let weft_keys: BTreeSet<&String> = weft.keys().collect();
    assert_eq!(weft_keys, zenoh_keys);
    for key in [
        "@/<router>/router",
        "@/<router>/router/metrics",
        "@/<router>/router/linkstate/north",
        "@/<router>/router/subscriber/probe/sub/**",
        "@/<router>/router/publisher/probe/pub/a",
        "@/<router>/router/queryable/probe/q/**",
        "@/<router>/router/querier/probe/querier/**",
        "@/<router>/router/token/probe/tok/a",
    ] {
        assert!(weft_keys.contains(&key.to_string()), "no {key}");
    }

    // The same encodings.
    for key in &zenoh_keys {
        assert_eq!(weft[*key].encoding, zenoh[*key].encoding, "{key}");
    }

    // The router's description: Zenoh's fields, with their types, in weft's; the probe's
    // session likewise.
    let (z, w) = (
        zenoh["@/<router>/router"].json(),
        weft["@/<router>/router"].json(),
    );
    let mut differences = Vec::new();
    shape_differences(
        "sessions[<client>]",
        &session_of(&z, "<client>"),
        &session_of(&w, "<client>"),
        &mut differences,
    );
    let without_sessions = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("sessions");
        v
    };
    shape_differences(
        "",
        &without_sessions(&z),
        &without_sessions(&w),
        &mut differences,
    );
    assert!(
        differences.is_empty(),
        "{differences:#?}\nZenoh: {z}\nweft: {w}"
    );
    let client = session_of(&w, "<client>");
    assert_eq!(client["whatami"], "client");
    assert_eq!(client["region"], "south:0:client");
    assert_eq!(client["region"], session_of(&z, "<client>")["region"]);
    assert_eq!(
        client["links"][0]["src"],
        format!("tcp/127.0.0.1:{}", weftd.port)
    );
    assert!(client["counters"]["bytes_in"].as_u64().unwrap() > 0);
    assert_eq!(w["metadata"], serde_json::json!({ "name": "weft" }));
    assert_eq!(w["zid"], "<router>");
    assert!(w["version"]
        .as_str()
        .unwrap()
        .contains(" built with rustc "));

    // The declarations: the same sources, named alike.
    for key in zenoh_keys.iter().filter(|k| k.contains("/probe/")) {
        assert_eq!(weft[*key].json(), zenoh[*key].json(), "{key}");
    }

    // A router alone: the same one-node graph.
    assert_eq!(
        weft["@/<router>/router/linkstate/north"].text(),
        zenoh["@/<router>/router/linkstate/north"].text()
    );

    // Metrics: gzip by default, zenoh_build_info first; plain without descriptors.
    let gz = gunzip(&weft["@/<router>/router/metrics"].payload);
    let zenoh_gz = gunzip(&zenoh["@/<router>/router/metrics"].payload);
    let build_line = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("zenoh_build_info{"))
            .map(|l| l.split("version=").next().unwrap().to_string())
    };
    assert!(build_line(&zenoh_gz).is_some(), "{zenoh_gz}");
    assert_eq!(
        build_line(&gz),
        Some(format!(
            "zenoh_build_info{{local_id=\"{weft_id}\",local_whatami=\"router\","
        ))
    );
    assert!(gz.starts_with("# HELP zenoh_build Zenoh build version.\n# TYPE zenoh_build info\n"));
    assert!(gz.ends_with("# EOF\n"));
    assert!(gz.contains("weft_session_bytes_total{"), "{gz}");
    let plain = &weft["plain metrics"];
    assert_eq!(plain.encoding, METRICS);
    assert_eq!(zenoh["plain metrics"].encoding, METRICS);
    let text = plain.text();
    assert!(text.starts_with("zenoh_build_info{"), "{text}");
    assert!(text.ends_with("# EOF\n"));
    assert_eq!(text.lines().filter(|l| l.starts_with('#')).count(), 1);
}

#[test]
fn a_mesh_of_two_weftds_shows_its_graph_and_successors_as_zenohs_routers_do() {
    if zenoh_python().is_none() {
        return;
    }
    let gets = ["@/*/router/linkstate/**", "@/*/router/route/**"];
    // weft: two routers, the second connecting to the first.
    let first = Weftd::start(free_port(), &[]);
    let second = Weftd::connected(free_port(), &[first.port]);
    wait_for_mesh(first.port, 2);
    wait_for_mesh(second.port, 2);
    // Zenoh: the same.
    let (z1, z2) = (free_port(), free_port());
    let _zenoh_first = zenoh_router(z1, None, "first");
    let _zenoh_second = zenoh_router(z2, Some(z1), "second");
    wait_for_mesh(z1, 2);
    wait_for_mesh(z2, 2);
    let read = |port: u16, other: u16| {
        let (own, other) = (router_zid(port), router_zid(other));
        let (_, replies) = probe(port, None, &gets);
        let names = [(own.as_str(), "<self>"), (other.as_str(), "<other>")];
        let mut out = by_key(&replies, &own, &names);
        out.extend(by_key(&replies, &other, &names));
        out
    };
    for ((w, wo), (z, zo)) in [
        ((first.port, second.port), (z1, z2)),
        ((second.port, first.port), (z2, z1)),
    ] {
        let weft = read(w, wo);
        let zenoh = read(z, zo);
        // The same keys and values; the edge's label is its weight: 100 for weft, 100 and
        // a tie-breaking fraction for Zenoh.
        let zenoh_keys: BTreeSet<&String> = zenoh.keys().collect();
        let weft_keys: BTreeSet<&String> = weft.keys().collect();
        assert_eq!(weft_keys, zenoh_keys);
        assert!(weft_keys.contains(&"@/<self>/router/linkstate/north".to_string()));
        assert!(weft_keys
            .contains(&"@/<self>/router/route/successor/src/<self>/dst/<other>".to_string()));
        let without_weight = |text: String| -> String {
            text.lines()
                .map(|l| match l.split_once(" [ label = \"1") {
                    Some((edge, _)) if l.contains(" -- ") => format!("{edge} [ weight ]"),
                    _ => l.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        for key in &zenoh_keys {
            assert_eq!(weft[*key].encoding, zenoh[*key].encoding, "{key}");
            if key.contains("/linkstate/") {
                assert_eq!(
                    without_weight(weft[*key].text()),
                    without_weight(zenoh[*key].text()),
                    "{key}"
                );
            } else {
                assert_eq!(weft[*key].json(), zenoh[*key].json(), "{key}");
            }
        }
        let graph = weft["@/<self>/router/linkstate/north"].text();
        assert!(graph.contains("    1 -- 0 [ label = \"100\" ]"), "{graph}");
    }
}

/// Every key of the admin space follows `adminspace.permissions`; a weft client reads the
/// keys that hold wildcards (`…/subscriber/a/**`) as a Zenoh client does.
#[test]
fn the_whole_admin_space_follows_its_permissions_and_weft_clients_read_it() {
    let keys = |weftd: &Weftd, declare: bool| {
        let client = weftd.weft_client();
        let _sub = declare.then(|| client.declare_subscriber("perm/**", |_| {}).unwrap());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut keys: Vec<String> = client
                .get("@/**", &weft::GetOptions::default())
                .unwrap()
                .iter()
                .filter_map(|r| r.result.ok())
                .map(|s| s.key_expr.to_string())
                .filter(|k| k.contains("/router"))
                .collect();
            keys.sort();
            let ready = !declare || keys.iter().any(|k| k.ends_with("/subscriber/perm/**"));
            if ready || Instant::now() > deadline {
                client.close();
                return keys;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let open = Weftd::start(free_port(), &["-i", "abc"]);
    assert_eq!(
        keys(&open, true),
        [
            "@/abc/router",
            "@/abc/router/linkstate/north",
            "@/abc/router/linkstate/south:0:peer",
            "@/abc/router/metrics",
            "@/abc/router/subscriber/perm/**",
        ]
    );
    let closed = Weftd::start(free_port(), &["--adminspace-permissions", "none"]);
    assert_eq!(keys(&closed, false), Vec::<String>::new());
}

/// Three weftds in a line, a1 – a2 – a3: a1's graph has the two links, and its successor
/// towards a3 is a2, whatever the source (zenohd's answer on a tree, too).
#[test]
fn a_line_of_three_weftds_routes_through_the_middle_one() {
    let a1 = Weftd::start(free_port(), &["-i", "a1"]);
    let a2 = Weftd::start(
        free_port(),
        &["-i", "a2", "-e", &format!("tcp/127.0.0.1:{}", a1.port)],
    );
    let _a3 = Weftd::start(
        free_port(),
        &["-i", "a3", "-e", &format!("tcp/127.0.0.1:{}", a2.port)],
    );
    wait_for_mesh(a1.port, 3);
    let client = weft_client_at(a1.port);
    let get = |selector: &str| -> BTreeMap<String, String> {
        client
            .get(selector, &weft::GetOptions::default())
            .unwrap()
            .iter()
            .filter_map(|r| r.result.ok())
            .map(|s| {
                (
                    s.key_expr.to_string(),
                    String::from_utf8_lossy(&s.payload).into_owned(),
                )
            })
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let graph = loop {
        let graph = get("@/a1/router/linkstate/north")
            .into_values()
            .next()
            .unwrap_or_default();
        if graph.matches(" -- ").count() == 2 || Instant::now() > deadline {
            break graph;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        graph,
        "graph {\n    0 [ label = \"a1\" ]\n    1 [ label = \"a2\" ]\n    2 [ label = \"a3\" ]\n    \
         1 -- 0 [ label = \"100\" ]\n    2 -- 1 [ label = \"100\" ]\n}\n"
    );
    let successors = get("@/a1/router/route/successor/**");
    let mut expected = BTreeMap::new();
    for src in ["a1", "a2", "a3"] {
        for dst in ["a2", "a3"] {
            expected.insert(
                format!("@/a1/router/route/successor/src/{src}/dst/{dst}"),
                "\"a2\"".to_string(),
            );
        }
    }
    assert_eq!(successors, expected);
    let towards_a1 = get("@/a2/router/route/successor/src/a3/dst/a1");
    assert_eq!(
        towards_a1.values().collect::<Vec<_>>(),
        ["\"a1\""],
        "{towards_a1:?}"
    );
    client.close();
}
