//! Protocol codec: one frame's encode (header + control part into the sender's buffer; the
//! bulk section is never copied) followed by the receiver's decode (`FrameDecoder::decode`,
//! then `Request::parse`), per iteration. Figures and verdict: `docs/BENCHMARKS.md`.
//!
//! `cargo bench -p hip-remote-benches --bench codec -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use hip_remote_benches::{launch_args_16, launch_request, memcpy_dtoh_request, memcpy_htod_request};
use proto_core::{Deframed, Flags, FrameDecoder, Request};

/// Decodes the one frame at the start of `wire` and parses its request.
fn decode_request(wire: &[u8]) -> Request<'_> {
    match FrameDecoder::decode(wire) {
        Ok(Deframed::Frame { frame, .. }) => Request::parse(frame.header.opcode, frame.control, frame.bulk).expect("request parses"),
        other => panic!("not a whole frame: {other:?}"),
    }
}

fn launch_kernel(c: &mut Criterion) {
    let args = launch_args_16();
    let req = launch_request(&args);
    let mut g = c.benchmark_group("launch_kernel_16_args");
    g.throughput(Throughput::Elements(1));

    let mut buf = [0u8; 512];
    g.bench_function("round_trip", |b| {
        b.iter(|| {
            let req = black_box(&req);
            let enc = req.encode_frame(&mut buf, Flags::empty(), black_box(42)).expect("encodes");
            let back = decode_request(black_box(&buf[..enc.head_len]));
            black_box(back);
        })
    });

    g.bench_function("encode", |b| {
        b.iter(|| {
            let enc = black_box(&req).encode_frame(&mut buf, Flags::empty(), black_box(42)).expect("encodes");
            black_box(enc.head_len);
        })
    });

    let enc = req.encode_frame(&mut buf, Flags::empty(), 42).expect("encodes");
    let wire = buf[..enc.head_len].to_vec();
    g.bench_function("decode", |b| b.iter(|| black_box(decode_request(black_box(&wire)))));
    g.finish();
}

fn memcpy(c: &mut Criterion) {
    let mut g = c.benchmark_group("memcpy");
    g.throughput(Throughput::Elements(1));

    // HtoD: the sender encodes header + control part only; the 4 KiB bulk follows on the wire
    // (vectored send / RDMA). The receive buffer models what the transport delivered: the
    // bulk is placed behind the head once, outside the loop, and each iteration encodes the
    // head in front of it and decodes the whole frame without copying the bulk.
    let data: Vec<u8> = (0..4096u32).map(|i| i as u8).collect();
    let req = memcpy_htod_request(&data);
    let mut rx = vec![0u8; 4096 + 64];
    let head_len = req.encode_frame(&mut rx, Flags::empty(), 1).expect("encodes").head_len;
    rx.truncate(head_len + data.len());
    rx[head_len..].copy_from_slice(&data);
    g.bench_function("htod_4k/round_trip", |b| {
        b.iter(|| {
            let enc = black_box(&req).encode_frame(&mut rx, Flags::empty(), black_box(1)).expect("encodes");
            debug_assert_eq!(enc.wire_len(), rx.len());
            let back = decode_request(black_box(&rx));
            black_box(back);
        })
    });

    let req = memcpy_dtoh_request(4096);
    let mut buf = [0u8; 128];
    g.bench_function("dtoh/round_trip", |b| {
        b.iter(|| {
            let enc = black_box(&req).encode_frame(&mut buf, Flags::empty(), black_box(2)).expect("encodes");
            let back = decode_request(black_box(&buf[..enc.head_len]));
            black_box(back);
        })
    });
    g.finish();
}

criterion_group!(benches, launch_kernel, memcpy);
criterion_main!(benches);
