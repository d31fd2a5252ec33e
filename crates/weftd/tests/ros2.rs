//! ROS 2's router: weftd on the configuration rmw_zenoh gives its router (kept in
//! `tests/data/rmw_zenoh_router.json5`), carrying a ROS graph's traffic as rmw_zenoh's
//! sessions make it: peers connected to the router, each listening on a port of its own
//! and gossiping (rmw_zenoh's session defaults), so that the router tells them of each
//! other and they connect to each other directly, liveliness tokens under `@ros2_lv`
//! for the graph, topics as key expressions naming the type and its hash, services as
//! queryables asked with a long timeout. Eclipse Zenoh peers play the nodes.

use std::time::{Duration, Instant};

use weft_testkit::{free_port, zenoh_python};

mod common;
use common::{zenoh_node_at, Weftd};

const TYPE_HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

fn rmw_router(port: u16) -> Weftd {
    let config = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/rmw_zenoh_router.json5"
    );
    // The file listens on tcp/[::]:7447; the test's own port instead.
    Weftd::start(port, &["-c", config, "--cfg", "listen/endpoints:[]"])
}

#[test]
fn a_ros_graph_through_weftd_on_rmw_zenohs_router_configuration() {
    if zenoh_python().is_none() {
        return;
    }
    let port = free_port();
    let _weftd = rmw_router(port);
    let topic = format!("0/chatter/std_msgs::msg::dds_::String_/{TYPE_HASH}");
    let service = format!("0/add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/{TYPE_HASH}");
    let talker_token = format!(
        "@ros2_lv/0/aa11/0/11/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/{TYPE_HASH}/::,7:,:,:,,"
    );
    let server_token = format!(
        "@ros2_lv/0/bb22/0/12/SS/%/%/server/%add_two_ints/example_interfaces::srv::dds_::AddTwoInts_/{TYPE_HASH}/::,10:,:,:,,"
    );
    let peer = |extra: &[&str]| {
        let listen = format!("tcp/127.0.0.1:{}", free_port());
        let mut args = vec!["--gossip", "--listen", listen.as_str()];
        args.extend_from_slice(extra);
        zenoh_node_at("peer", port, &args)
    };

    // The listener, then the talker's node (its token), and a service server (its token
    // and its queryable).
    let listener = peer(&["--sub", &topic, "--count", "1", "--timeout", "60"]);
    let _talker_node = peer(&["--token", &talker_token, "--timeout", "60"]);
    let _server = peer(&[
        "--token",
        &server_token,
        "--queryable",
        &service,
        "--reply",
        "sum: 5",
        "--timeout",
        "60",
    ]);

    // The graph: each node's token, once, for a node that asks.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let graph = peer(&["--liveliness-get", "@ros2_lv/**", "--timeout", "3"]);
        let mut keys = Vec::new();
        loop {
            let line = graph.line(10);
            if line == "DONE" {
                break;
            }
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            keys.push(v["key"].as_str().unwrap().to_string());
        }
        keys.sort();
        let mut want = vec![talker_token.clone(), server_token.clone()];
        want.sort();
        if keys == want {
            break;
        }
        assert!(Instant::now() < deadline, "the graph seen: {keys:?}");
        assert!(
            keys.iter().all(|k| want.contains(k)) && keys.len() <= want.len(),
            "a token seen twice or unknown: {keys:?}"
        );
    }

    // The topic: the talker publishes until the listener has a message.
    let deadline = Instant::now() + Duration::from_secs(20);
    let sample = loop {
        let talker = peer(&["--put", &topic, "--payload", "hello world", "--repeat", "5"]);
        assert!(talker.wait());
        if let Ok(line) = listener.lines.recv_timeout(Duration::from_millis(500)) {
            break line;
        }
        assert!(Instant::now() < deadline, "the listener heard nothing");
    };
    let sample: serde_json::Value = serde_json::from_str(&sample).unwrap();
    assert_eq!(sample["key"], topic.as_str());
    assert_eq!(sample["payload"], "hello world");

    // The service: a client asks with a long timeout (rmw_zenoh's services wait), and
    // gets the one answer, then the end.
    // It asks once connected to the nodes still there (the talker's node and the server;
    // the listener left with its message): weftd, as zenohd, carries nothing from one
    // peer to another.
    let client = peer(&["--await-peers", "2", "--get", &service, "--timeout", "30"]);
    assert_eq!(client.sample(30)["peers"].as_array().unwrap().len(), 2);
    let reply: serde_json::Value = serde_json::from_str(&client.line(30)).unwrap();
    assert_eq!(reply["payload"], "sum: 5");
    assert_eq!(client.line(30), "DONE");
}

/// zenoh-ext's advanced publisher and subscriber (rmw_zenoh's topics: a publication
/// cache answering history queries, publisher detection by liveliness, heartbeats and
/// sequence numbers for miss detection) through weftd on rmw_zenoh's router
/// configuration: zenoh-python sessions as clients (weftd carries everything) and as
/// gossiping peers (weftd introduces them). zenohd 1.10.2 gives the same answers.
#[test]
fn zenoh_ext_advanced_publisher_and_subscriber_through_weftd() {
    let Some(python) = zenoh_python() else {
        return;
    };
    let port = free_port();
    let _weftd = rmw_router(port);
    let script = weft_testkit::repo_root().join("tests/interop/advanced_pubsub.py");
    for mode in ["client", "peer"] {
        let out = std::process::Command::new(&python)
            .arg(&script)
            .arg(format!("tcp/127.0.0.1:{port}"))
            .args(["--mode", mode, "--timeout", "20"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let want = serde_json::json!({
            "history": ["h0", "h1", "h2", "h3", "h4"],
            "late": ["l0", "l1", "l2"],
            "live": ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"],
            "plain_sns": [0, 1, 2, 3, 4, 5, 6, 7],
            "plain_source_is_publisher": true,
            "misses": 0,
        });
        assert_eq!(got, want, "{mode}");
    }
}

/// weftd takes rmw_zenoh's router configuration: what weft does not implement is told
/// once, grouped, and the key Zenoh removed with why.
#[test]
fn rmw_zenohs_router_configuration_loads_with_its_warnings_grouped() {
    use std::io::{BufRead, BufReader};
    let config = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/rmw_zenoh_router.json5"
    );
    let port = free_port();
    let mut weftd = std::process::Command::new(env!("CARGO_BIN_EXE_weftd"))
        .args(["-c", config, "--cfg", "listen/endpoints:[]"])
        .args([
            "-l",
            &format!("tcp/127.0.0.1:{port}"),
            "--no-multicast-scouting",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut warnings = Vec::new();
    for line in BufReader::new(weftd.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.contains("listening on") {
            break;
        }
        if line.contains("warning") {
            warnings.push(line);
        }
    }
    let _ = weftd.kill();
    let _ = weftd.wait();
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert!(warnings[0].contains("peers_failover_brokering` ignored: removed"));
    assert!(
        warnings[1].contains("17 configuration keys weft does not implement")
            && warnings[1].contains("transport.link.tx.queue.size.{control, real_time,"),
        "{}",
        warnings[1]
    );
}
