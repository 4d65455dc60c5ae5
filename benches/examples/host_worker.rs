//! A host-backend worker whose sessions run in this process, with host code allowed, as
//! `hip-remote bench` embeds one: for measuring the client (`scripts/call-instructions.sh`)
//! against kernels compiled by hiprtc, and the worker's own cost per request under callgrind
//! (`hip-worker --allow-host-code` would serve each session in a process of its own).
//!
//! `cargo run --release -p hip-remote-benches --example host_worker -- 127.0.0.1:PORT [SHM_SOCKET]`
//!
//! Prints `listening on ADDR` (and `listening on shm://PATH`), then serves until killed. No
//! token: for loopback measurements only.

use hip_worker::backend::{Backend, HostBackend, HostConfig};
use hip_worker::{Worker, WorkerConfig};
use std::sync::Arc;

fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".into());
    let shm = args.next();
    let backend: Arc<dyn Backend> =
        Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 256 << 20, allow_host_code: true, ..HostConfig::default() }));
    let worker = Worker::start(&addr, backend.clone(), WorkerConfig::default()).expect("worker starts");
    println!("listening on {}", worker.local_addr());
    let _shm = shm.map(|path| {
        let w = hip_worker::shm::ShmWorker::start_shm(std::path::Path::new(&path), backend, WorkerConfig::default()).expect("shm listener starts");
        println!("listening on shm://{path}");
        w
    });
    loop {
        std::thread::park();
    }
}
