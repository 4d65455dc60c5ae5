//! Whole frames: header + control part + bulk section.

use crate::error::{DecodeError, EncodeError};
use crate::field::EncodeCx;
use crate::header::{Flags, FrameHeader, HEADER_LEN, PROTOCOL_VERSION};
use crate::limits::{MAX_BULK_LEN, MAX_CONTROL_LEN};
use crate::Message;

/// A frame borrowed from a receive buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame<'a> {
    /// The validated header.
    pub header: FrameHeader,
    /// The control part (the message's fields).
    pub control: &'a [u8],
    /// The bulk section (empty unless [`Flags::BULK`]).
    pub bulk: &'a [u8],
}

/// Parses exactly one frame from `buf`; trailing bytes are an error.
pub fn parse_frame(buf: &[u8]) -> Result<Frame<'_>, DecodeError> {
    let header = FrameHeader::parse(buf)?;
    let payload = &buf[HEADER_LEN..];
    if payload.len() != header.payload_len() {
        return Err(if payload.len() < header.payload_len() {
            DecodeError::Truncated { what: "frame payload" }
        } else {
            DecodeError::LengthMismatch { what: "bytes after frame" }
        });
    }
    let (control, bulk) = payload.split_at(header.control_len as usize);
    Ok(Frame { header, control, bulk })
}

/// What [`encode_frame`] produced: `buf[..head_len]` (header and control part) followed on the
/// wire by `bulk`, which is never copied into `buf`, so transports can send it vectored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct EncodedFrame<'a> {
    /// Bytes of `buf` holding the header and control part.
    pub head_len: usize,
    /// The bulk section, sent after the head.
    pub bulk: &'a [u8],
}

impl EncodedFrame<'_> {
    /// Total bytes on the wire.
    pub fn wire_len(&self) -> usize {
        self.head_len + self.bulk.len()
    }
}

/// Addressing of one frame: everything in the header except the lengths, which
/// [`encode_frame`] derives from the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameMeta {
    /// Raw opcode.
    pub opcode: u16,
    /// Flags ([`Flags::BULK`] is set or cleared by the encoder).
    pub flags: Flags,
    /// Request id.
    pub request_id: u64,
    /// RDMA credits.
    pub credits: u16,
    /// Deferred status (responses only).
    pub aux: i32,
}

/// Encodes header + control part of `msg` into `buf`.
///
/// The header is first written with an impossible payload length (above every limit) and
/// patched only once the control part is complete, so an interrupted or failed encode never
/// leaves bytes that parse as a shorter valid frame.
pub fn encode_frame<'a, M: Message<'a>>(buf: &mut [u8], meta: FrameMeta, msg: &M) -> Result<EncodedFrame<'a>, EncodeError> {
    let placeholder = FrameHeader {
        version: PROTOCOL_VERSION,
        opcode: meta.opcode,
        flags: meta.flags,
        credits: meta.credits,
        request_id: meta.request_id,
        control_len: u32::MAX,
        bulk_len: 0,
        aux: meta.aux,
    };
    let (head, rest) = match buf.split_at_mut_checked(HEADER_LEN) {
        Some(parts) => parts,
        None => {
            // Measure how much the control part needs so the error says the full size.
            let mut scratch = [0u8; 0];
            let mut cx = EncodeCx::new(&mut scratch);
            msg.encode(&mut cx)?;
            return Err(EncodeError::BufferTooSmall { required: HEADER_LEN + cx.w.len() });
        }
    };
    head.copy_from_slice(&placeholder.emit());
    let mut cx = EncodeCx::new(rest);
    msg.encode(&mut cx)?;
    let bulk = cx.bulk.unwrap_or_default();
    let control_len = cx.w.finish().map_err(|e| match e {
        EncodeError::BufferTooSmall { required } => EncodeError::BufferTooSmall { required: HEADER_LEN + required },
        other => other,
    })?;
    if control_len > MAX_CONTROL_LEN {
        return Err(EncodeError::InvalidValue { what: "control part over MAX_CONTROL_LEN" });
    }
    if bulk.len() > MAX_BULK_LEN {
        return Err(EncodeError::InvalidValue { what: "bulk section over MAX_BULK_LEN" });
    }
    let mut flags = meta.flags;
    flags = if bulk.is_empty() { Flags::from_bits(flags.bits() & !Flags::BULK.bits()).unwrap_or(flags) } else { flags | Flags::BULK };
    let header = FrameHeader { flags, control_len: control_len as u32, bulk_len: bulk.len() as u32, ..placeholder };
    head.copy_from_slice(&header.emit());
    Ok(EncodedFrame { head_len: HEADER_LEN + control_len, bulk })
}
