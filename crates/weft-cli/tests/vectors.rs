//! Golden tests: every captured vector of the specification decodes, every batch
//! re-encodes to the captured bytes, and the decoded fields are the ones the annotated
//! captures (`.txt`) describe.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use weft_cli::capture;
use weft_cli::trace::{self, Framing, Options, Report};

fn spec_dir() -> PathBuf {
    match std::env::var_os("WEFT_SPEC_DIR") {
        Some(d) => PathBuf::from(d),
        // The repository's copy of the specification's vectors: `tests/vectors`.
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests"),
    }
}

fn vector_path(name: &str) -> PathBuf {
    spec_dir().join("vectors").join(format!("{name}.hex"))
}

fn decode(name: &str) -> Report {
    let path = vector_path(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let capture = capture::parse(&text).expect("valid .hex");
    let (report, error) = trace::decode_capture(&capture, &Options::default());
    assert!(error.is_none(), "{name}: {}", error.unwrap());
    if let Some(m) = report.mismatches.first() {
        panic!(
            "{name} line {}: re-encoding differs\n captured   {:02x?}\n re-encoded {:02x?}",
            m.line, m.original, m.reencoded
        );
    }
    report
}

fn types(report: &Report) -> Vec<String> {
    report
        .records
        .iter()
        .map(|r| r.value["type"].as_str().unwrap().to_string())
        .collect()
}

/// Every network message of the report (inside frames, bare, or reassembled).
fn network_messages(report: &Report) -> Vec<Value> {
    let mut out = Vec::new();
    for r in &report.records {
        match r.value.get("messages") {
            Some(Value::Array(msgs)) => out.extend(msgs.iter().cloned()),
            _ => {
                let t = r.value["type"].as_str().unwrap();
                if [
                    "Push",
                    "Request",
                    "Response",
                    "ResponseFinal",
                    "Interest",
                    "Declare",
                ]
                .contains(&t)
                {
                    out.push(r.value.clone());
                }
            }
        }
    }
    out
}

fn find(msgs: &[Value], pred: impl Fn(&Value) -> bool) -> &Value {
    msgs.iter().find(|m| pred(m)).expect("message not found")
}

#[test]
fn every_vector_decodes_and_reencodes_identically() {
    let dir = spec_dir().join("vectors");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("the spec's vectors directory") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("hex") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let report = decode(&name);
        assert!(!report.records.is_empty(), "{name}: nothing decoded");
        count += 1;
    }
    assert!(count >= 11, "expected the 11 vectors, found {count}");
}

#[test]
fn client_open_close_handshake() {
    let r = decode("01-client-open-close");
    assert_eq!(
        types(&r),
        [
            "InitSyn",
            "InitAck",
            "OpenSyn",
            "OpenAck",
            "KeepAlive",
            "KeepAlive",
            "Close"
        ]
    );
    let syn = &r.records[0].value;
    assert_eq!(syn["zid"], "828e1b4e0f8db96dc5a0d3d9a548580e");
    assert_eq!(syn["whatami"], "client");
    assert_eq!(syn["batch_size"], 65480);
    assert_eq!(syn["qos"], true);
    assert_eq!(syn["patch"], 1);
    let ack = &r.records[1].value;
    assert_eq!(ack["batch_size"], 49152);
    assert_eq!(ack["cookie"].as_str().unwrap().len(), 49 * 2);
    let open = &r.records[2].value;
    assert_eq!(open["lease_ms"], 10000);
    assert_eq!(open["initial_sn"], 126594754);
    assert_eq!(open["cookie"], ack["cookie"]);
    assert_eq!(r.records[6].value["reason"], "GENERIC");
}

