//! The client's side of a hip-remote session as a state machine, in the shape of quinn-proto's
//! `Connection`: no sockets, no threads, no clock. A driver (`client-capi`'s `conn`) owns the
//! transport and the clock and feeds this crate:
//!
//! - inputs: [`ClientSession::submit`] (a request to send: its encoded head, its bulk, its
//!   [`Ticket`]), [`ClientSession::handle_frame`] (a frame head the transport read, with `now`;
//!   answers what to do with its bulk), [`ClientSession::handle_timeout`];
//! - outputs: [`ClientSession::poll_transmit`] (frames the session itself sends: heartbeat
//!   PINGs), [`ClientSession::poll_timeout`] (when to call `handle_timeout`),
//!   [`ClientSession::batch_queued`] (whether queued fire-and-forget frames go out now),
//!   [`ClientSession::take_deferred`] and [`ClientSession::ended`] (errors the application
//!   sees later).
//!
//! Unlike quinn, a request's bulk section is never copied in: it is the application's memory,
//! borrowed for the call, and the driver hands it to the transport next to the head.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod batching;
pub mod callbacks;
pub mod capture;
pub mod client_handles;
pub mod client_memory;
pub mod compression;
mod error;
pub mod graph_host;
mod liveness;
pub mod managed;
pub mod memory_book;
mod pending;
pub mod published;
pub mod resume;
mod session;
pub mod streams;
mod welcome;

pub use batching::{Batching, Flush, FIRST_BATCH_BYTES, STREAMING_BATCH_BYTES, STREAMING_WINDOW_BYTES};
pub use error::{status_to_hip, version_mismatch, CallError, HipError, LOST};
pub use liveness::{Expired, Timers};
pub use session::{resume_failed, ClientSession, Expect, Inbound, Landing, SessionConfig, Submitted, Ticket};
pub use welcome::WelcomeInfo;
