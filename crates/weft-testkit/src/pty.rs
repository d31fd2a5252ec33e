//! A serial line for tests: two pseudo-terminals that `socat` links, each end a device
//! path a serial endpoint can name, and a way to put noise on the line.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Prerequisite;

/// Two linked pseudo-terminals; `socat` is killed, and the links removed, when dropped.
pub struct PtyPair {
    child: Child,
    dir: PathBuf,
    /// One end's device (a symbolic link to its `/dev/pts/N`).
    pub a: PathBuf,
    /// The other end's.
    pub b: PathBuf,
}

impl PtyPair {
    /// Starts `socat -d -d pty,raw,echo=0 pty,raw,echo=0` and waits (5 s at most) until
    /// it says the line is up; `None` (the test skips, or fails where
    /// `WEFT_REQUIRE_SOCAT` is set) when socat is not installed.
    pub fn new() -> Option<Self> {
        if Command::new("socat")
            .arg("-V")
            .stdout(Stdio::null())
            .status()
            .is_err()
        {
            Prerequisite::Socat.missing("socat is not installed (apt-get install socat)");
            return None;
        }
        let dir = std::env::temp_dir().join(format!(
            "weft-pty-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the pty links");
        let (a, b) = (dir.join("a"), dir.join("b"));
        let child = start_socat(&a, &b);
        Some(Self { child, dir, a, b })
    }

    /// Tears the line down and makes it again at the same paths, as a serial adapter
    /// unplugged and plugged back: socat is killed (each side's port hangs up), its links
    /// removed, and a new socat links two new pseudo-terminals at `a` and `b`.
    pub fn reopen(&mut self) {
        self.tear_down();
        self.child = start_socat(&self.a, &self.b);
    }

    /// Kills socat (each side's port hangs up) and removes the links to its ends: the
    /// line is gone until [`PtyPair::reopen`].
    pub fn tear_down(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.a);
        let _ = std::fs::remove_file(&self.b);
    }

    /// `serial/<end>#baudrate=115200` for end `a` or `b`, with `extra` config appended
    /// (`;key=value...`).
    pub fn endpoint(&self, end: &Path, extra: &str) -> String {
        format!("serial/{}#baudrate=115200{extra}", end.display())
    }

    /// Writes `bytes` into the line from end `end`'s side: they reach the other end's
    /// reader (socat forwards what is written to a pty's device to the other pty).
    pub fn inject(&self, end: &Path, bytes: &[u8]) {
        use std::os::unix::fs::OpenOptionsExt;
        /// `O_NOCTTY` on Linux: the pty does not become the test's terminal.
        const O_NOCTTY: i32 = 0o400;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(O_NOCTTY)
            .open(end)
            .expect("open a pty to inject bytes");
        f.write_all(bytes).expect("inject bytes");
    }
}

/// Starts `socat -d -d pty,raw,echo=0 pty,raw,echo=0` linking its ends at `a` and `b`,
/// and waits (5 s at most) until it says the line is up.
fn start_socat(a: &Path, b: &Path) -> Child {
    let mut child = Command::new("socat")
        .args(["-d", "-d"])
        .arg(format!("pty,raw,echo=0,link={}", a.display()))
        .arg(format!("pty,raw,echo=0,link={}", b.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start socat");
    // socat says "starting data transfer loop" once both ends are open.
    let stderr = child.stderr.take().expect("socat's stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("starting data transfer loop") {
                let _ = tx.send(());
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .expect("socat links two ptys within 5 s");
    assert!(a.exists() && b.exists(), "socat made no pty links");
    child
}

/// Makes each pair's directory unique within the process.
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Drop for PtyPair {
    fn drop(&mut self) {
        self.tear_down();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
