//! Eclipse Zenoh's router binary, zenohd 1.10.2, beside weft: the one `WEFT_ZENOHD`
//! names (`scripts/test.sh` installs it with `cargo install zenohd --version 1.10.2`).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use crate::prerequisite::Prerequisite;
use crate::wait_for_port;

/// The version of zenohd that weft is tested against.
pub const VERSION: &str = "1.10.2";

/// The zenohd binary `WEFT_ZENOHD` names, checked once to be version [`VERSION`]; `None`
/// when the variable is unset (the caller says what it does instead: skips, through
/// [`Zenohd::start`], or lets another router stand in). Panics when the variable is
/// unset and `WEFT_REQUIRE_ZENOHD` is set, or when it names something else than zenohd
/// 1.10.2.
pub fn binary() -> Option<PathBuf> {
    let Some(path) = std::env::var_os("WEFT_ZENOHD").map(PathBuf::from) else {
        assert!(
            !Prerequisite::Zenohd.is_required(),
            "WEFT_ZENOHD does not name a zenohd {VERSION} binary, but {} is set",
            Prerequisite::Zenohd.require_var()
        );
        return None;
    };
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    let checked = CHECKED.get_or_init(|| {
        let out = Command::new(&path)
            .arg("--version")
            .output()
            .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
        let said = String::from_utf8_lossy(&out.stdout);
        if out.status.success() && said.split_whitespace().any(|w| w == format!("v{VERSION}")) {
            Ok(())
        } else {
            Err(format!(
                "{} --version says {:?}, not zenohd v{VERSION}",
                path.display(),
                said.lines().last().unwrap_or_default()
            ))
        }
    });
    if let Err(e) = checked {
        panic!("WEFT_ZENOHD: {e}");
    }
    Some(path)
}

/// Like [`binary`], but says that the test is skipped when it returns `None`.
pub fn binary_or_skip() -> Option<PathBuf> {
    let path = binary();
    if path.is_none() {
        crate::prerequisite::skipped(format!(
            "WEFT_ZENOHD does not name a zenohd {VERSION} binary \
             (cargo install zenohd --version {VERSION} --locked)"
        ));
    }
    path
}

/// A zenohd process listening on `tcp/127.0.0.1:<port>` with multicast scouting off;
/// killed when dropped.
pub struct Zenohd {
    child: Child,
    port: u16,
}

impl Zenohd {
    /// Starts zenohd on `port` with the further command-line `args`, and waits until it
    /// accepts connections; `None` (the test is skipped, saying so) when no zenohd binary
    /// is named and none is required.
    pub fn start(port: u16, args: &[&str]) -> Option<Self> {
        let binary = binary_or_skip()?;
        let child = Command::new(&binary)
            .args(["-l", &format!("tcp/127.0.0.1:{port}")])
            .arg("--no-multicast-scouting")
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        wait_for_port(port);
        Some(Self { child, port })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Zenohd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
