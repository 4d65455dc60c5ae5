//! What client and worker code see of a hip-remote connection, whatever carries it.
//!
//! A [`FrameSink`] sends frames (header + control part, then the bulk section, never copied
//! into an intermediate buffer when large) with optional coalescing of fire-and-forget
//! frames; a [`FrameSource`] returns the next frame's header and control part and lets the
//! caller place the bulk section wherever it belongs. A [`MemoryRegistry`] lets a transport
//! prepare long-lived memory once. [`config`] holds the settings every transport shares
//! (timeouts, the waiter's spin). A [`Connector`] is how the client opens a connection over
//! one transport; the worker's listeners are its counterpart.
//!
//! The transport knows lengths, not opcodes: this crate reads frame headers only.
//! `transport-tcp` and `transport-rdma` implement it.

#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

pub mod config;
pub mod connector;
pub mod mem;
pub mod test_skip;
mod transport;

pub use config::{EnvError, Liveness, Timeouts};
pub use connector::{Connected, Connector, Scheme};
#[cfg(unix)]
pub use transport::DeviceExport;
pub use transport::{FrameSink, FrameSource, MemoryRegistry, Received, TransportError};
