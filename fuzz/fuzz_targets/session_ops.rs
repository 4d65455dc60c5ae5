//! Operation sequences (allocations, copies both ways, memsets, streams, events, graphs,
//! synchronizations, broken connections, idle time) driven through both ends of a session in
//! one thread, the worker on its host backend, and checked against a model of device memory
//! and stream order: `hip_remote_pair::ops` says what an input is and what is asserted.
#![no_main]

use hip_remote_pair::ops;
use hip_remote_pair::Pair;
use hip_worker::backend::HostBackend;
use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

/// One backend for the process (its stream threads are made once); each input gets a fresh
/// session on it, and must leave it as it found it.
static BACKEND: OnceLock<Arc<HostBackend>> = OnceLock::new();

fuzz_target!(init: hip_remote_fuzz::keep_freed_memory(), |data: &[u8]| {
    ops::run(BACKEND.get_or_init(Pair::backend), data);
});
