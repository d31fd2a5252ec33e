//! Consistent Overhead Byte Stuffing (Cheshire and Baker): a frame's bytes rewritten so
//! that none is zero, leaving 0x00 free to end frames on the line.
//!
//! The encoded form is a sequence of blocks, each a code byte `c` (1..=255) followed by
//! `c - 1` non-zero bytes; a block whose code is below 255 stands for its bytes followed
//! by a zero, except the last block of the frame. Data that ends just after a full block
//! of 254 bytes gets a last block `01` of its own, as Zenoh's encoders write it.

use alloc::vec::Vec;

/// Longest run of non-zero bytes one block carries.
const FULL_BLOCK: usize = 254;

/// Most bytes COBS adds to `len` bytes of data.
pub const fn max_overhead(len: usize) -> usize {
    len / FULL_BLOCK + 1
}

/// Appends the encoding of the bytes of `parts`, laid end to end, to `out` (no delimiter).
pub fn encode_into(parts: &[&[u8]], out: &mut Vec<u8>) {
    let mut code_at = out.len();
    out.push(0);
    let mut run = 0usize;
    for &byte in parts.iter().flat_map(|p| p.iter()) {
        if byte == 0 {
            out[code_at] = (run + 1) as u8;
            code_at = out.len();
            out.push(0);
            run = 0;
            continue;
        }
        out.push(byte);
        run += 1;
        if run == FULL_BLOCK {
            out[code_at] = 0xFF;
            code_at = out.len();
            out.push(0);
            run = 0;
        }
    }
    out[code_at] = (run + 1) as u8;
}

/// Why encoded bytes do not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CobsError {
    /// A zero byte inside the encoding (a frame never holds its delimiter).
    Zero,
    /// A block's code points past the end of the frame.
    Truncated,
}

/// Decodes `encoded` (one frame, without its delimiter) into `out`, replacing what it
/// held.
pub fn decode_into(encoded: &[u8], out: &mut Vec<u8>) -> Result<(), CobsError> {
    out.clear();
    let mut pos = 0;
    while pos < encoded.len() {
        let code = usize::from(encoded[pos]);
        if code == 0 {
            return Err(CobsError::Zero);
        }
        let block = encoded
            .get(pos + 1..pos + code)
            .ok_or(CobsError::Truncated)?;
        if block.contains(&0) {
            return Err(CobsError::Zero);
        }
        out.extend_from_slice(block);
        pos += code;
        if code != 0xFF && pos < encoded.len() {
            out.push(0);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn encode(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_into(&[data], &mut out);
        out
    }

    fn decode(encoded: &[u8]) -> Result<Vec<u8>, CobsError> {
        let mut out = Vec::new();
        decode_into(encoded, &mut out).map(|()| out)
    }

    #[test]
    fn known_encodings() {
        // (data, encoding): the classic examples, and the edges of a full block.
        let cases: [(Vec<u8>, Vec<u8>); 6] = [
            (vec![0x00], vec![0x01, 0x01]),
            (vec![0x00, 0x00], vec![0x01, 0x01, 0x01]),
            (
                vec![0x11, 0x22, 0x00, 0x33],
                vec![0x03, 0x11, 0x22, 0x02, 0x33],
            ),
            (
                vec![0x11, 0x00, 0x00, 0x00],
                vec![0x02, 0x11, 0x01, 0x01, 0x01],
            ),
            ((1..=254).collect(), {
                let mut e = vec![0xFF];
                e.extend(1..=254u8);
                e.push(0x01);
                e
            }),
            ((1..=255).collect(), {
                let mut e = vec![0xFF];
                e.extend(1..=254u8);
                e.extend([0x02, 0xFF]);
                e
            }),
        ];
        for (data, encoding) in cases {
            assert_eq!(encode(&data), encoding, "{data:02x?}");
            assert_eq!(decode(&encoding).unwrap(), data);
        }
    }

    #[test]
    fn parts_encode_as_their_concatenation() {
        let data: Vec<u8> = (0..700u32).map(|i| (i % 7) as u8).collect();
        let mut parts = Vec::new();
        encode_into(&[&data[..3], &data[3..400], &[], &data[400..]], &mut parts);
        assert_eq!(parts, encode(&data));
        assert!(parts.len() <= data.len() + max_overhead(data.len()));
    }

    #[test]
    fn bad_encodings_are_refused() {
        assert_eq!(decode(&[0x05, 0x11]), Err(CobsError::Truncated));
        assert_eq!(decode(&[0x03, 0x11, 0x00]), Err(CobsError::Zero));
        assert_eq!(decode(&[0x00]), Err(CobsError::Zero));
        assert_eq!(decode(&[]).unwrap(), Vec::<u8>::new());
    }
}
