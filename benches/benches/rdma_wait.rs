//! RDMA engine: one small-frame round trip (ping → echo) over the in-memory fabric, with the
//! waiters sleeping on the completion channel at once (`spin` 0) and with the default spin
//! time. The in-memory fabric's "completion channel" is a condition variable, so the
//! difference is the cost of the sleep and wake-up on both sides that polling saves; on a
//! real NIC the interrupt comes on top of it. Figures: `docs/BENCHMARKS.md`.
//!
//! `cargo bench -p hip-remote-benches --bench rdma_wait -- --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hip_remote_benches::ping_frame;
use std::time::Duration;
use transport_core::config::DEFAULT_SPIN;
use transport_core::{FrameSink, FrameSource};
use transport_rdma::config::RdmaConfig;
use transport_rdma::engine::{split, Role};
use transport_rdma::mem::MemFabric;

fn round_trip(c: &mut Criterion) {
    let mut g = c.benchmark_group("rdma_round_trip_64B");
    g.throughput(Throughput::Elements(1));
    for (name, spin) in [("sleep_at_once", Duration::ZERO), ("spin_default", DEFAULT_SPIN)] {
        let config = RdmaConfig { spin, ..RdmaConfig::default() };
        let (fa, fb) = MemFabric::pair(&config, &config);
        let (mut tx, mut rx) = split(fa, &config, Role::Client);
        let (mut echo_tx, mut echo_rx) = split(fb, &config, Role::Worker);
        let echo = std::thread::spawn(move || {
            // Echoes every frame until the client goes away.
            while let Ok(head) = echo_rx.recv_head() {
                let reply = ping_frame(head.header.request_id);
                if echo_tx.send(&reply, &[]).and_then(|()| echo_tx.flush()).is_err() {
                    break;
                }
            }
        });
        let frame = ping_frame(1);
        g.bench_function(name, |b| {
            b.iter(|| {
                tx.send(&frame, &[]).expect("send");
                tx.flush().expect("flush");
                rx.recv_head().expect("echo");
            })
        });
        // Dropping both halves sends the FIN that ends the echo loop.
        drop((tx, rx));
        echo.join().expect("echo thread");
    }
    g.finish();
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
