//! Finding frames in a byte stream (TCP): [`FrameDecoder::decode`] says how many bytes make
//! the next frame, or how many more it needs, validating the header first so a hostile length
//! is refused before anything is buffered for it.

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

/// Stateless stream deframer.
#[derive(Debug, Default, Clone, Copy)]
pub struct FrameDecoder;

impl FrameDecoder {
    /// Looks for one frame at the start of `input`.
    pub fn decode(input: &[u8]) -> Result<Deframed<'_>, DecodeError> {
        if input.len() < HEADER_LEN {
            return Ok(Deframed::NeedMore { needed: HEADER_LEN });
        }
        let header = FrameHeader::parse(input)?;
        let total = HEADER_LEN + header.payload_len();
        match input.get(..total) {
            Some(bytes) => Ok(Deframed::Frame { consumed: total, frame: parse_frame(bytes)? }),
            None => Ok(Deframed::NeedMore { needed: total }),
        }
    }
}
