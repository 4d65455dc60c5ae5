//! The fixed 32-byte frame header.
//!
//! ```text
//!  0      4        6       8       10        12            20            24         28        32
//!  +------+--------+-------+-------+---------+-------------+-------------+----------+---------+
//!  | HIPR | version| opcode| flags | credits | request_id  | payload_len | bulk_len |  aux    |
//!  +------+--------+-------+-------+---------+-------------+-------------+----------+---------+
//!           u16 LE   u16 LE  u16 LE  u16 LE      u64 LE        u32 LE       u32 LE    i32 LE
//! ```
//! `payload_len` counts every byte after the header: the control part followed by
//! `bulk_len` bytes of bulk data. `aux` is zero on requests; on responses it carries the first
//! deferred (fire-and-forget) error since the previous response, as a [`Status`](crate::Status).

use crate::error::DecodeError;
use crate::limits::{MAX_BULK_LEN, MAX_CONTROL_LEN};
use zerocopy::byteorder::little_endian::{I32, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The four bytes every frame starts with.
pub const MAGIC: [u8; 4] = *b"HIPR";
/// The protocol version this crate speaks. Version 2 (the breadth and graph families) changed
/// message layouts of version 1, so a version-1 peer is refused with `UnsupportedVersion`
/// rather than misread.
pub const PROTOCOL_VERSION: u16 = 2;
/// Oldest protocol version this crate accepts in a HELLO.
pub const MIN_PROTOCOL_VERSION: u16 = 2;
/// Size of [`FrameHeader`] on the wire.
pub const HEADER_LEN: usize = 32;

/// The header's wire layout: the protocol's `mod field`, as a zerocopy struct.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawHeader {
    /// [`MAGIC`].
    pub magic: [u8; 4],
    /// Protocol version of the sender.
    pub version: U16,
    /// [`Opcode`](crate::Opcode) as a number.
    pub opcode: U16,
    /// [`Flags`] bits.
    pub flags: U16,
    /// Receive credits granted to the peer (RDMA flow control; 0 on TCP).
    pub credits: U16,
    /// Chosen by the requester, echoed by the response.
    pub request_id: U64,
    /// Bytes after the header (control part plus bulk).
    pub payload_len: U32,
    /// Trailing bytes of the payload that are bulk data.
    pub bulk_len: U32,
    /// Zero on requests; deferred error status on responses.
    pub aux: I32,
}

const _: () = assert!(core::mem::size_of::<RawHeader>() == HEADER_LEN);

/// Frame flags (a `u16` bit set). Unknown bits are refused so that a future flag can never be
/// silently ignored by an old peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Flags(u16);

impl Flags {
    /// The frame answers a request with the same `request_id`.
    pub const RESPONSE: Self = Self(1 << 0);
    /// The response reports a failure; its control part is an
    /// [`ErrorReply`](crate::wire::session::ErrorReply).
    pub const ERROR: Self = Self(1 << 1);
    /// Fire-and-forget: the worker sends no response; a failure is reported later in the
    /// `aux` field of the next response.
    pub const NO_REPLY: Self = Self(1 << 2);
    /// The payload ends with `bulk_len` bytes of bulk data.
    pub const BULK: Self = Self(1 << 3);
    /// Every defined bit.
    pub const ALL: Self = Self(0b1111);

    /// No flag.
    pub const fn empty() -> Self {
        Self(0)
    }
    /// The raw bits.
    pub const fn bits(self) -> u16 {
        self.0
    }
    /// Flags from raw bits, or `None` if an undefined bit is set.
    pub const fn from_bits(bits: u16) -> Option<Self> {
        if bits & !Self::ALL.0 == 0 {
            Some(Self(bits))
        } else {
            None
        }
    }
    /// Whether every bit of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
    /// `self` with `other`'s bits set.
    #[must_use]
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl core::ops::BitOr for Flags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        self.with(rhs)
    }
}

/// A validated header: the typed "Repr" of [`RawHeader`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FrameHeader {
    /// Sender's protocol version.
    pub version: u16,
    /// Raw opcode (validated against the table by [`Request::parse`](crate::Request::parse)).
    pub opcode: u16,
    /// Flags.
    pub flags: Flags,
    /// RDMA receive credits (0 on TCP).
    pub credits: u16,
    /// Request id.
    pub request_id: u64,
    /// Control part length (payload minus bulk).
    pub control_len: u32,
    /// Bulk section length.
    pub bulk_len: u32,
    /// Deferred error status on responses, 0 on requests.
    pub aux: i32,
}

