//! A hostile RDMA peer against the worker's side of the RDMA engine, over the in-memory
//! fabric (`transport_rdma::mem`): the peer posts SENDs with any immediate data and payload
//! (data segments, credit grants it never had, remote-bulk and landing descriptors pointing
//! into memory it exposed, with right or wrong keys, or anywhere), re-posts its receives or
//! not, and ends with a FIN. The worker's source reads frames and bulk as the session's
//! driver does. Asserts: no panic, no overrun (the fabric checks every access against its
//! registrations), and the source ends — closed, with a clear error, or timed out — instead
//! of hanging (libFuzzer's `-timeout`). Seeds: none needed; the actions are structured.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use proto_core::wire::{MemcpyHtoD, Ping};
use proto_core::{Bulk, Flags, FrameHeader, Request, HEADER_LEN};
use std::time::Duration;
use transport_core::FrameSource;
use transport_rdma::config::RdmaConfig;
use transport_rdma::credit::Grant;
use transport_rdma::engine::{split, Role};
use transport_rdma::mem::MemFabric;
use transport_rdma::wire::{Imm, LandingDesc, RemoteDesc, RemoteHow, SegKind};

/// Bytes the peer exposes for the worker's RDMA READs and WRITEs.
const EXPOSED: usize = 64 << 10;
/// Actions per input at most (each is a SEND or a re-post).
const MAX_ACTIONS: usize = 64;

/// Every segment kind, for `Action::Seg` to pick from by index.
const KINDS: [SegKind; 6] = [SegKind::Data, SegKind::Update, SegKind::Fin, SegKind::Remote, SegKind::Done, SegKind::Landing];

/// Where a descriptor points: inside the exposed memory (offset, with the right key or a
/// wrong one) or at an arbitrary address.
#[derive(Arbitrary, Debug)]
enum Target {
    Exposed { offset: u16, good_key: bool },
    Anywhere { addr: u64, rkey: u32 },
}

#[derive(Arbitrary, Debug)]
enum Action {
    /// Any immediate data, any payload.
    Raw {
        imm: u32,
        payload: Vec<u8>,
    },
    /// A well-formed immediate of kind `KINDS[kind % 6]` with the given grant, any payload.
    Seg {
        kind: u8,
        data: u16,
        ctrl: u8,
        payload: Vec<u8>,
    },
    /// A valid request frame (header + control part) as a data segment, bulk announced but
    /// sent (or not) by later actions.
    Ping {
        id: u64,
        data: u16,
    },
    HtoD {
        id: u64,
        bulk_len: u32,
        data: u16,
    },
    /// A remote bulk descriptor (one-sided) for the stream's current bulk section.
    Remote {
        target: Target,
        len: u32,
        written: bool,
        data: u16,
    },
    /// A landing for the reply to `request_id`.
    Landing {
        target: Target,
        len: u32,
        request_id: u64,
    },
    /// The peer re-posts the receives the worker's SENDs used.
    Recycle,
}

#[derive(Arbitrary, Debug)]
struct Input {
    one_sided: bool,
    /// Whether the worker skips bulk sections instead of reading them.
    skip_bulk: bool,
    actions: Vec<Action>,
}

fn grant(data: u16, ctrl: u8) -> Grant {
    Grant { data: data & 0xfff, ctrl: u16::from(ctrl & 0xf) }
}

fn imm(kind: SegKind, g: Grant) -> u32 {
    Imm { kind, grant: g }.encode()
}

fn frame(req: &Request<'_>, id: u64) -> Vec<u8> {
    let mut buf = vec![0u8; 4096];
    match req.encode_frame(&mut buf, Flags::empty(), id) {
        Ok(f) => {
            let n = f.head_len;
            buf.truncate(n);
            buf
        }
        Err(_) => Vec::new(),
    }
}

fuzz_target!(init: hip_remote_fuzz::keep_freed_memory(), |input: Input| {
    let config = RdmaConfig {
        slot_len: 4096,
        recv_depth: 8,
        send_depth: 4,
        io_timeout: Some(Duration::from_millis(200)),
        spin: Duration::ZERO,
        one_sided: input.one_sided,
        landings: input.one_sided,
        ..RdmaConfig::default()
    };
    let (peer, worker) = MemFabric::pair(&config, &config);
    let (_sink, mut source) = split(worker, &config, Role::Worker);
    let (base, key) = peer.expose(EXPOSED);
    let place = |t: &Target| match *t {
        Target::Exposed { offset, good_key } => (base + u64::from(offset), if good_key { key } else { key ^ 0x5a5a }),
        Target::Anywhere { addr, rkey } => (addr, rkey),
    };

    for action in input.actions.iter().take(MAX_ACTIONS) {
        let posted = match action {
            Action::Raw { imm, payload } => peer.post_raw(*imm, payload),
            Action::Seg { kind, data, ctrl, payload } => peer.post_raw(imm(KINDS[usize::from(*kind) % KINDS.len()], grant(*data, *ctrl)), payload),
            Action::Ping { id, data } => {
                let f = frame(&Request::Ping(Ping { nonce: *id, payload: b"x"[..].into() }), *id);
                peer.post_raw(imm(SegKind::Data, grant(*data, 0)), &f)
            }
            Action::HtoD { id, bulk_len, data } => {
                // The header announces `bulk_len` bulk bytes (any size the header takes);
                // only the head is sent here.
                let req = Request::MemcpyHtoD(MemcpyHtoD { dst: 0x1000, stream: 0, sync: true, data: Bulk(&[0u8; 1]) });
                let mut f = frame(&req, *id);
                if let Ok(mut header) = FrameHeader::parse(&f[..HEADER_LEN.min(f.len())]) {
                    header.bulk_len = *bulk_len;
                    f[..HEADER_LEN].copy_from_slice(&header.emit());
                }
                peer.post_raw(imm(SegKind::Data, grant(*data, 0)), &f)
            }
            Action::Remote { target, len, written, data } => {
                let (addr, rkey) = place(target);
                let how = if *written { RemoteHow::Written } else { RemoteHow::Read };
                let desc = RemoteDesc { addr, len: u64::from(*len), rkey, how };
                peer.post_raw(imm(SegKind::Remote, grant(*data, 0)), &desc.emit())
            }
            Action::Landing { target, len, request_id } => {
                let (addr, rkey) = place(target);
                let desc = LandingDesc { addr, len: u64::from(*len), rkey, request_id: *request_id };
                peer.post_raw(imm(SegKind::Landing, Grant::default()), &desc.emit())
            }
            Action::Recycle => {
                peer.recycle_receives();
                Ok(())
            }
        };
        if posted.is_err() {
            break;
        }
    }
    let _ = peer.post_raw(imm(SegKind::Fin, Grant::default()), &[]);

    // The worker's driver: frames until the connection ends, bulk read in chunks or skipped.
    let mut chunk = vec![0u8; 16 << 10];
    'frames: for _ in 0..1024 {
        if source.recv_head().is_err() {
            break;
        }
        while source.bulk_remaining() > 0 {
            let step = if input.skip_bulk {
                source.skip_bulk()
            } else {
                let n = source.bulk_remaining().min(chunk.len());
                source.recv_bulk(&mut chunk[..n])
            };
            if step.is_err() {
                break 'frames;
            }
        }
    }
});
