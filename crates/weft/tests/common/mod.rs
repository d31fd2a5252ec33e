//! Helpers shared by the session integration tests.

use weft::{Config, WhatAmI};

/// Opens a weft session on loopback without multicast scouting: listening on an
/// ephemeral TCP port when `listen`, and connecting to `connect` when given.
#[allow(dead_code)] // each test file compiles its own copy of this module
pub(crate) fn session(mode: WhatAmI, listen: bool, connect: Option<&str>) -> weft::Session {
    let connect: Vec<String> = connect.map(str::to_string).into_iter().collect();
    session_to(mode, listen, &connect)
}

/// As [`session`], connecting to every endpoint of `connect`.
pub(crate) fn session_to(mode: WhatAmI, listen: bool, connect: &[String]) -> weft::Session {
    let config = Config {
        mode,
        multicast_scouting: false,
        listen: if listen {
            vec!["tcp/127.0.0.1:0".parse().unwrap()]
        } else {
            Vec::new()
        },
        connect: connect.iter().map(|e| e.parse().unwrap()).collect(),
        ..Config::default()
    };
    weft::open(config).expect("open a weft session")
}
