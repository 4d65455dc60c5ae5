//! Real verbs: a listener and a client in one process over an RDMA device (Soft-RoCE in the
//! test VM: `scripts/rdma-test.sh`). Needs `--features verbs` and `RDMA_TEST_ADDR` (or the
//! VM's `RXE_VM_ADDR`) naming an address of an RDMA-capable interface; skipped otherwise.
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![cfg(all(target_os = "linux", feature = "verbs"))]

use proto_core::wire::{MemcpyData, MemcpyDtoH, MemcpyHtoD, Ping};
use proto_core::{Bulk, Flags, Request, Response};
use std::time::{Duration, Instant};
use transport_core::{FrameSink, FrameSource, TransportError};
use transport_rdma::{connect, Fabric, RdmaConfig, RdmaListener, RdmaSink, RdmaSource};

fn test_addr() -> Option<String> {
    let addr = std::env::var("RDMA_TEST_ADDR").or_else(|_| std::env::var("RXE_VM_ADDR")).ok();
    if addr.is_none() {
        transport_core::test_skip::skip(
            "transport-rdma verbs tests: no RDMA device address here (RDMA_TEST_ADDR); they run in the Soft-RoCE VM check",
        );
    }
    addr
}

fn cfg() -> RdmaConfig {
    RdmaConfig { io_timeout: Some(Duration::from_secs(60)), one_sided: false, ..RdmaConfig::default() }
}

fn pair(ip: &str, client: RdmaConfig, server: RdmaConfig) -> ((RdmaSink, RdmaSource), (RdmaSink, RdmaSource)) {
    let listener = RdmaListener::bind(&format!("{ip}:0"), &server).unwrap();
    let port = listener.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        let incoming = listener.accept(Duration::from_secs(20)).unwrap().expect("a connection request");
        incoming.establish(&server, Duration::from_secs(20)).unwrap()
    });
    let c = connect(&format!("{ip}:{port}"), &client).unwrap();
    (c, t.join().unwrap())
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(13).wrapping_add(seed)).collect()
}

#[test]
fn frames_and_bulk_cross_real_queue_pairs() {
    let Some(ip) = test_addr() else { return };
    let started = Instant::now();
    let ((mut tx, mut rx_c), (mut tx_s, mut rx)) = pair(&ip, cfg(), cfg());
    eprintln!("connect+accept: {:?}", started.elapsed());
    let sizes = [0usize, 1, 65_535, 65_536, 1 << 20, (4 << 20) + 17, 9 << 20];
    let t = std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        for (i, &n) in sizes.iter().enumerate() {
            let data = pattern(n, i as u8);
            let f = Request::MemcpyHtoD(MemcpyHtoD { dst: i as u64, stream: 0, sync: true, data: Bulk(&data) })
                .encode_frame(&mut buf, Flags::empty(), i as u64)
                .unwrap();
            let t0 = Instant::now();
            tx.send(&buf[..f.head_len], f.bulk).unwrap();
            eprintln!("sent {n} bytes in {:?}", t0.elapsed());
        }
        // fire-and-forget frames coalesce
        for id in 100..200 {
            let f = Request::Ping(Ping { nonce: id, payload: b"p"[..].into() }).encode_frame(&mut buf, Flags::NO_REPLY, id).unwrap();
            tx.queue(&buf[..f.head_len], f.bulk).unwrap();
        }
        tx.flush().unwrap();
        tx
    });
    for (i, &n) in sizes.iter().enumerate() {
        let head = rx.recv_head().unwrap();
        assert_eq!(head.header.request_id, i as u64);
        let mut got = vec![0u8; head.header.bulk_len as usize];
        rx.recv_bulk(&mut got).unwrap();
        assert!(got == pattern(n, i as u8), "bulk of {n} bytes differs");
    }
    for id in 100..200 {
        assert_eq!(rx.recv_head().unwrap().header.request_id, id);
    }
    let tx = t.join().unwrap();
    let stats = tx.stats();
    eprintln!("client stats {stats:?}; server {:?}", rx.stats());
    assert!(stats.data_sends < 300, "the pings must have been coalesced: {stats:?}");
    // and back
    let data = pattern(3 << 20, 77);
    let mut buf = [0u8; 256];
    let f = Request::MemcpyHtoD(MemcpyHtoD { dst: 1, stream: 0, sync: true, data: Bulk(&data) }).encode_frame(&mut buf, Flags::empty(), 999).unwrap();
    tx_s.send(&buf[..f.head_len], f.bulk).unwrap();
    let head = rx_c.recv_head().unwrap();
    assert_eq!(head.header.request_id, 999);
    let mut got = vec![0u8; head.header.bulk_len as usize];
    rx_c.recv_bulk(&mut got).unwrap();
    assert!(got == data);
    // Clean close: the server sees Closed at the frame boundary.
    drop((tx, rx_c));
    let t0 = Instant::now();
    assert!(matches!(rx.recv_head(), Err(TransportError::Closed)));
    eprintln!("close seen after {:?}; total {:?}", t0.elapsed(), started.elapsed());
}

