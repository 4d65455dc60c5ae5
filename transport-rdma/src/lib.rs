//! hip-remote's RDMA transport: `transport-core`'s [`FrameSink`]/[`FrameSource`] over reliable-connected (RC)
//! queue pairs, connected with librdmacm (InfiniBand and RoCEv2 alike).
//!
//! # Layers
//!
//! - **Sans-IO core** (always built, no libibverbs needed): [`credit`] (receive-credit flow
//!   control), [`wire`] (immediate-data encoding and the connect/accept private data),
//!   [`rx`] (reassembly of the frame byte stream from received segments), [`tx`] (send-slot
//!   bookkeeping), Pure
//!   state machines, tested with plain `cargo test -p transport-rdma`.
//! - **Engine** ([`engine`]): [`Sink`]/[`Source`], the [`FrameSink`]/[`FrameSource`]
//!   implementation, generic over a [`Fabric`] (post send, post receive, poll, block). It
//!   owns credits, batching, reassembly, keepalive and failure handling.
//! - **Fabrics**: [`mem::MemFabric`] (in memory, strict: a SEND without a posted receive is an
//!   RNR error, as on hardware) for tests, and `verbs::VerbsFabric` (feature `verbs`, Linux
//!   only) on rdma-sys: one PD, CQ, completion channel and RC QP per connection, registered
//!   send and receive rings.
//!
//! # Wire use of RDMA
//!
//! The frames of `proto-core` form a byte stream, exactly as on TCP. That stream is cut into
//! SENDs of at most one receive slot (`slot_len`, 64 KiB by default); small frames queued with
//! [`FrameSink::queue`] share a SEND (the coalescer). Every SEND carries 32-bit immediate data:
//! the receive credits the sender returns to its peer and a segment kind ([`wire::Imm`]).
//! Credits ride in the immediate data rather than in the frame header's `credits` field
//! because a SEND is not a frame: one SEND may hold many frames or a piece of one, and pure
//! credit updates must not be frames (the session layer would see them). The header field
//! stays 0 on RDMA as on TCP. See `docs/RDMA.md` for the flow-control argument and what is
//! zero-copy on which path.
//!
//! With [`RdmaConfig::one_sided`] (the default) on both sides, a bulk section of at least
//! [`RdmaConfig::one_sided_min`] bytes (64 KiB from memory announced through
//! [`MemoryRegistry`], which [`regcache`] registers once) is not copied: the sink registers it
//! and sends a [`wire::RemoteDesc`] in its place (a `remote` segment, in stream order); the
//! source's `recv_bulk(dst)` RDMA-READs into `dst`, then answers `done`, which releases the
//! sender. A client may instead offer a *landing* for a reply ([`FrameSink::offer_landing`]):
//! the worker RDMA-WRITEs the reply's bulk into it and marks it `written` in the stream.
//! Device memory announced with a dma-buf export is read into and written from directly
//! (GPUDirect), with pinned staging as the logged fallback.
//!
//! [`FrameSink`]: transport_core::FrameSink
//! [`FrameSource`]: transport_core::FrameSource
//! [`FrameSink::queue`]: transport_core::FrameSink::queue
//! [`FrameSink::offer_landing`]: transport_core::FrameSink::offer_landing
//! [`MemoryRegistry`]: transport_core::MemoryRegistry
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod config;
pub mod credit;
pub mod engine;
pub mod fabric;
pub mod hook;
pub mod mem;
pub mod regcache;
pub mod rx;
pub mod tx;
pub mod wire;

#[cfg(all(target_os = "linux", feature = "verbs"))]
pub mod verbs;

pub use config::RdmaConfig;
pub use engine::{Role, Sink, Source};
pub use fabric::Fabric;

#[cfg(all(target_os = "linux", feature = "verbs"))]
pub use verbs::{connect, Incoming, RdmaConnector, RdmaListener, RdmaSink, RdmaSource, VerbsFabric};

/// Whether this build can open verbs devices (feature `verbs` on Linux).
pub const HAS_VERBS: bool = cfg!(all(target_os = "linux", feature = "verbs"));
