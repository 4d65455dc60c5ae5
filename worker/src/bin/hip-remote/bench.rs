//! `hip-remote bench`: end-to-end figures through the real client library, beside raw TCP
//! measured in the same run on the same path (loopback unless `HIP_REMOTE_WORKER` names a
//! remote worker, in which case the raw baseline is still loopback and says so).
//!
//! Measures: sync call round trip (p50/p99/p99.9) vs a raw 64-byte TCP ping-pong; async op
//! rate (fire-and-forget `hipMemsetAsync`); host↔device copy bandwidth, pageable and pinned,
//! 4 KiB…256 MiB vs one raw TCP stream. Prints a markdown table; `--json FILE` writes JSON.

use crate::hip::Hip;
use std::ffi::c_void;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Options of one run.
pub struct BenchOptions {
    /// Largest copy, in MiB.
    pub max_mib: usize,
    /// Round trips for the latency figures.
    pub round_trips: usize,
    /// Fire-and-forget operations for the rate figure.
    pub async_ops: usize,
    /// Where to write JSON.
    pub json: Option<std::path::PathBuf>,
}

struct Latency {
    p50: f64,
    p99: f64,
    p999: f64,
}

fn latency(mut samples: Vec<Duration>) -> Latency {
    samples.sort();
    let us = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e6;
    Latency { p50: us(0.5), p99: us(0.99), p999: us(0.999) }
}

fn raw_pair() -> std::io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let client = TcpStream::connect(listener.local_addr()?)?;
    let (server, _) = listener.accept()?;
    for s in [&client, &server] {
        transport_tcp::tcp::configure(s, &transport_tcp::TcpConfig { io_timeout: None, ..Default::default() })?;
    }
    Ok((client, server))
}

/// Raw TCP 64-byte ping-pong round trips.
fn raw_round_trips(n: usize) -> std::io::Result<Latency> {
    let (mut client, mut server) = raw_pair()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let mut buf = [0u8; 64];
        while server.read_exact(&mut buf).is_ok() {
            server.write_all(&buf)?;
        }
        Ok(())
    });
    let mut buf = [7u8; 64];
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + n / 10 {
        let t = Instant::now();
        client.write_all(&buf)?;
        client.read_exact(&mut buf)?;
        if i >= n / 10 {
            samples.push(t.elapsed());
        }
    }
    drop(client);
    let _ = echo.join();
    Ok(latency(samples))
}

/// Raw one-stream TCP bandwidth: `len` bytes from one user buffer into another of the same
/// size (as a copy moves them: neither side reuses a cache-hot chunk), timed until the
/// receiver has read them all and acknowledged. Best of three.
fn raw_stream_gbps(len: usize) -> std::io::Result<f64> {
    let (mut client, mut server) = raw_pair()?;
    let sink = std::thread::spawn(move || -> std::io::Result<()> {
        let mut dst = vec![0u8; len];
        for _ in 0..3 {
            let mut got = 0;
            while got < len {
                let n = server.read(&mut dst[got..])?;
                if n == 0 {
                    return Ok(());
                }
                got += n;
            }
            server.write_all(&[1])?;
        }
        Ok(())
    });
    let src = vec![0x5au8; len];
    let mut best = 0f64;
    for _ in 0..3 {
        let t = Instant::now();
        client.write_all(&src)?;
        let mut ack = [0u8; 1];
        client.read_exact(&mut ack)?;
        best = best.max(len as f64 / t.elapsed().as_secs_f64() / 1e9);
    }
    let _ = sink.join();
    Ok(best)
}

struct CopyRow {
    bytes: usize,
    h2d_pageable: f64,
    d2h_pageable: f64,
    h2d_pinned: f64,
    d2h_pinned: f64,
}

