//! # proto-core — the hip-remote wire protocol
//!
//! Everything two hip-remote peers must agree on, and nothing else: the frame header
//! ([`header`]), the one opcode table ([`opcode`]) from which requests, responses, names and
//! the worker's [`Handler`](opcode::Handler) trait are derived, every message
//! ([`wire`]), the limits ([`limits`]) and the status codes ([`status`]).
//!
//! The crate is `no_std`, never allocates and contains no `unsafe`. Decoding borrows from the
//! caller's buffer and validates everything before handing out a value; encoding writes into
//! a caller's `&mut [u8]` and reports the size it needed when that was too small. The
//! contract, as in smoltcp's `wire`: once a frame has been accepted by
//! [`FrameDecoder`](deframe::FrameDecoder), no accessor and no `parse` can panic.
//!
//! `docs/PROTOCOL.md` is the human-readable specification; its hex test vectors are checked
//! byte for byte by `tests/vectors.rs`.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs, unreachable_pub, unused_must_use)]

// `derive(arbitrary::Arbitrary)` (derive_arbitrary ≥ 1.4) expands to `::std::thread_local!`,
// and `arbitrary` itself needs std, so the test/fuzz-only feature links std.
#[cfg(any(test, feature = "arbitrary"))]
extern crate std;

#[macro_use]
mod macros;

pub mod auth;
pub mod blas_entry;
pub mod codec;
pub mod content;
pub mod deframe;
pub mod error;
pub mod field;
pub mod frame;
pub mod header;
pub mod hip_abi;
pub mod hip_error;
pub mod limits;
pub mod opcode;
pub mod rtc_entry;
pub mod status;
pub mod wire;

pub use codec::{Reader, Writer};
pub use deframe::{Deframed, DeframedHead, FrameDecoder};
pub use error::{DecodeError, EncodeError};
pub use field::{Bulk, FixedStr, List, StrList, WireField};
pub use frame::{encode_frame, parse_frame, EncodedFrame, Frame};
pub use header::{Flags, FrameHeader, HEADER_LEN, MAGIC, PROTOCOL_VERSION};
pub use opcode::{calls, Admission, BulkWay, Call, Caller, Calls, Delivery, Family, Handler, HandlerTypes, Opcode, Outcome, Request, Response};
pub use status::Status;

/// A message's encode/decode pair. Implemented by [`message!`] for every wire message, so
/// that `parse` and `emit` stay mirror images field for field.
pub trait Message<'a>: Sized {
    /// Upper bound of the control part this message can encode to (bulk data excluded).
    const MAX_CONTROL_LEN: usize;
    /// Whether the message carries a [`Bulk`] section after its control part.
    const HAS_BULK: bool;
    /// Decodes the message from its control part and bulk section.
    fn decode(cx: &mut field::DecodeCx<'a>) -> Result<Self, DecodeError>;
    /// Encodes the control part, registering bulk data (if any) with `cx`.
    fn encode<'w>(&self, cx: &mut field::EncodeCx<'w, 'a>) -> Result<(), EncodeError>;

    /// Parses a whole message: control part plus bulk section, nothing left over.
    fn parse(control: &'a [u8], bulk: &'a [u8]) -> Result<Self, DecodeError> {
        let mut cx = field::DecodeCx::new(control, bulk);
        let msg = Self::decode(&mut cx)?;
        cx.finish()?;
        Ok(msg)
    }
}
