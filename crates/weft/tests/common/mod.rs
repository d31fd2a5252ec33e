//! Helpers shared by the session integration tests.

use weft::{Config, WhatAmI};

/// Opens a weft session on loopback without multicast scouting: listening on an
/// ephemeral TCP port when `listen`, and connecting to `connect` when given.
pub(crate) fn session(mode: WhatAmI, listen: bool, connect: Option<&str>) -> weft::Session {
    let config = Config {
        mode,
        multicast_scouting: false,
        listen: if listen {
            vec!["tcp/127.0.0.1:0".parse().unwrap()]
        } else {
            Vec::new()
        },
        connect: connect
            .map(|e| vec![e.parse().unwrap()])
            .unwrap_or_default(),
        ..Config::default()
    };
    weft::open(config).expect("open a weft session")
}