impl FrameHeader {
    /// Parses and validates a header: magic, version, flags, and both lengths against their
    /// limits, all before the caller reads or allocates anything for the payload.
    pub fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        let raw = bytes.get(..HEADER_LEN).and_then(|b| RawHeader::ref_from_bytes(b).ok()).ok_or(DecodeError::Truncated { what: "frame header" })?;
        if raw.magic != MAGIC {
            return Err(DecodeError::BadMagic);
        }
        let version = raw.version.get();
        if !(MIN_PROTOCOL_VERSION..=PROTOCOL_VERSION).contains(&version) {
            return Err(DecodeError::UnsupportedVersion { version });
        }
        let flags = Flags::from_bits(raw.flags.get()).ok_or(DecodeError::InvalidValue { what: "header.flags" })?;
        let payload_len = raw.payload_len.get();
        let bulk_len = raw.bulk_len.get();
        let control_len = payload_len.checked_sub(bulk_len).ok_or(DecodeError::LengthMismatch { what: "header.bulk_len > payload_len" })?;
        if control_len as usize > MAX_CONTROL_LEN {
            return Err(DecodeError::TooLarge { what: "control part", len: control_len.into(), max: MAX_CONTROL_LEN as u64 });
        }
        if bulk_len as usize > MAX_BULK_LEN {
            return Err(DecodeError::TooLarge { what: "bulk section", len: bulk_len.into(), max: MAX_BULK_LEN as u64 });
        }
        if flags.contains(Flags::BULK) != (bulk_len > 0) {
            return Err(DecodeError::InvalidValue { what: "header.flags BULK disagrees with bulk_len" });
        }
        let aux = raw.aux.get();
        if aux != 0 && !flags.contains(Flags::RESPONSE) {
            return Err(DecodeError::InvalidValue { what: "header.aux on a request" });
        }
        Ok(Self {
            version,
            opcode: raw.opcode.get(),
            flags,
            credits: raw.credits.get(),
            request_id: raw.request_id.get(),
            control_len,
            bulk_len,
            aux,
        })
    }

    /// Writes the header in wire form (the mirror image of [`parse`](Self::parse)).
    pub fn emit(&self) -> [u8; HEADER_LEN] {
        let raw = RawHeader {
            magic: MAGIC,
            version: U16::new(self.version),
            opcode: U16::new(self.opcode),
            flags: U16::new(self.flags.bits()),
            credits: U16::new(self.credits),
            request_id: U64::new(self.request_id),
            payload_len: U32::new(self.control_len.saturating_add(self.bulk_len)),
            bulk_len: U32::new(self.bulk_len),
            aux: I32::new(self.aux),
        };
        let mut out = [0u8; HEADER_LEN];
        out.copy_from_slice(raw.as_bytes());
        out
    }

    /// Payload bytes that follow the header.
    pub fn payload_len(&self) -> usize {
        self.control_len as usize + self.bulk_len as usize
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static HEADER_BYTES: [u8; HEADER_LEN] = [
        b'H', b'I', b'P', b'R', 0x02, 0x00, 0x01, 0x02, 0x09, 0x00, 0x00, 0x00, //
        0x2a, 0, 0, 0, 0, 0, 0, 0, 0x18, 0, 0, 0, 0x10, 0, 0, 0, 0x00, 0, 0, 0,
    ];

    fn repr() -> FrameHeader {
        FrameHeader {
            version: 2,
            opcode: 0x0201,
            flags: Flags::RESPONSE | Flags::BULK,
            credits: 0,
            request_id: 42,
            control_len: 8,
            bulk_len: 16,
            aux: 0,
        }
    }

    #[test]
    fn test_parse() {
        assert_eq!(FrameHeader::parse(&HEADER_BYTES), Ok(repr()));
    }

    #[test]
    fn test_emit() {
        assert_eq!(repr().emit(), HEADER_BYTES);
    }

    #[test]
    fn test_bad_magic_version_flags() {
        let mut b = HEADER_BYTES;
        b[0] = b'X';
        assert_eq!(FrameHeader::parse(&b), Err(DecodeError::BadMagic));
        let mut b = HEADER_BYTES;
        b[4] = 9;
        assert_eq!(FrameHeader::parse(&b), Err(DecodeError::UnsupportedVersion { version: 9 }));
        // Version 1's layouts differ: refused, never misread.
        b[4] = 1;
        assert_eq!(FrameHeader::parse(&b), Err(DecodeError::UnsupportedVersion { version: 1 }));
        let mut b = HEADER_BYTES;
        b[9] = 0x80;
        assert!(matches!(FrameHeader::parse(&b), Err(DecodeError::InvalidValue { .. })));
    }

    #[test]
    fn test_impossible_len() {
        let mut b = HEADER_BYTES;
        b[20] = 4; // payload 4 < bulk 16
        assert!(matches!(FrameHeader::parse(&b), Err(DecodeError::LengthMismatch { .. })));
    }

    #[test]
    fn test_overlong() {
        let mut b = HEADER_BYTES;
        b[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(FrameHeader::parse(&b), Err(DecodeError::TooLarge { .. })));
        assert_eq!(FrameHeader::parse(&b[..31]), Err(DecodeError::Truncated { what: "frame header" }));
    }
}
