//! hip-worker: serves hip-remote sessions.
//!
//! A request flows: transport ([`transport_core`]'s traits, over [`transport_tcp`]) →
//! [`server`] driver loop (framing, bulk placement, error replies) → [`session::Session`]
//! (handle and pointer validation, limits; one [`proto_core::Handler`] method per opcode) →
//! [`backend`] (the only code that touches devices).

pub mod backend;
pub mod config;
pub mod listener;
#[cfg(feature = "rdma")]
pub mod rdma;
pub mod server;
pub mod session;

pub use config::WorkerConfig;
pub use server::Worker;
