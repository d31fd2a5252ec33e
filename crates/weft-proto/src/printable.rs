//! Text from the wire as it may be shown in a log: user names, certificate names, key
//! expressions, locators, HTTP paths, whatever a peer chose. Such text may hold newlines
//! (to forge a log line), terminal escapes (to recolour or hide one), or be megabytes
//! long; [`printable`] shows it escaped and cut to [`PRINTABLE_MAX`] characters, without
//! copying it.

use core::fmt;

/// Characters of untrusted text shown at most; the rest is left out, and said so with
/// the number of bytes left out.
pub const PRINTABLE_MAX: usize = 256;

/// Untrusted text, displayed escaped and bounded (see [`printable`]).
#[derive(Clone, Copy)]
pub struct Printable<'a>(&'a [u8]);

/// `text` as it can be logged: printable ASCII as it is (a backslash doubled), letters and
/// digits of other scripts as they are, `\n`, `\r`, `\t` as Rust writes them, any other
/// character as `\u{…}`; at most [`PRINTABLE_MAX`] characters, then `…(+N bytes)`.
pub fn printable(text: &str) -> Printable<'_> {
    Printable(text.as_bytes())
}

/// `bytes` as [`printable`] shows text, a byte that is not UTF-8 as `\xNN`.
pub fn printable_bytes(bytes: &[u8]) -> Printable<'_> {
    Printable(bytes)
}

fn write_char(f: &mut fmt::Formatter<'_>, c: char) -> fmt::Result {
    match c {
        '\\' => f.write_str("\\\\"),
        '\n' => f.write_str("\\n"),
        '\r' => f.write_str("\\r"),
        '\t' => f.write_str("\\t"),
        ' '..='~' => fmt::Write::write_char(f, c),
        c if !c.is_ascii() && c.is_alphanumeric() => fmt::Write::write_char(f, c),
        c => write!(f, "\\u{{{:x}}}", u32::from(c)),
    }
}

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = 0;
        let mut rest = self.0;
        while !rest.is_empty() {
            let (valid, bad) = match core::str::from_utf8(rest) {
                Ok(s) => (s, None),
                Err(e) => {
                    let (ok, after) = rest.split_at(e.valid_up_to());
                    let bad_len = e.error_len().unwrap_or(after.len());
                    // Checked valid up to there.
                    let s = core::str::from_utf8(ok).unwrap_or_default();
                    (s, Some(&after[..bad_len]))
                }
            };
            for (i, c) in valid.char_indices() {
                if shown == PRINTABLE_MAX {
                    let left = rest.len() - i;
                    return write!(f, "…(+{left} bytes)");
                }
                write_char(f, c)?;
                shown += 1;
            }
            rest = &rest[valid.len()..];
            if let Some(bad) = bad {
                for b in bad {
                    if shown == PRINTABLE_MAX {
                        return write!(f, "…(+{} bytes)", rest.len());
                    }
                    write!(f, "\\x{b:02x}")?;
                    shown += 1;
                    rest = &rest[1..];
                }
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;

    #[test]
    fn control_characters_and_escapes_are_shown_escaped() {
        let shown = format!("{}", printable("a/\u{1b}[31mred\n/b\r\t\\\u{7}"));
        assert_eq!(shown, r"a/\u{1b}[31mred\n/b\r\t\\\u{7}");
        // Letters of other scripts stay legible; invisible or reordering ones do not.
        let shown = format!("{}", printable("été\u{202e}\u{200b}"));
        assert_eq!(shown, r"été\u{202e}\u{200b}");
        assert_eq!(format!("{:?}", printable("x\ny")), r#""x\ny""#);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_shown_as_hex() {
        let shown = format!("{}", printable_bytes(b"a\xff\xfeb\n"));
        assert_eq!(shown, r"a\xff\xfeb\n");
        let shown = format!("{}", printable_bytes(b"\xe2\x82"));
        assert_eq!(shown, r"\xe2\x82");
    }

    #[test]
    fn long_text_is_cut_with_what_is_left_out() {
        let long: String = core::iter::repeat_n('x', 10_000).collect();
        let shown = format!("{}", printable(&long));
        assert!(shown.starts_with(&"x".repeat(PRINTABLE_MAX)), "{shown}");
        assert!(shown.ends_with(&format!("…(+{} bytes)", 10_000 - PRINTABLE_MAX)));
        let noise = [0xffu8; 1000];
        let shown = format!("{}", printable_bytes(&noise));
        assert!(shown.ends_with(&format!("…(+{} bytes)", 1000 - PRINTABLE_MAX)));
        assert!(shown.len() < 4 * PRINTABLE_MAX + 20);
        // Exactly the limit: nothing said left out.
        let exact: String = core::iter::repeat_n('y', PRINTABLE_MAX).collect();
        assert_eq!(format!("{}", printable(&exact)), exact);
    }
}
