//! Session control: handshake, authentication slot, liveness, error replies.

use crate::field::{Blob, Bulk, List, Name};
use zerocopy::byteorder::little_endian::U32;

/// Entries of a `DeviceMap` list: one per device a client can number.
const MAX_MAPPED_DEVICES: usize = crate::limits::MAX_CLIENT_DEVICES as usize;
use crate::status::Status;

/// Feature bits exchanged in [`Hello`]/[`Welcome`]; the session uses the intersection.
pub mod features {
    /// RDMA transport available (the worker listens for `rdma://`).
    pub const RDMA: u64 = 1 << 0;
    /// TLS available.
    pub const TLS: u64 = 1 << 1;
    /// Fire-and-forget requests ([`Flags::NO_REPLY`](crate::Flags::NO_REPLY)).
    pub const FIRE_AND_FORGET: u64 = 1 << 2;
    /// Chunked bulk streaming of large copies.
    pub const BULK_STREAMING: u64 = 1 << 3;
    /// The worker requires [`Authenticate`](super::Authenticate) after WELCOME.
    pub const AUTH_REQUIRED: u64 = 1 << 4;
    /// This connection is to become a session's callback channel (`CALLBACK_CHANNEL_ATTACH`):
    /// the worker serves it itself, never in a session process of its own.
    pub const CALLBACK_CHANNEL: u64 = 1 << 5;
    /// Operations without a round trip: the worker accepts client-chosen stream and event
    /// handles (`StreamCreateAt`, `EventCreateAt`) and completes a posted synchronous
    /// host-to-device copy (`MemcpyHtoD` with `sync`) before it reads the next request, so
    /// the client may post small `hipMemcpy` uploads instead of waiting for them.
    pub const CLIENT_ALLOCATION: u64 = 1 << 8;
    /// Large copies may travel over extra stripe connections of the session
    /// ([`StripesOpen`](super::StripesOpen)).
    pub const STRIPED_BULK: u64 = 1 << 6;
    /// The worker serves clients on its machine through shared memory: a client that shows
    /// it runs there ([`SameHostOffer`](super::SameHostOffer)) learns the socket to move to.
    pub const SHARED_MEMORY: u64 = 1 << 7;
    /// The worker keeps large uploads' content per tenant: the client may name a copy by its
    /// hash first ([`MemcpyHtoDByHash`](super::MemcpyHtoDByHash)) and have content kept
    /// ([`ContentRemember`](super::ContentRemember)); `crate::content`.
    pub const CONTENT_STORE: u64 = 1 << 9;
    /// The worker takes host-to-device copies compressed (LZ4 block format,
    /// [`MemcpyHtoDCompressed`](super::MemcpyHtoDCompressed)).
    pub const COMPRESSED_BULK: u64 = 1 << 10;
    /// The session outlives its connection: WELCOME carries a resume secret, and a client
    /// whose connection broke reconnects and sends [`Resume`](super::Resume) within the
    /// worker's grace period; nothing the worker executed runs twice.
    pub const RESUME: u64 = 1 << 11;
    /// The session can be the source of a copy between workers of a client's device list
    /// ([`TransferOffer`](super::TransferOffer)): it is served in the worker's own process.
    pub const TRANSFER_SOURCE: u64 = 1 << 12;
    /// The session can be the destination of a copy between workers
    /// ([`TransferPull`](super::TransferPull)): the worker may dial other workers.
    pub const TRANSFER_PULL: u64 = 1 << 13;
    /// Every bit this version defines.
    pub const ALL: u64 = RDMA
        | TLS
        | FIRE_AND_FORGET
        | BULK_STREAMING
        | AUTH_REQUIRED
        | CALLBACK_CHANNEL
        | STRIPED_BULK
        | SHARED_MEMORY
        | CLIENT_ALLOCATION
        | CONTENT_STORE
        | COMPRESSED_BULK
        | RESUME
        | TRANSFER_SOURCE
        | TRANSFER_PULL;
}

message! {
    /// HELLO: the first request of every connection.
    pub struct Hello<'a> {
        /// Oldest protocol version the client speaks.
        pub min_version: u16,
        /// Newest protocol version the client speaks.
        pub max_version: u16,
        /// [`features`] the client supports.
        pub features: u64,
        /// Free-form client identification for logs (program, host, pid).
        pub client_name: Name<'a>,
        /// A session id from an earlier WELCOME to resume, or 0 for a new session.
        pub resume_session: u64,
        /// Authentication token (empty when none).
        pub auth_token: Blob<'a>,
    }
}