#[test]
fn keepalive_probe_and_disconnect_of_idle_peer() {
    let Some(ip) = test_addr() else { return };
    let quick = RdmaConfig { keepalive: Duration::from_secs(1), ..cfg() };
    let ((tx, rx_c), (_tx_s, mut rx)) = pair(&ip, cfg(), quick);
    let closer = rx.closer();
    let t = std::thread::spawn(move || {
        let r = rx.recv_head().map(|h| h.header.request_id);
        (r, rx.stats())
    });
    std::thread::sleep(Duration::from_millis(2500));
    // the idle server probed its peer (zero-length RDMA WRITE) and the probe succeeded
    drop((tx, rx_c));
    let (r, stats) = t.join().unwrap();
    assert!(matches!(r, Err(TransportError::Closed)), "{r:?}");
    assert!(stats.probes >= 1, "{stats:?}");
    drop(closer);
}

#[test]
fn connection_refused_without_listener() {
    let Some(ip) = test_addr() else { return };
    let t0 = Instant::now();
    let err = connect(&format!("{ip}:1"), &RdmaConfig { connect_timeout: Duration::from_secs(10), ..cfg() }).err().expect("no listener on port 1");
    eprintln!("refused after {:?}: {err}", t0.elapsed());
}

fn one_sided_cfg() -> RdmaConfig {
    RdmaConfig { one_sided: true, one_sided_min: 64 << 10, ..cfg() }
}

fn send_htod(tx: &mut RdmaSink, id: u64, data: &[u8]) {
    let mut buf = [0u8; 256];
    let f = Request::MemcpyHtoD(MemcpyHtoD { dst: id, stream: 0, sync: true, data: Bulk(data) }).encode_frame(&mut buf, Flags::empty(), id).unwrap();
    tx.send(&buf[..f.head_len], f.bulk).unwrap();
}

#[test]
fn one_sided_bulk_over_rdma_read_both_directions() {
    let Some(ip) = test_addr() else { return };
    let ((mut tx, mut rx_c), (mut tx_s, mut rx)) = pair(&ip, one_sided_cfg(), one_sided_cfg());
    // (size, 0 = read whole, 1 = two pieces, 2 = skipped)
    let plan = [(1usize << 20, 0u8), ((9 << 20) + 5, 1), (20_000, 0), (300_000, 2), (65_536, 0)];
    let t = std::thread::spawn(move || {
        for (i, &(n, _)) in plan.iter().enumerate() {
            let data = pattern(n, i as u8);
            let t0 = Instant::now();
            send_htod(&mut tx, i as u64, &data);
            eprintln!("one-sided: sent {n} bytes in {:?}", t0.elapsed());
        }
        tx
    });
    for (i, &(n, how)) in plan.iter().enumerate() {
        let head = rx.recv_head().unwrap();
        assert_eq!((head.header.request_id, head.header.bulk_len as usize), (i as u64, n));
        let mut got = vec![0u8; n];
        match how {
            0 => rx.recv_bulk(&mut got).unwrap(),
            1 => {
                let (a, b) = got.split_at_mut(12345);
                rx.recv_bulk(a).unwrap();
                rx.recv_bulk(b).unwrap();
            }
            _ => continue,
        }
        assert!(got == pattern(n, i as u8), "one-sided bulk of {n} bytes differs");
    }
    let tx = t.join().unwrap();
    let (s, r) = (tx.stats(), rx.stats());
    eprintln!("one-sided client {s:?}; server {r:?}");
    assert_eq!((s.remote_sent, r.remote_received), (4, 4), "{s:?} {r:?}");
    assert_eq!(r.bytes_read, (1 << 20) + (9 << 20) + 5 + 65_536);
    // and back: the server's reply is read by the client
    let data = pattern(5 << 20, 9);
    let t = std::thread::spawn(move || {
        send_htod(&mut tx_s, 42, &data);
        tx_s
    });
    let head = rx_c.recv_head().unwrap();
    let mut got = vec![0u8; head.header.bulk_len as usize];
    rx_c.recv_bulk(&mut got).unwrap();
    assert!(got == pattern(5 << 20, 9));
    let tx_s = t.join().unwrap();
    assert_eq!(tx_s.stats().remote_sent, 1);
    drop((tx, rx_c, tx_s, rx));
}

