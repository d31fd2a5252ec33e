//! The `.hex` capture format.
//!
//! One line per TCP payload or UDP datagram: `> HEX` (initiator to listener) or `< HEX`
//! (listener to initiator). A line `# conn K ...` starts a connection; other `#` lines and
//! blank lines are comments. A line of bare hex counts as `>`. Within a connection the `>`
//! lines, concatenated, form the initiator's byte stream (a batch may straddle lines).

use std::fmt;

/// Direction of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Initiator to listener (`>`).
    Out,
    /// Listener to initiator (`<`).
    In,
}

impl Dir {
    /// The direction's symbol.
    pub const fn symbol(self) -> &'static str {
        match self {
            Self::Out => ">",
            Self::In => "<",
        }
    }
}

/// One captured TCP payload or datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Direction.
    pub dir: Dir,
    /// 1-based line number in the input.
    pub line: usize,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// The segments of one connection (or of one UDP socket pair).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Connection {
    /// The text after `# ` of the line that started it, if any.
    pub title: Option<String>,
    /// Segments in capture order.
    pub segments: Vec<Segment>,
}

/// A whole capture.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capture {
    /// Connections in order.
    pub connections: Vec<Connection>,
}

/// A line that is not valid `.hex` input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for CaptureError {}

/// Decodes hexadecimal text (whitespace between byte pairs allowed).
pub fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if digits.len() % 2 != 0 {
        return Err(format!("odd number of hex digits ({})", digits.len()));
    }
    digits
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            let hi = hex_value(pair[0]);
            let lo = hex_value(pair[1]);
            match (hi, lo) {
                (Some(h), Some(l)) => Ok((h << 4) | l),
                _ => Err(format!(
                    "invalid hex digit in byte {i} ({:?})",
                    String::from_utf8_lossy(pair)
                )),
            }
        })
        .collect()
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Parses a `.hex` capture.
pub fn parse(text: &str) -> Result<Capture, CaptureError> {
    let mut capture = Capture::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(comment) = trimmed.strip_prefix('#') {
            let comment = comment.trim();
            if comment.starts_with("conn") {
                capture.connections.push(Connection {
                    title: Some(comment.to_string()),
                    segments: Vec::new(),
                });
            }
            continue;
        }
        let (dir, hex) = match trimmed.as_bytes()[0] {
            b'>' => (Dir::Out, &trimmed[1..]),
            b'<' => (Dir::In, &trimmed[1..]),
            _ => (Dir::Out, trimmed),
        };
        let bytes = parse_hex(hex).map_err(|reason| CaptureError { line, reason })?;
        if capture.connections.is_empty() {
            capture.connections.push(Connection::default());
        }
        if let Some(conn) = capture.connections.last_mut() {
            conn.segments.push(Segment { dir, line, bytes });
        }
    }
    Ok(capture)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_directions_and_comments() {
        let text = "> 0100\n# conn 2 a -> b\n< 0a0B\n\n# note\n>ff\n";
        let c = parse(text).unwrap();
        assert_eq!(c.connections.len(), 2);
        assert_eq!(c.connections[0].segments[0].bytes, vec![1, 0]);
        let second = &c.connections[1];
        assert_eq!(second.title.as_deref(), Some("conn 2 a -> b"));
        assert_eq!(second.segments[0].dir, Dir::In);
        assert_eq!(second.segments[0].bytes, vec![0x0a, 0x0b]);
        assert_eq!(second.segments[1].line, 6);
    }

    #[test]
    fn bad_hex_names_the_line() {
        let e = parse("> 00\n> 0g\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("invalid hex digit"), "{}", e.reason);
        assert!(parse("> 012").unwrap_err().reason.contains("odd"));
    }
}
