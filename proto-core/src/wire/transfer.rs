//! Copies between workers of one client's device list (`docs/PROTOCOL.md`, "Copies between
//! workers"): the client offers a range of its session on the source worker under a one-time
//! grant, tells the destination worker to pull it, and the destination fetches the bytes from
//! the source over a connection of its own. The bytes never pass through the client.

use crate::field::{Blob, Bulk, Name};

/// Length of a transfer grant's secret ([`TransferOffer::secret`]).
pub const TRANSFER_SECRET_LEN: usize = 32;
/// Most bytes one grant covers. A larger copy is several grants.
pub const MAX_TRANSFER_BYTES: u64 = crate::limits::MAX_BULK_LEN as u64;
/// Most bytes one [`TransferData`] frame of a fetch's answer carries: the source sends each
/// piece as soon as its stream has read it, and the destination writes it while the next
/// one travels, so neither side holds more than a few of them per transfer.
pub const TRANSFER_CHUNK_BYTES: u64 = crate::limits::DEFAULT_COPY_CHUNK as u64;

message! {
    /// To the source worker: keep `len` bytes at `src`, as they are once the earlier work of
    /// `stream` is done, for one [`TransferFetch`] presenting `grant_id` and `secret`.
    pub struct TransferOffer<'a> {
        /// Names the grant within the session (chosen by the client, unique while it lives).
        pub grant_id: u64,
        /// [`TRANSFER_SECRET_LEN`] random bytes the fetch must present.
        pub secret: Blob<'a>,
        /// Source device address (an allocation of the session).
        pub src: u64,
        /// Bytes, at most [`MAX_TRANSFER_BYTES`].
        pub len: u64,
        /// Stream of the source worker the read is ordered in (0 = null stream).
        pub stream: u64,
    }
}

message! {
    /// To the destination worker: fetch grant `grant_id` of session `source_session` from the
    /// worker at `source` and write its bytes to `dst`, in the order of `stream`.
    pub struct TransferPull<'a> {
        /// The grant's id ([`TransferOffer::grant_id`]).
        pub grant_id: u64,
        /// The grant's secret.
        pub secret: Blob<'a>,
        /// The source worker's session id (its WELCOME to the client).
        pub source_session: u64,
        /// The source worker's address as the client reached it (`host:port`, `tcp://`, `tls://`).
        pub source: Name<'a>,
        /// Destination device address (an allocation of this session).
        pub dst: u64,
        /// Bytes, equal to the grant's.
        pub len: u64,
        /// Stream of this worker the write is ordered in (0 = null stream).
        pub stream: u64,
        /// Complete the write on the device before responding.
        pub sync: bool,
    }
}

message! {
    /// Worker to worker: the first and only request of a transfer connection, allowed before
    /// authentication (the grant's secret is the proof); answered with the granted bytes, in
    /// order, as [`TransferData`] frames of at most [`TRANSFER_CHUNK_BYTES`] each.
    pub struct TransferFetch<'a> {
        /// The source session's id.
        pub session_id: u64,
        /// The grant's id.
        pub grant_id: u64,
        /// The grant's secret.
        pub secret: Blob<'a>,
        /// Bytes expected, equal to the grant's.
        pub len: u64,
    }
}

message! {
    /// Answer to [`TransferFetch`]: one piece of the granted bytes; the pieces follow each
    /// other in order until they add up to the grant's length (an error frame ends the answer
    /// early).
    pub struct TransferData<'a> {
        /// The next granted bytes (1 to [`TRANSFER_CHUNK_BYTES`]), as the frame's bulk section.
        pub data: Bulk<'a>,
    }
}