#[test]
fn pub_sub_declarations_interest_and_data() {
    let r = decode("02-pub-sub");
    let msgs = network_messages(&r);
    let decl = find(&msgs, |m| m["body"]["type"] == "DeclareSubscriber");
    assert_eq!(decl["body"]["key"]["scope"], 1);
    assert_eq!(decl["body"]["key"]["suffix"], "/**");
    assert_eq!(decl["body"]["key"]["mapping"], "sender");
    assert_eq!(decl["qos"]["priority"], "control");
    let interest = find(&msgs, |m| {
        m["type"] == "Interest" && m["mode"] == "CurrentFuture"
    });
    assert_eq!(
        interest["options"],
        serde_json::json!(["keyexprs", "subscribers"])
    );
    let fin = find(&msgs, |m| m["body"]["type"] == "DeclareFinal");
    assert_eq!(fin["interest_id"], 1);
    let routed = find(&msgs, |m| {
        m["type"] == "Push" && m["key"]["mapping"] == "receiver" && m["body"]["payload"] == "hello"
    });
    assert_eq!(routed["key"]["suffix"], "/a");
    assert!(routed["body"]["timestamp"]["time"]
        .as_str()
        .unwrap()
        .starts_with("2026-11-22T03:06:29.94"));
    let with_meta = find(&msgs, |m| m["body"]["attachment"] == "meta");
    assert_eq!(with_meta["body"]["encoding"], "text/plain");
    assert_eq!(with_meta["body"]["payload"], "text");
    assert!(msgs.iter().any(|m| m["body"]["type"] == "Del"));
    // Two Pushes in one Frame, sent by the router.
    assert!(r.records.iter().any(|rec| rec.value["messages"]
        .as_array()
        .is_some_and(|a| a.len() == 3 && a.iter().all(|m| m["type"] == "Push"))));
}

#[test]
fn get_queryable_request_response() {
    let r = decode("03-get-queryable");
    let msgs = network_messages(&r);
    let req = find(&msgs, |m| {
        m["type"] == "Request" && m["body"]["parameters"] == "x=1"
    });
    assert_eq!(req["timeout_ms"], 3000);
    assert_eq!(req["body"]["consolidation"], "latest");
    let resp = find(&msgs, |m| m["type"] == "Response");
    assert_eq!(resp["body"]["type"], "Reply");
    assert_eq!(resp["body"]["body"]["payload"], "answer");
    assert!(resp["responder"]["zid"].is_string());
    let err = find(&msgs, |m| m["body"]["type"] == "Err");
    assert_eq!(err["body"]["payload"], "oops");
    assert!(msgs.iter().filter(|m| m["type"] == "ResponseFinal").count() >= 6);
    let qbl = find(&msgs, |m| m["body"]["type"] == "DeclareQueryable");
    assert_eq!(qbl["body"]["key"]["scope"], 1);
}

#[test]
fn liveliness_tokens_and_their_interests() {
    let r = decode("04-liveliness");
    let msgs = network_messages(&r);
    let current = find(&msgs, |m| {
        m["body"]["type"] == "DeclareToken" && m["interest_id"].is_number()
    });
    assert_eq!(
        current["body"]["id"], 0,
        "answers to Current interests use id 0"
    );
    let undecl = find(&msgs, |m| m["body"]["type"] == "UndeclareToken");
    assert_eq!(undecl["body"]["key"]["scope"], 0);
    assert_eq!(undecl["body"]["key"]["mapping"], "receiver");
    let future = find(&msgs, |m| m["type"] == "Interest" && m["mode"] == "Future");
    assert_eq!(future["key"]["suffix"], "/**");
    assert_eq!(future["options"], serde_json::json!(["keyexprs", "tokens"]));
}

#[test]
fn fragmented_put_is_reassembled() {
    let r = decode("05-fragmentation");
    let whole: Vec<&Value> = r
        .records
        .iter()
        .map(|x| &x.value)
        .filter(|v| v.get("reassembled").is_some())
        .collect();
    assert_eq!(
        whole.len(),
        2,
        "one message from the publisher, one from the router"
    );
    let published = whole
        .iter()
        .find(|v| v["key"]["suffix"] == "demo/big")
        .unwrap();
    assert_eq!(published["reassembled"]["fragments"], 3);
    assert_eq!(published["reassembled"]["bytes"], 100015);
    assert_eq!(published["body"]["payload_len"], 100000);
    // The router re-fragmented it with a timestamp added, on the subscriber's expr id.
    let routed = whole.iter().find(|v| v["key"]["suffix"] == "/big").unwrap();
    assert_eq!(routed["reassembled"]["bytes"], 100037);
    assert!(routed["body"]["timestamp"].is_object());
    let first = r
        .records
        .iter()
        .find(|x| x.value["type"] == "Fragment")
        .unwrap();
    assert_eq!(first.value["first"], true);
    assert_eq!(first.value["payload_len"], 49144);
}