message! {
    /// WELCOME: the worker's answer to [`Hello`].
    pub struct Welcome<'a> {
        /// The protocol version chosen for the session.
        pub version: u16,
        /// Features both sides support.
        pub features: u64,
        /// Session id; presenting it again in HELLO resumes the session.
        pub session_id: u64,
        /// Whether an earlier session was resumed.
        pub resumed: bool,
        /// Worker identification (host, version).
        pub worker_name: Name<'a>,
        /// Backend serving the session ("host", "cuda", "hip").
        pub backend: Name<'a>,
        /// Authentication challenge (empty unless `AUTH_REQUIRED`).
        pub auth_challenge: Blob<'a>,
        /// The worker's RDMA listener, `host:port` (empty: none). With the `RDMA` feature a
        /// client told to prefer RDMA reconnects there (`rdma://`).
        pub rdma_endpoint: Name<'a>,
        /// With `RESUME`: the secret that resumes this session on a new connection
        /// ([`Resume`]; `RESUME_SECRET_LEN` random bytes). Empty otherwise.
        pub resume_secret: Blob<'a>,
    }
}

message! {
    /// First request after authentication on a new connection of a client whose connection
    /// to session `session_id` broke: continue that session here.
    pub struct Resume<'a> {
        /// The session to continue (its WELCOME's `session_id`).
        pub session_id: u64,
        /// That WELCOME's `resume_secret`.
        pub secret: Blob<'a>,
        /// The client has every reply to requests up to this id: the worker re-sends the
        /// replies it recorded for later ones.
        pub received_through: u64,
    }
}

message! {
    /// Answer to [`Resume`]: the session goes on over this connection. The recorded replies
    /// to requests after `received_through` follow; the client re-sends what it sent after
    /// `executed_through`.
    pub struct Resumed {
        /// Highest request id the session has executed: later ones are to be sent again.
        pub executed_through: u64,
        /// Highest request id whose reply the worker's record no longer holds (0: none
        /// dropped); a reply the client still waits for at or below it is lost.
        pub evicted_through: u64,
    }
}

message! {
    /// A client's claim to run on the worker's machine, sent after WELCOME (before
    /// AUTHENTICATE where the worker asks for it) when WELCOME offered `SHARED_MEMORY`.
    pub struct SameHostOffer<'a> {
        /// [`same_host_proof`](crate::auth::same_host_proof) of the client's machine.
        pub proof: Blob<'a>,
    }
}

message! {
    /// Answer to [`SameHostOffer`].
    pub struct SameHostAnswer<'a> {
        /// The worker's shared-memory socket (`shm://` + this), or empty: the proof does not
        /// match the worker's machine.
        pub socket: Name<'a>,
    }
}

message! {
    /// Answer to the WELCOME's challenge.
    pub struct Authenticate<'a> {
        /// Response computed from the challenge and the shared secret.
        pub response: Blob<'a>,
    }
}

message! {
    /// Liveness and latency probe.
    pub struct Ping<'a> {
        /// Echoed back.
        pub nonce: u64,
        /// Echoed back.
        pub payload: Blob<'a>,
    }
}

message! {
    /// Answer to [`Ping`].
    pub struct Pong<'a> {
        /// The ping's nonce.
        pub nonce: u64,
        /// Worker monotonic clock, nanoseconds.
        pub worker_time_ns: u64,
        /// The ping's payload.
        pub payload: Blob<'a>,
    }
}

message! {
    /// A message without fields (requests that only name an operation, void replies).
    pub struct Empty {}
}

message! {
    /// Control part of every response with [`Flags::ERROR`](crate::Flags::ERROR).
    pub struct ErrorReply<'a> {
        /// What failed.
        pub status: Status,
        /// One line for humans: why.
        pub message: Name<'a>,
    }
}

message! {
    /// What kernels printed (`printf`), in the order they ran, for the client's standard
    /// output: the worker sends it unasked, with request id 0, before the reply of the
    /// synchronizing call that waited for those kernels.
    pub struct KernelOutputText<'a> {
        /// The text, as the frame's bulk section.
        pub data: Bulk<'a>,
    }
}

message! {
    /// `SessionDeviceMap`: the worker's devices the client sees, in no particular order:
    /// worker device `devices[i]` is the client's device `ordinals[i]`. At most
    /// [`MAX_CLIENT_DEVICES`](crate::limits::MAX_CLIENT_DEVICES) entries; empty hides every
    /// device.
    pub struct DeviceMap<'a> {
        /// The client's ordinals, each below `MAX_CLIENT_DEVICES`, none twice.
        pub ordinals: List<'a, U32, MAX_MAPPED_DEVICES>,
        /// The worker's devices, one per ordinal, none twice.
        pub devices: List<'a, U32, MAX_MAPPED_DEVICES>,
    }
}

message! {
    /// `SessionDeviceBase`: where this worker's devices start in the client's device list.
    pub struct DeviceBase {
        /// The client's ordinal of this worker's device 0 (at most
        /// [`MAX_DEVICE_BASE`](crate::limits::MAX_DEVICE_BASE)).
        pub base: u32,
    }
}
