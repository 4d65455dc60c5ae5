//! Typed codec errors. Each names what was wrong, so a worker's log line (and the error reply
//! a peer gets) says exactly why a frame was refused.

use core::fmt;

/// Why bytes could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum DecodeError {
    /// The input ended before `what` was complete.
    Truncated {
        /// The field or structure being read.
        what: &'static str,
    },
    /// The frame does not start with `HIPR`.
    BadMagic,
    /// The peer speaks a protocol version this side does not.
    UnsupportedVersion {
        /// The version the frame carries.
        version: u16,
    },
    /// An opcode outside the table.
    UnknownOpcode {
        /// The raw opcode.
        opcode: u16,
    },
    /// Bytes were left over after the message (or the header's lengths disagree).
    LengthMismatch {
        /// What was being checked.
        what: &'static str,
    },
    /// A field holds a value outside its domain (an enum, a flag, a boolean, UTF-8, NUL rules).
    InvalidValue {
        /// The field.
        what: &'static str,
    },
    /// A length or count exceeds its limit from [`crate::limits`].
    TooLarge {
        /// The field.
        what: &'static str,
        /// The length or count announced.
        len: u64,
        /// The limit it exceeds.
        max: u64,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { what } => write!(f, "truncated input while reading {what}"),
            Self::BadMagic => f.write_str("bad magic (not a hip-remote frame)"),
            Self::UnsupportedVersion { version } => {
                write!(f, "unsupported protocol version {version}")
            }
            Self::UnknownOpcode { opcode } => write!(f, "unknown opcode {opcode:#06x}"),
            Self::LengthMismatch { what } => write!(f, "length mismatch in {what}"),
            Self::InvalidValue { what } => write!(f, "invalid value in {what}"),
            Self::TooLarge { what, len, max } => {
                write!(f, "{what} too large: {len} > limit {max}")
            }
        }
    }
}

impl core::error::Error for DecodeError {}

/// Why a value could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EncodeError {
    /// The output buffer is too small; `required` bytes would have sufficed.
    BufferTooSmall {
        /// Bytes the whole encoding needs.
        required: usize,
    },
    /// A value may not be put on the wire (a string with a NUL, a length over its limit…).
    InvalidValue {
        /// The field.
        what: &'static str,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BufferTooSmall { required } => {
                write!(f, "output buffer too small: {required} bytes required")
            }
            Self::InvalidValue { what } => write!(f, "value of {what} cannot be encoded"),
        }
    }
}

impl core::error::Error for EncodeError {}