#[test]
fn peers_close_their_initial_interest_with_final_zero() {
    let r = decode("06-peer-to-peer");
    let msgs = network_messages(&r);
    let finals: Vec<&Value> = msgs
        .iter()
        .filter(|m| m["body"]["type"] == "DeclareFinal")
        .collect();
    assert_eq!(finals.len(), 2);
    assert!(finals.iter().all(|m| m["interest_id"] == 0));
    let push = find(&msgs, |m| m["type"] == "Push");
    assert_eq!(push["key"]["mapping"], "receiver");
    assert_eq!(push["body"]["payload"], "hi");
}

#[test]
fn scouting_datagrams() {
    let r = decode("07-scouting");
    assert_eq!(r.framings, [Framing::Scouting]);
    assert_eq!(types(&r), ["Scout", "Hello"]);
    assert_eq!(
        r.records[0].value["what"],
        serde_json::json!(["router", "peer"])
    );
    assert_eq!(
        r.records[1].value["locators"],
        serde_json::json!(["tcp/127.0.0.1:17447"])
    );
}

#[test]
fn minimal_client_and_udp_and_compression_and_low_latency() {
    let r = decode("08-minimal-client");
    let syn = r
        .records
        .iter()
        .find(|x| x.value["type"] == "InitSyn" && x.value["zid"] == "4030201")
        .expect("the probe's 4-byte zid");
    assert_eq!(syn.value["batch_size"], 65535);

    let r = decode("09-udp-unicast");
    assert!(r.framings.iter().all(|f| *f == Framing::Datagram));
    assert_eq!(r.records[0].value["batch_size"], 65487);

    let r = decode("10-compression");
    let msgs = network_messages(&r);
    let big = find(&msgs, |m| {
        m["body"]["payload_len"] == 460 || {
            m["body"]["payload"]
                .as_str()
                .is_some_and(|p| p.len() == 460)
        }
    });
    assert!(big["body"]["payload"]
        .as_str()
        .unwrap()
        .starts_with("hello hello"));

    let r = decode("11-lowlatency");
    let bare = r
        .records
        .iter()
        .find(|x| x.value["type"] == "Push")
        .expect("a Push outside any Frame");
    assert_eq!(bare.value["body"]["payload"], "hello");
}

#[test]
fn malformed_input_names_line_and_offset() {
    // A Frame (SN 0) followed by a byte with the unknown transport id 0x08.
    let text = "> 0300050008\n";
    let capture = capture::parse(text).unwrap();
    let opts = Options {
        framing: Some(Framing::Stream),
        ..Options::default()
    };
    let (_, err) = trace::decode_capture(&capture, &opts);
    let err = err.expect("an error");
    assert_eq!((err.line, err.offset), (1, 4), "{err}");
    assert!(
        err.reason.contains("unknown transport message id 0x08"),
        "{err}"
    );

    let text = "> 0400\n> 05001d00\n";
    let (report, err) = trace::decode_capture(&capture::parse(text).unwrap(), &opts);
    let err = err.expect("an error");
    // The batch starts on line 1 (prefix) and its bytes continue on line 2; the Push at
    // byte 2 of line 2 has a truncated key.
    assert_eq!(err.line, 2, "{err}");
    assert!(err.reason.contains("truncated"), "{err}");
    assert!(report.records.is_empty());
}

#[test]
fn the_cli_decodes_every_vector_and_fails_on_garbage() {
    let exe = env!("CARGO_BIN_EXE_weft");
    let dir = spec_dir().join("vectors");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("hex"))
        .collect();
    files.sort();
    let out = Command::new(exe)
        .arg("decode")
        .arg("--check")
        .args(&files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).expect("one JSON object per line");
        assert!(v["dir"] == ">" || v["dir"] == "<");
        assert!(v["type"].is_string());
    }

    let out = Command::new(exe)
        .args(["decode", "--hex", "0200ff00"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("line 1, byte 2"), "{stderr}");
    assert!(stderr.contains("unknown transport message id"), "{stderr}");

    let out = Command::new(exe)
        .args(["decode", "--hex", "0100 04"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"KeepAlive\""));

    // A reader that went away (`weft decode ... | head -1`): a quiet, successful end.
    let batches = vec!["0100 04"; 10_000].join(" ");
    let mut decode = Command::new(exe)
        .args(["decode", "--hex", &batches])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(decode.stdout.take());
    let out = decode.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