#[test]
fn replies_written_into_landings_and_pinned_memory_registered_once() {
    let Some(ip) = test_addr() else { return };
    let ((mut ctx, mut crx), (mut wtx, mut wrx)) = pair(&ip, one_sided_cfg(), one_sided_cfg());
    // D2H: the client offers its buffer, the worker RDMA-WRITEs the reply into it.
    let sizes = [(3usize << 20) + 7, 100_000];
    let mut landings: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0u8; n]).collect();
    let mut buf = [0u8; 256];
    for (i, &n) in sizes.iter().enumerate() {
        let id = 100 + i as u64;
        // SAFETY: `landings[i]` outlives the reply and is untouched until it arrives.
        unsafe { ctx.offer_landing(id, landings[i].as_mut_ptr(), n).unwrap() };
        let f = Request::MemcpyDtoH(MemcpyDtoH { src: 0, len: n as u64, stream: 0 }).encode_frame(&mut buf, Flags::empty(), id).unwrap();
        ctx.queue(&buf[..f.head_len], &[]).unwrap();
    }
    ctx.flush().unwrap();
    let worker = std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        for (i, &n) in sizes.iter().enumerate() {
            let head = wrx.recv_head().unwrap();
            let id = head.header.request_id;
            let data = pattern(n, i as u8);
            let f = Response::MemcpyDtoH(MemcpyData { data: Bulk(&data) }).encode_frame(&mut buf, id, 0).unwrap();
            wtx.send(&buf[..f.head_len], f.bulk).unwrap();
        }
        (wtx, wrx)
    });
    for (i, &n) in sizes.iter().enumerate() {
        let head = crx.recv_head().unwrap();
        assert_eq!(head.header.bulk_len as usize, n);
        crx.recv_bulk(&mut landings[i]).unwrap();
        assert!(landings[i] == pattern(n, i as u8), "reply {i} differs");
    }
    let (wtx, mut wrx) = worker.join().unwrap();
    let w = wtx.stats();
    eprintln!("landings: worker {w:?}");
    assert_eq!(w.remote_written, 2, "both replies RDMA-WRITten (100 KB too: the 64 KiB threshold here)");
    assert_eq!(crx.stats().landed, 2);
    // H2D from remembered (pinned) memory into a remembered destination: one registration
    // per side for all pieces.
    let src = pattern(1 << 20, 7);
    let mut dst = vec![0u8; 1 << 20];
    ctx.memory_registry().unwrap().remember(src.as_ptr() as usize, src.len());
    wtx.memory_registry().unwrap().remember(dst.as_mut_ptr() as usize, dst.len());
    let pieces = 4;
    let piece = src.len() / pieces;
    std::thread::scope(|s| {
        s.spawn(|| {
            for k in 0..pieces {
                send_htod(&mut ctx, k as u64, &src[k * piece..(k + 1) * piece]);
            }
        });
        for k in 0..pieces {
            let _ = wrx.recv_head().unwrap();
            wrx.recv_bulk(&mut dst[k * piece..(k + 1) * piece]).unwrap();
        }
    });
    assert!(dst == src);
    let (c, w) = (ctx.stats(), wrx.stats());
    eprintln!("cache: client {:?}; worker {:?}", c.cache, w.cache);
    assert_eq!((c.cache.registrations, c.cache.hits), (1, 3));
    assert_eq!((w.cache.registrations, w.cache.hits), (1, 3));
    drop((ctx, crx, wtx, wrx));
}

