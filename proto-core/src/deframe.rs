//! Finding frames in a byte stream (TCP): [`FrameDecoder::decode_head`] says how many bytes
//! make the next frame's head (header and control part), or how many more it needs,
//! validating the header first so a hostile length is refused before anything is buffered
//! for it; the transport then streams the bulk section wherever it belongs.
//! [`FrameDecoder::decode`] does the same for a whole frame held in memory.

use crate::error::DecodeError;
use crate::frame::{parse_frame, Frame};
use crate::header::{FrameHeader, HEADER_LEN};

/// Outcome of [`FrameDecoder::decode`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[must_use]
pub enum Deframed<'a> {
    /// A complete frame; `consumed` bytes of the input belong to it.
    Frame {
        /// Bytes of input the frame occupied.
        consumed: usize,
        /// The frame.
        frame: Frame<'a>,
    },
    /// The input holds only part of a frame; `needed` bytes in all are required (a header
    /// is validated as soon as it is complete, so `needed` is never a hostile length).
    NeedMore {
        /// Total bytes required for the next step.
        needed: usize,
    },
}

/// Outcome of [`FrameDecoder::decode_head`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[must_use]
pub enum DeframedHead<'a> {
    /// A complete head; `consumed` bytes of input hold the header and control part, and the
    /// bulk section (`header.bulk_len` bytes) follows them.
    Head {
        /// Bytes of input the head occupied.
        consumed: usize,
        /// The validated header.
        header: FrameHeader,
        /// The control part.
        control: &'a [u8],
    },
    /// The input holds only part of a head; `needed` bytes in all are required (never a
    /// hostile length: the header is validated as soon as it is complete).
    NeedMore {
        /// Total bytes required for the next step.
        needed: usize,
    },
}

/// Stateless stream deframer.
#[derive(Debug, Default, Clone, Copy)]
pub struct FrameDecoder;

impl FrameDecoder {
    /// Looks for one frame's head (header and control part) at the start of `input`; the
    /// bulk section need not be there (the production path of the TCP transport).
    pub fn decode_head(input: &[u8]) -> Result<DeframedHead<'_>, DecodeError> {
        Self::decode_head_within(input, crate::limits::MAX_CONTROL_LEN)
    }

    /// [`decode_head`](Self::decode_head) with a tighter control limit (a connection not yet
    /// authenticated: [`MAX_PREAUTH_CONTROL_LEN`](crate::limits::MAX_PREAUTH_CONTROL_LEN)),
    /// refused from the header alone, before any of the control part is needed.
    pub fn decode_head_within(input: &[u8], max_control: usize) -> Result<DeframedHead<'_>, DecodeError> {
        if input.len() < HEADER_LEN {
            return Ok(DeframedHead::NeedMore { needed: HEADER_LEN });
        }
        let header = FrameHeader::parse(input)?;
        if header.control_len as usize > max_control {
            return Err(DecodeError::TooLarge { what: "control part", len: header.control_len.into(), max: max_control as u64 });
        }
        let head_len = HEADER_LEN + header.control_len as usize;
        match input.get(HEADER_LEN..head_len) {
            Some(control) => Ok(DeframedHead::Head { consumed: head_len, header, control }),
            None => Ok(DeframedHead::NeedMore { needed: head_len }),
        }
    }

    /// Looks for one frame at the start of `input`.
    pub fn decode(input: &[u8]) -> Result<Deframed<'_>, DecodeError> {
        let header = match Self::decode_head(input)? {
            DeframedHead::Head { header, .. } => header,
            DeframedHead::NeedMore { needed } if input.len() < HEADER_LEN => return Ok(Deframed::NeedMore { needed }),
            // The header is complete (and valid): the whole frame is what is needed.
            DeframedHead::NeedMore { .. } => FrameHeader::parse(input)?,
        };
        let total = HEADER_LEN + header.payload_len();
        match input.get(..total) {
            Some(bytes) => Ok(Deframed::Frame { consumed: total, frame: parse_frame(bytes)? }),
            None => Ok(Deframed::NeedMore { needed: total }),
        }
    }
}
