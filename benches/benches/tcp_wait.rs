//! TCP transport: one small-frame round trip (ping → echo by a second thread) over loopback
//! through `TcpSink`/`TcpSource`, with readers that block at once (`spin` 0) and with the
//! default spin (`HIP_REMOTE_TCP_SPIN_US`). The difference is the blocked reader's sleep and
//! wake-up on both sides. Figures: `docs/BENCHMARKS.md`.
//!
//! `cargo bench -p hip-remote-benches --bench tcp_wait -- --warm-up-time 1 --measurement-time 5`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hip_remote_benches::ping_frame;
use std::time::Duration;
use transport_core::config::DEFAULT_SPIN;
use transport_core::{FrameSink, FrameSource};
use transport_tcp::tcp::{connect, listen, split};
use transport_tcp::TcpConfig;

fn round_trip(c: &mut Criterion) {
    let mut g = c.benchmark_group("tcp_round_trip_64B");
    g.throughput(Throughput::Elements(1));
    for (name, spin) in [("block_at_once", Duration::ZERO), ("spin_default", DEFAULT_SPIN)] {
        let config = TcpConfig { spin, ..TcpConfig::default() };
        let listener = listen("127.0.0.1:0").expect("listen");
        let addr = listener.local_addr().expect("address").to_string();
        let echo = std::thread::spawn(move || {
            let (stream, _) = listener.accept().expect("accept");
            let (mut tx, mut rx) = split(stream, &config).expect("split");
            // Echoes every frame until the client goes away.
            while let Ok(head) = rx.recv_head() {
                let reply = ping_frame(head.header.request_id);
                if tx.send(&reply, &[]).is_err() {
                    break;
                }
            }
        });
        let (mut tx, mut rx) = connect(&addr, &config).expect("connect");
        let frame = ping_frame(1);
        g.bench_function(name, |b| {
            b.iter(|| {
                tx.send(&frame, &[]).expect("send");
                rx.recv_head().expect("echo");
            })
        });
        // Dropping both halves closes the socket, which ends the echo loop.
        drop((tx, rx));
        echo.join().expect("echo thread");
    }
    g.finish();
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
