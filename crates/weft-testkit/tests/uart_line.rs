//! The emulated UART (`uart_line`): what is written on one end comes out of the other,
//! whole and in order, both ways, never faster than the line's rate, and counted.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `O_NOCTTY`: the terminal does not become the test's.
const O_NOCTTY: i32 = 0o400;

fn open(path: &std::path::Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(O_NOCTTY)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

#[test]
fn bytes_cross_whole_in_order_and_no_faster_than_the_baud_rate() {
    let dir = std::env::temp_dir().join(format!("weft-uart-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a"), dir.join("b"));
    let mut line = Command::new(env!("CARGO_BIN_EXE_uart_line"))
        .args(["--baud", "115200", "--a"])
        .arg(&a)
        .arg("--b")
        .arg(&b)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start uart_line");
    let mut report = BufReader::new(line.stdout.take().unwrap()).lines();
    assert_eq!(report.next().unwrap().unwrap(), "READY");
    let (mut end_a, mut end_b) = (open(&a), open(&b));

    // 5,760 bytes at 11,520 bytes per second: half a second at the least.
    let sent: Vec<u8> = (0..5_760u32).map(|i| (i % 251) as u8).collect();
    let started = Instant::now();
    let writer = {
        let mut end_a = end_a.try_clone().unwrap();
        let sent = sent.clone();
        std::thread::spawn(move || end_a.write_all(&sent).unwrap())
    };
    let mut got = vec![0u8; sent.len()];
    end_b.read_exact(&mut got).unwrap();
    let took = started.elapsed();
    writer.join().unwrap();
    assert_eq!(got, sent, "the bytes changed on the way");
    assert!(
        took >= Duration::from_millis(490),
        "5,760 bytes crossed a 115,200 baud line in {took:?}"
    );

    // And back the other way.
    end_b.write_all(b"the other way").unwrap();
    let mut back = [0u8; 13];
    end_a.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"the other way");

    // The counts reach what crossed each way (a report every 100 ms).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(
            Instant::now() < deadline,
            "the counts never reached 5760 and 13"
        );
        let counts = report.next().expect("a report").unwrap();
        // `bytes a_to_b=N b_to_a=M at_ms=T`: the counts, then when they were taken.
        let (seen, at) = counts
            .rsplit_once(" at_ms=")
            .unwrap_or_else(|| panic!("no time in {counts:?}"));
        assert!(at.parse::<u64>().is_ok(), "{counts}");
        if seen == "bytes a_to_b=5760 b_to_a=13" {
            break;
        }
        assert!(seen.starts_with("bytes "), "{counts}");
    }
    let _ = line.kill();
    let _ = line.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
