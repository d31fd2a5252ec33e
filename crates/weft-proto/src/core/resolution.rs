//! The sequence-number and request-id resolution byte.

/// Width of a sequence-number or request-id space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bits {
    /// 8-bit field; SNs stay within 1 zint byte (0..=0x7F).
    U8,
    /// 16-bit field; SNs stay within 2 zint bytes (0..=0x3FFF).
    U16,
    /// 32-bit field (the default); SNs stay within 4 zint bytes (0..=0x0FFF_FFFF).
    U32,
    /// 64-bit field; SNs are u32 in practice (0..=0xFFFF_FFFF).
    U64,
}

impl Bits {
    const fn from_code(code: u8) -> Self {
        match code & 0b11 {
            0b00 => Self::U8,
            0b01 => Self::U16,
            0b10 => Self::U32,
            _ => Self::U64,
        }
    }

    const fn code(self) -> u8 {
        match self {
            Self::U8 => 0b00,
            Self::U16 => 0b01,
            Self::U32 => 0b10,
            Self::U64 => 0b11,
        }
    }

    /// The largest valid sequence number for this resolution.
    pub const fn max_sn(self) -> u64 {
        match self {
            Self::U8 => 0x7F,
            Self::U16 => 0x3FFF,
            Self::U32 => 0x0FFF_FFFF,
            Self::U64 => 0xFFFF_FFFF,
        }
    }

    /// Width in bits, for display.
    pub const fn width(self) -> u8 {
        match self {
            Self::U8 => 8,
            Self::U16 => 16,
            Self::U32 => 32,
            Self::U64 => 64,
        }
    }
}

/// The resolution byte: frame SN width in bits 0-1, request-id width in bits 2-3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolution(u8);

impl Resolution {
    /// The default (32-bit SNs and request ids), assumed when the byte is absent.
    pub const DEFAULT: Self = Self(0x0a);

    /// Builds a resolution from its byte; only the low 6 bits are kept, as the reference does.
    pub const fn from_byte(b: u8) -> Self {
        Self(b & 0x3F)
    }

    /// Builds a resolution from its two widths.
    pub const fn new(frame_sn: Bits, request_id: Bits) -> Self {
        Self(frame_sn.code() | (request_id.code() << 2))
    }

    /// The wire byte.
    pub const fn to_byte(self) -> u8 {
        self.0
    }

    /// Width of frame and fragment sequence numbers.
    pub const fn frame_sn(self) -> Bits {
        Bits::from_code(self.0)
    }

    /// Width of request ids.
    pub const fn request_id(self) -> Bits {
        Bits::from_code(self.0 >> 2)
    }
}

impl Default for Resolution {
    fn default() -> Self {
        Self::DEFAULT
    }
}
