//! Priorities, reliability, congestion control and the network QoS byte.

use core::fmt;

/// One of the eight priorities, 0 (Control) being the highest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Priority {
    /// 0: declarations and interests.
    Control,
    /// 1.
    RealTime,
    /// 2.
    InteractiveHigh,
    /// 3.
    InteractiveLow,
    /// 4.
    DataHigh,
    /// 5: the default for data.
    #[default]
    Data,
    /// 6.
    DataLow,
    /// 7: the lowest.
    Background,
}

impl Priority {
    /// Every priority, highest first.
    pub const ALL: [Self; 8] = [
        Self::Control,
        Self::RealTime,
        Self::InteractiveHigh,
        Self::InteractiveLow,
        Self::DataHigh,
        Self::Data,
        Self::DataLow,
        Self::Background,
    ];

    /// The priority with numeric value `v` (0..=7); other values give `None`.
    pub const fn from_u8(v: u8) -> Option<Self> {
        if v < 8 {
            Some(Self::ALL[v as usize])
        } else {
            None
        }
    }

    /// Numeric value, 0..=7.
    pub const fn to_u8(self) -> u8 {
        self as u8
    }

    /// The priority's name as used in Zenoh's configuration and logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Control => "control",
            Self::RealTime => "real_time",
            Self::InteractiveHigh => "interactive_high",
            Self::InteractiveLow => "interactive_low",
            Self::DataHigh => "data_high",
            Self::Data => "data",
            Self::DataLow => "data_low",
            Self::Background => "background",
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The channel a Frame or Fragment travels on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Reliability {
    /// May be dropped under congestion.
    BestEffort,
    /// Delivered in order, never dropped by the transport.
    #[default]
    Reliable,
}

impl Reliability {
    /// From the R flag of a Frame or Fragment.
    pub const fn from_flag(reliable: bool) -> Self {
        if reliable {
            Self::Reliable
        } else {
            Self::BestEffort
        }
    }

    /// Whether this is the reliable channel.
    pub const fn is_reliable(self) -> bool {
        matches!(self, Self::Reliable)
    }
}

/// What a sender does when its transmit queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CongestionControl {
    /// Drop the message.
    #[default]
    Drop,
    /// Wait for room.
    Block,
    /// Wait for the first message only (unstable in Zenoh).
    BlockFirst,
}

/// The QoS value carried by the network-message QoS extension (0x21).
///
/// Bits 0-2 priority, bit 3 (D) block, bit 4 (E) express, bit 5 (F) block-first.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct NetworkQos(u8);

impl NetworkQos {
    /// Data priority, drop, not express: the value omitted from the wire.
    pub const DEFAULT: Self = Self(0x05);
    /// What Zenoh uses for Declare and Interest: Control priority, block.
    pub const DECLARE: Self = Self(0x08);
    /// What Zenoh uses for Request, Response, ResponseFinal: Data priority, block.
    pub const REQUEST: Self = Self(0x0d);

    const D: u8 = 0x08;
    const E: u8 = 0x10;
    const F: u8 = 0x20;

    /// Builds the QoS value from its parts.
    pub const fn new(priority: Priority, congestion: CongestionControl, express: bool) -> Self {
        let mut v = priority as u8;
        v |= match congestion {
            CongestionControl::Drop => 0,
            CongestionControl::Block => Self::D,
            CongestionControl::BlockFirst => Self::F,
        };
        if express {
            v |= Self::E;
        }
        Self(v)
    }

    /// The raw byte, as on the wire.
    pub const fn to_byte(self) -> u8 {
        self.0
    }

    /// From the raw value, keeping every bit (unknown bits are preserved for forwarding).
    pub const fn from_byte(b: u8) -> Self {
        Self(b)
    }

    /// The message's priority.
    pub const fn priority(self) -> Priority {
        Priority::ALL[(self.0 & 0x07) as usize]
    }

    /// The congestion control to apply.
    pub const fn congestion_control(self) -> CongestionControl {
        if self.0 & Self::D != 0 {
            CongestionControl::Block
        } else if self.0 & Self::F != 0 {
            CongestionControl::BlockFirst
        } else {
            CongestionControl::Drop
        }
    }

    /// Whether the message must be sent at once, without waiting to batch.
    pub const fn is_express(self) -> bool {
        self.0 & Self::E != 0
    }
}

impl Default for NetworkQos {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Debug for NetworkQos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "NetworkQos({:#04x}: {}, {:?}{})",
            self.0,
            self.priority(),
            self.congestion_control(),
            if self.is_express() { ", express" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_values_seen_on_the_wire() {
        let declare = NetworkQos::from_byte(0x08);
        assert_eq!(declare.priority(), Priority::Control);
        assert_eq!(declare.congestion_control(), CongestionControl::Block);
        let rt = NetworkQos::from_byte(0x19);
        assert_eq!(rt.priority(), Priority::RealTime);
        assert!(rt.is_express());
        let bf = NetworkQos::from_byte(0x24);
        assert_eq!(bf.priority(), Priority::DataHigh);
        assert_eq!(bf.congestion_control(), CongestionControl::BlockFirst);
        assert_eq!(
            NetworkQos::new(Priority::InteractiveHigh, CongestionControl::Block, true).to_byte(),
            0x1a
        );
    }
}
