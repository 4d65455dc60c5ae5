//! hip-remote transports.
//!
//! [`transport`] defines what client and worker code see of a connection: a [`FrameSink`]
//! that sends frames (header + control part, then the bulk section, never copied into an
//! intermediate buffer when large) with optional coalescing of fire-and-forget frames, and a
//! [`FrameSource`] that returns the next frame's header and control part and lets the caller
//! place the bulk section wherever it belongs. The transport knows lengths, not opcodes.
//!
//! [`tcp`] implements it over `std::net::TcpStream` configured with socket2. The RDMA
//! transport (`transport-rdma`) implements the same traits.
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

pub mod config;
pub mod spin;
pub mod tcp;
pub mod transport;

pub use config::TcpConfig;
pub use tcp::{connect, listen, TcpSink, TcpSource};
pub use transport::{FrameSink, FrameSource, MemoryRegistry, Received, TransportError};
#[cfg(unix)]
pub use transport::DeviceExport;
