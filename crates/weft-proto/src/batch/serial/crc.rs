//! The frame check of Zenoh's serial link: a 32-bit CRC computed least significant bit
//! first, starting from all ones and inverted at the end, whose shift register is fed
//! back with the constant 0x04C11DB7 as it stands (not bit-reversed, as the usual
//! CRC-32 would have it), so its values differ from CRC-32's. Written little-endian after
//! the payload.

/// The feedback constant.
const FEEDBACK: u32 = 0x04C1_1DB7;

/// The register's change for each value of its low byte.
const TABLE: [u32; 256] = table();

const fn table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut rem = n as u32;
        let mut bit = 0;
        while bit < 8 {
            rem = if rem & 1 == 1 {
                FEEDBACK ^ (rem >> 1)
            } else {
                rem >> 1
            };
            bit += 1;
        }
        table[n] = rem;
        n += 1;
    }
    table
}

/// The check value of the bytes of `parts`, laid end to end.
pub fn checksum(parts: &[&[u8]]) -> u32 {
    let mut acc = !0u32;
    for &byte in parts.iter().flat_map(|p| p.iter()) {
        acc = (acc >> 8) ^ TABLE[((acc ^ u32::from(byte)) & 0xFF) as usize];
    }
    !acc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same register, one bit at a time.
    fn bitwise(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in data {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = (crc >> 1) ^ if crc & 1 == 1 { FEEDBACK } else { 0 };
            }
        }
        !crc
    }

    #[test]
    fn check_values() {
        assert_eq!(checksum(&[]), 0);
        // Frames of Zenoh's serial link carry these after their payloads.
        assert_eq!(
            checksum(&[&[0x00, 0x11, 0x00]]).to_le_bytes(),
            [0x73, 0xEC, 0x75, 0xF9]
        );
        assert_eq!(
            checksum(&[&[0x11, 0x22, 0x00, 0x33]]).to_le_bytes(),
            [0x8D, 0x03, 0x6D, 0xFB]
        );
        let digits = b"123456789";
        assert_eq!(checksum(&[digits]), bitwise(digits));
        assert_eq!(checksum(&[&digits[..4], &digits[4..]]), bitwise(digits));
        let long: alloc::vec::Vec<u8> = (0..3000u32).map(|i| (i * 31 % 251) as u8).collect();
        assert_eq!(checksum(&[&long]), bitwise(&long));
    }
}
