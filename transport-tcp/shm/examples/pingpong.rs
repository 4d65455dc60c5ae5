//! Round trips of a small frame over the shared rings, and 64 MiB one way:
//! `cargo run --release -p transport-shm --example pingpong [ROUNDS]`. Prints the round
//! trip's p50/p99 and the bulk rate (a ring copy on each side).

#[cfg(target_os = "linux")]
fn main() {
    use proto_core::wire::{MemcpyHtoD, Ping};
    use proto_core::{Bulk, Flags, Request};
    use std::time::{Duration, Instant};
    use transport_core::{FrameSink, FrameSource};
    use transport_shm::{connect, ShmConfig, ShmListener};

    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let path = std::env::temp_dir().join(format!("hip-shm-pingpong-{}.sock", std::process::id()));
    let listener = ShmListener::bind(&path).expect("bind");
    let config = ShmConfig { spin: Duration::from_millis(1), ..ShmConfig::default() };
    let mut buf = [0u8; 256];
    let frame = Request::Ping(Ping { nonce: 1, payload: b"x"[..].into() }).encode_frame(&mut buf, Flags::empty(), 1).expect("encode");
    let ping = buf[..frame.head_len].to_vec();
    let answer = ping.clone();
    // Answers every frame with the small frame, after reading its bulk.
    let echo = std::thread::spawn(move || {
        let (mut sink, mut source, _hangup) = listener.accept().expect("accept").establish(&config).expect("establish");
        let mut bulk = vec![0u8; 64 << 20];
        while source.recv_head().is_ok() {
            let n = source.bulk_remaining();
            source.recv_bulk(&mut bulk[..n]).expect("bulk");
            sink.send(&answer, &[]).expect("echo");
        }
    });
    let (mut sink, mut source) = connect(&path, &config).expect("connect");
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        sink.send(&ping, &[]).expect("send");
        source.recv_head().expect("reply");
        times.push(started.elapsed());
    }
    times.sort();
    println!("round trip: p50 {:?}, p99 {:?} ({rounds} rounds)", times[rounds / 2], times[rounds * 99 / 100]);

    let data = vec![7u8; 64 << 20];
    // The first pass also faults in the receiver's buffer: the later ones are the ring's rate.
    for pass in 1..=3 {
        let started = Instant::now();
        let frame = Request::MemcpyHtoD(MemcpyHtoD { dst: 1, stream: 0, sync: true, data: Bulk(&data) })
            .encode_frame(&mut buf, Flags::empty(), 2)
            .expect("encode");
        sink.send(&buf[..frame.head_len], frame.bulk).expect("send");
        source.recv_head().expect("reply");
        let took = started.elapsed();
        println!("64 MiB one way, pass {pass}: {took:?}, {:.1} GB/s", data.len() as f64 / took.as_secs_f64() / 1e9);
    }
    drop((sink, source));
    echo.join().expect("echo thread");
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("the same-host transport needs Linux");
}