/// Runs the benchmark; returns the markdown report.
pub fn run(hip: &Hip, opts: &BenchOptions) -> Result<String, String> {
    let io = |e: std::io::Error| e.to_string();
    let raw_rtt = raw_round_trips(opts.round_trips).map_err(io)?;
    // SAFETY (all calls below): arguments follow the HIP API contracts: valid out-pointers,
    // buffers of the stated sizes, device pointers from hipMalloc.
    let (sync_rtt, async_rate, rows) = unsafe {
        let mut samples = Vec::with_capacity(opts.round_trips);
        for i in 0..opts.round_trips + opts.round_trips / 10 {
            let t = Instant::now();
            hip.check("hipDeviceSynchronize", (hip.device_synchronize)())?;
            if i >= opts.round_trips / 10 {
                samples.push(t.elapsed());
            }
        }
        let sync_rtt = latency(samples);

        let mut stream = std::ptr::null_mut();
        hip.check("hipStreamCreate", (hip.stream_create)(&mut stream))?;
        let mut small = std::ptr::null_mut();
        hip.check("hipMalloc", (hip.malloc)(&mut small, 4096))?;
        let t = Instant::now();
        for _ in 0..opts.async_ops {
            hip.check("hipMemsetAsync", (hip.memset_async)(small, 0, 64, stream))?;
        }
        hip.check("hipStreamSynchronize", (hip.stream_synchronize)(stream))?;
        let async_rate = opts.async_ops as f64 / t.elapsed().as_secs_f64();
        hip.check("hipFree", (hip.free)(small))?;
        hip.check("hipStreamDestroy", (hip.stream_destroy)(stream))?;

        let max = opts.max_mib << 20;
        let mut dev = std::ptr::null_mut();
        hip.check("hipMalloc", (hip.malloc)(&mut dev, max))?;
        let mut pageable = vec![1u8; max];
        let mut pinned: *mut c_void = std::ptr::null_mut();
        hip.check("hipHostMalloc", (hip.host_malloc)(&mut pinned, max, 0))?;
        std::ptr::write_bytes(pinned as *mut u8, 2, max);
        let mut rows = Vec::new();
        let mut size = 4096;
        while size <= max {
            // Move at least 512 MiB (or 3 copies) per figure so small sizes are not noise.
            let reps = ((512 << 20) / size).clamp(3, 20_000);
            let gbps = |kind: i32, host: *mut c_void| -> Result<f64, String> {
                let (dst, src) = if kind == 1 { (dev, host as *const c_void) } else { (host, dev as *const c_void) };
                hip.check("hipMemcpy", (hip.memcpy)(dst, src, size, kind))?; // warm-up
                let t = Instant::now();
                for _ in 0..reps {
                    hip.check("hipMemcpy", (hip.memcpy)(dst, src, size, kind))?;
                }
                Ok((size * reps) as f64 / t.elapsed().as_secs_f64() / 1e9)
            };
            rows.push(CopyRow {
                bytes: size,
                h2d_pageable: gbps(1, pageable.as_mut_ptr().cast())?,
                d2h_pageable: gbps(2, pageable.as_mut_ptr().cast())?,
                h2d_pinned: gbps(1, pinned)?,
                d2h_pinned: gbps(2, pinned)?,
            });
            size *= if size < (1 << 20) { 16 } else { 4 };
        }
        hip.check("hipHostFree", (hip.host_free)(pinned))?;
        hip.check("hipFree", (hip.free)(dev))?;
        (sync_rtt, async_rate, rows)
    };
    let raw_bw = raw_stream_gbps(opts.max_mib << 20).map_err(io)?;

    let mut md = String::new();
    use std::fmt::Write as _;
    let _ = writeln!(md, "| figure | hip-remote | raw TCP | ratio | target |");
    let _ = writeln!(md, "|---|---|---|---|---|");
    let _ = writeln!(
        md,
        "| sync call round trip p50 (hipDeviceSynchronize vs 64 B ping-pong) | {:.1} µs | {:.1} µs | {:.2}× | ≤ 1.2× |",
        sync_rtt.p50,
        raw_rtt.p50,
        sync_rtt.p50 / raw_rtt.p50
    );
    let _ = writeln!(md, "| sync call round trip p99 | {:.1} µs | {:.1} µs | {:.2}× | |", sync_rtt.p99, raw_rtt.p99, sync_rtt.p99 / raw_rtt.p99);
    let _ = writeln!(md, "| sync call round trip p99.9 | {:.1} µs | {:.1} µs | {:.2}× | |", sync_rtt.p999, raw_rtt.p999, sync_rtt.p999 / raw_rtt.p999);
    let _ = writeln!(md, "| async op rate (hipMemsetAsync, fire-and-forget) | {:.0} ops/s | | | |", async_rate);
    if let Some(last) = rows.last() {
        let _ = writeln!(
            md,
            "| {} MiB H2D pageable / one TCP stream | {:.2} GB/s | {:.2} GB/s | {:.2}× | ≥ 0.9× |",
            last.bytes >> 20,
            last.h2d_pageable,
            raw_bw,
            last.h2d_pageable / raw_bw
        );
        let _ = writeln!(
            md,
            "| {} MiB D2H pageable / one TCP stream | {:.2} GB/s | {:.2} GB/s | {:.2}× | ≥ 0.9× |",
            last.bytes >> 20,
            last.d2h_pageable,
            raw_bw,
            last.d2h_pageable / raw_bw
        );
    }
    let _ = writeln!(md);
    let _ = writeln!(md, "| copy size | H2D pageable | D2H pageable | H2D pinned | D2H pinned |");
    let _ = writeln!(md, "|---|---|---|---|---|");
    for r in &rows {
        let size = if r.bytes >= 1 << 20 { format!("{} MiB", r.bytes >> 20) } else { format!("{} KiB", r.bytes >> 10) };
        let _ = writeln!(
            md,
            "| {size} | {:.2} GB/s | {:.2} GB/s | {:.2} GB/s | {:.2} GB/s |",
            r.h2d_pageable, r.d2h_pageable, r.h2d_pinned, r.d2h_pinned
        );
    }
    if let Some(path) = &opts.json {
        let copies: Vec<String> = rows
            .iter()
            .map(|r| {
                format!(
                    "{{\"bytes\":{},\"h2d_pageable_gbps\":{:.4},\"d2h_pageable_gbps\":{:.4},\"h2d_pinned_gbps\":{:.4},\"d2h_pinned_gbps\":{:.4}}}",
                    r.bytes, r.h2d_pageable, r.d2h_pageable, r.h2d_pinned, r.d2h_pinned
                )
            })
            .collect();
        let json = format!(
            "{{\"sync_rtt_us\":{{\"p50\":{:.3},\"p99\":{:.3},\"p999\":{:.3}}},\"raw_tcp_rtt_us\":{{\"p50\":{:.3},\"p99\":{:.3},\"p999\":{:.3}}},\"async_ops_per_s\":{:.1},\"raw_tcp_stream_gbps\":{:.4},\"copies\":[{}]}}\n",
            sync_rtt.p50, sync_rtt.p99, sync_rtt.p999, raw_rtt.p50, raw_rtt.p99, raw_rtt.p999, async_rate, raw_bw, copies.join(",")
        );
        std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(md)
}
