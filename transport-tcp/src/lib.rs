//! hip-remote's TCP transport: `transport-core`'s [`FrameSink`](transport_core::FrameSink)
//! and [`FrameSource`](transport_core::FrameSource) over `std::net::TcpStream` configured
//! with socket2 ([`tcp`]), with TCP's own tuning ([`config`]) and the reader's spin
//! ([`spin`]), every write a send that cannot raise SIGPIPE ([`nosigpipe`]); the same over
//! TLS with rustls (`tls`, cargo feature `tls`). The traits themselves live in
//! `transport-core`; callers import them from there.
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

pub mod config;
pub mod nosigpipe;
pub mod spin;
pub mod tcp;
#[cfg(feature = "tls")]
pub mod tls;

pub use config::TcpConfig;
pub use tcp::{connect, listen, TcpSink, TcpSource};
