//! hip-remote's same-host transport (Linux): `transport-core`'s
//! [`FrameSink`](transport_core::FrameSink) and [`FrameSource`](transport_core::FrameSource)
//! over two single-producer single-consumer byte rings in a sealed memfd that worker and
//! client both map ([`ring`]). A Unix socket bootstraps the connection (the worker passes the
//! memfd with `SCM_RIGHTS`) and then carries only one-byte doorbells for a peer that sleeps,
//! and the end of the connection: a dead peer's socket closes, so it is noticed at once, even
//! by a blocked reader ([`conn`]). Frames are the protocol's own, written into the ring
//! whole; a frame larger than the ring streams through it in pieces.
//!
//! [`sys`] holds the system calls (the crate's only `unsafe`), also used by the worker and
//! client to share further memory (regions passed with [`sys::send_fds`]).
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

#[cfg(target_os = "linux")]
pub mod conn;
#[cfg(target_os = "linux")]
pub mod ring;
#[cfg(target_os = "linux")]
pub mod sys;

#[cfg(target_os = "linux")]
pub use conn::{connect, ShmAccepted, ShmConfig, ShmHangup, ShmListener, ShmSink, ShmSource};
