//! hip-worker: serves hip-remote sessions.
//!
//! A request flows: transport ([`transport_core`]'s traits, over [`transport_tcp`]) → [`driver`] (framing, bulk placement,
//! error replies; the only code that reads or writes a connection; [`server`] accepts
//! connections and runs one driver each) → [`session::Session`] (handle and pointer
//! validation, limits; one handler trait per opcode family, generated from the opcode table,
//! no I/O) → [`backend`] (the only code that touches devices).

#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

pub mod accounting;
pub mod auth;
pub mod backend;
pub mod config;
pub mod device_faults;
pub mod devices;
pub mod driver;
pub mod http;
pub mod ipc;
pub mod listener;
pub mod logging;
pub mod metrics;
pub mod mps;
#[cfg(feature = "rdma")]
pub mod rdma;
pub mod resume;
pub mod sandbox;
pub mod server;
pub mod session;
#[cfg(target_os = "linux")]
pub mod shm;
pub mod stripes;
pub mod telemetry;
pub mod tls;
pub mod transfer;
pub mod watchdog;

pub use config::WorkerConfig;
pub use server::Worker;