/// GPUDirect's fallback on a real device: Soft-RoCE has no dma-buf memory regions, so
/// `ibv_reg_dmabuf_mr` fails; the transfer must still complete through staging, and the
/// registration is not retried.
#[test]
fn gpu_direct_refused_by_the_device_falls_back_to_staging() {
    let Some(ip) = test_addr() else { return };
    let ((mut ctx, _crx), (wtx, mut wrx)) = pair(&ip, one_sided_cfg(), one_sided_cfg());
    let dev = vec![0u8; 1 << 20];
    wtx.memory_registry().unwrap().remember_device(
        dev.as_ptr() as u64,
        dev.len() as u64,
        Box::new(|| Ok((std::fs::File::open("/dev/null")?.into(), 0))),
    );
    let data = pattern(512 << 10, 4);
    for round in 0..2u64 {
        std::thread::scope(|s| {
            s.spawn(|| send_htod(&mut ctx, round, &data));
            let head = wrx.recv_head().unwrap();
            let n = head.header.bulk_len as usize;
            assert!(!wrx.recv_bulk_to_device(dev.as_ptr() as u64, n).unwrap(), "rxe cannot register a dma-buf");
            let mut staging = vec![0u8; n];
            wrx.recv_bulk(&mut staging).unwrap();
            assert!(staging == data);
        });
    }
    let w = wrx.stats();
    eprintln!("gpu-direct fallback: {w:?}");
    assert_eq!((w.cache.failures, w.device_direct), (1, 0), "one failed registration, never retried");
    assert_eq!(w.remote_received, 2, "the bulk still went one-sided, into staging");
}

#[test]
fn one_sided_falls_back_to_two_sided_when_the_peer_has_it_off() {
    let Some(ip) = test_addr() else { return };
    let ((mut tx, _rx_c), (_tx_s, mut rx)) = pair(&ip, one_sided_cfg(), cfg());
    let data = pattern(2 << 20, 1);
    let t = std::thread::spawn(move || {
        send_htod(&mut tx, 1, &data);
        tx
    });
    let head = rx.recv_head().unwrap();
    let mut got = vec![0u8; head.header.bulk_len as usize];
    rx.recv_bulk(&mut got).unwrap();
    assert!(got == pattern(2 << 20, 1));
    let tx = t.join().unwrap();
    assert_eq!((tx.stats().remote_sent, tx.stats().remote_fallbacks), (0, 1));
}

/// The one-sided threshold: registering (ibv_reg_mr + ibv_dereg_mr of a fresh, touched
/// buffer) against copying the same bytes once. Prints a table; asserts nothing about speed.
#[test]
fn registration_cost_against_copy() {
    let Some(ip) = test_addr() else { return };
    let ((tx, _rx_c), (_tx_s, _rx)) = pair(&ip, cfg(), cfg());
    eprintln!("reg-cost: size, reg+dereg us (median of 5), memcpy us (median of 5), ratio");
    for shift in [12u32, 14, 16, 17, 18, 19, 20, 21, 22, 23, 24] {
        let n = 1usize << shift;
        let mut src = pattern(n, 3);
        let mut dst = vec![0u8; n];
        let mut reg = Vec::new();
        let mut cpy = Vec::new();
        for _ in 0..5 {
            let t0 = Instant::now();
            // SAFETY: `src` outlives the region, dropped at once.
            let r = unsafe { tx.fabric().register(src.as_mut_ptr(), n, transport_rdma::fabric::Access::PEER_READS) }.unwrap();
            drop(r);
            reg.push(t0.elapsed().as_secs_f64() * 1e6);
            let t0 = Instant::now();
            dst.copy_from_slice(&src);
            std::hint::black_box(&dst);
            cpy.push(t0.elapsed().as_secs_f64() * 1e6);
        }
        reg.sort_by(f64::total_cmp);
        cpy.sort_by(f64::total_cmp);
        eprintln!("reg-cost: {n:>9} {:>10.1} {:>10.1} {:>6.2}", reg[2], cpy[2], reg[2] / cpy[2]);
    }
}
