//! Per-chunk CPU costs of the RDMA transport's code path, measured outside any VM:
//!
//! 1. the sans-IO state machines alone (batcher, credits, immediate data, reassembly) per
//!    SEND — what the engine adds on top of verbs calls and copies;
//! 2. one memcpy of a slot (the copy into a send slot, and the copy out of a receive slot);
//! 3. the whole engine over the in-memory fabric (two threads, 4 MiB frames): per SEND this
//!    includes the state machines, locking, condvar wake-ups and three slot copies (into the
//!    send slot, the fake NIC's copy, out of the receive slot; real hardware does the middle
//!    one by DMA).
//!
//! `cargo run --release -p transport-rdma --example chunk_cost`; feeds `docs/RDMA.md`.

use std::hint::black_box;
use std::time::Instant;
use transport_core::{FrameSink, FrameSource};
use transport_rdma::config::RdmaConfig;
use transport_rdma::credit::{Credits, SendPurpose};
use transport_rdma::engine::{split, Role};
use transport_rdma::mem::MemFabric;
use transport_rdma::rx::{Reassembly, Segment};
use transport_rdma::tx::{Batcher, SendSlots};
use transport_rdma::wire::{Imm, SegKind};

fn state_machine_ns(slot_len: usize, n: u64) -> f64 {
    let mut tx = Credits::new(64, 64);
    let mut rx = Credits::new(64, 64);
    let mut slots = SendSlots::new(32);
    let mut b = Batcher::new(slot_len);
    let mut r = Reassembly::new();
    let t = Instant::now();
    for i in 0..n {
        // sender: open a slot, fill it (one commit), post it
        if b.room(slot_len).is_none() {
            b.open(slots.take().unwrap());
        }
        let room = b.room(slot_len).unwrap();
        let ready = b.commit(room.len).unwrap();
        assert!(tx.may_send(SendPurpose::Data));
        let imm = Imm { kind: SegKind::Data, grant: tx.on_send(SendPurpose::Data) }.encode();
        // receiver: completion, reassembly, consumption, re-post, credit return
        let got = Imm::decode(black_box(imm), ready.len as u32).unwrap();
        rx.on_grant(got.grant).unwrap();
        r.push(Segment { slot: (i % 72) as u32, len: ready.len as u32 }).unwrap();
        let piece = r.peek(usize::MAX).unwrap();
        let done = r.consume(piece.len);
        black_box(done);
        rx.on_repost_data();
        if rx.wants_update() {
            let g = rx.on_send(SendPurpose::Update);
            tx.on_grant(g).unwrap();
            tx.on_repost_ctrl(); // the update's slot, returned with the next data SEND
        }
        slots.put(ready.slot); // send completion
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

fn memcpy_gbps(len: usize) -> f64 {
    let src = vec![1u8; len];
    let mut dst = vec![0u8; len];
    let reps = (1usize << 31) / len;
    let t = Instant::now();
    for _ in 0..reps {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    }
    (len * reps) as f64 / t.elapsed().as_secs_f64() / 1e9
}

fn engine(slot_len: usize, total: usize) -> (f64, f64) {
    let cfg = RdmaConfig { slot_len, recv_depth: 64, send_depth: 32, one_sided: false, ..RdmaConfig::default() };
    let (fa, fb) = MemFabric::pair(&cfg, &cfg);
    let (mut tx, _rxa) = split(fa, &cfg, Role::Client);
    let (_txb, mut rx) = split(fb, &cfg, Role::Worker);
    let frame = 4 << 20;
    let data = vec![7u8; frame];
    let frames = total / frame;
    let t = Instant::now();
    let recv = std::thread::spawn(move || {
        let mut dst = vec![0u8; frame];
        for _ in 0..frames {
            let h = rx.recv_head().unwrap();
            assert_eq!(h.header.bulk_len as usize, frame);
            rx.recv_bulk(&mut dst).unwrap();
        }
        rx
    });
    let mut buf = [0u8; 128];
    for i in 0..frames {
        let f = proto_core::Request::MemcpyHtoD(proto_core::wire::MemcpyHtoD { dst: 0, stream: 0, sync: true, data: proto_core::Bulk(&data) })
            .encode_frame(&mut buf, proto_core::Flags::empty(), i as u64)
            .unwrap();
        tx.send(&buf[..f.head_len], f.bulk).unwrap();
    }
    recv.join().unwrap();
    let secs = t.elapsed().as_secs_f64();
    let sends = tx.stats().data_sends as f64;
    (secs * 1e9 / sends, (frames * frame) as f64 / secs / 1e9)
}

fn main() {
    for slot in [64 << 10, 256 << 10] {
        let ns = state_machine_ns(slot, 5_000_000);
        println!("state machines per SEND (slot {} KiB): {ns:.1} ns", slot >> 10);
    }
    for len in [64 << 10, 256 << 10, 4 << 20] {
        println!("memcpy of {:>5} KiB blocks: {:.1} GB/s", len >> 10, memcpy_gbps(len));
    }
    for slot in [64 << 10, 256 << 10] {
        let (ns, gbps) = engine(slot, 2 << 30);
        println!("engine over MemFabric, slot {} KiB: {ns:.0} ns per SEND, {gbps:.2} GB/s (3 copies per byte)", slot >> 10);
    }
}
