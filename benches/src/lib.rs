//! Benchmark helpers: the messages the benches encode and decode, built once so every bench
//! (and anyone reproducing a figure) uses the same bytes.
//!
//! - `benches/codec.rs`: criterion benches of the proto-core codec (frame encode + decode).
//! - `benches/rdma_wait.rs`, `benches/tcp_wait.rs`: a small-frame round trip through each
//!   transport, readers sleeping at once or spinning first.
//! - `benches/tls_cost.rs`: plain TCP against TLS, a small round trip and a 256 MiB copy.
//! - `tests/fuzz_seeds.rs`: generates and checks the fuzz seed corpus in `fuzz/corpus/`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use proto_core::field::{Bulk, Bytes};
use proto_core::wire::{LaunchKernel, MemcpyDtoH, MemcpyHtoD, Ping};
use proto_core::{Flags, Request};

/// The encoded head of a one-byte `Ping` with request id `id`: the small frame the wait
/// benches (`rdma_wait`, `tcp_wait`) send and echo.
pub fn ping_frame(id: u64) -> Vec<u8> {
    let mut buf = [0u8; 128];
    let len = Request::Ping(Ping { nonce: id, payload: b"x"[..].into() }).encode_frame(&mut buf, Flags::empty(), id).expect("encodes").head_len;
    buf[..len].to_vec()
}

/// Sizes of the 16 parameters of the benchmarked kernel: pointers, scalars of every width and
/// one 16-byte struct, in an order that forces alignment padding.
pub const LAUNCH_PARAM_SIZES: [usize; 16] = [8, 8, 8, 4, 4, 2, 1, 8, 16, 4, 8, 1, 2, 4, 8, 8];

/// Packs 16 parameters of [`LAUNCH_PARAM_SIZES`] the way the client packs `kernelParams`:
/// each at an offset aligned to its size (capped at 8), filled with a recognisable pattern.
pub fn launch_args_16() -> Vec<u8> {
    let mut blob = Vec::new();
    for (i, &size) in LAUNCH_PARAM_SIZES.iter().enumerate() {
        let align = size.min(8);
        blob.resize(blob.len().next_multiple_of(align), 0);
        blob.extend((0..size).map(|b| (i * 16 + b) as u8));
    }
    blob
}

/// A `LaunchKernel` request with a 3-D grid and the packed `args`.
pub fn launch_request(args: &[u8]) -> Request<'_> {
    Request::LaunchKernel(LaunchKernel {
        function: 0x0000_7f00_dead_0001,
        grid: [1024, 64, 4],
        block: [256, 1, 1],
        shared_mem: 4096,
        stream: 0x0000_7f00_beef_0002,
        args: Bytes(args),
    })
}

/// A synchronous host-to-device copy of `data` (sent as the frame's bulk section).
pub fn memcpy_htod_request(data: &[u8]) -> Request<'_> {
    Request::MemcpyHtoD(MemcpyHtoD { dst: 0x0000_7f10_0000_0000, stream: 0, sync: true, data: Bulk(data) })
}

/// A device-to-host copy request of `len` bytes.
pub fn memcpy_dtoh_request(len: u64) -> Request<'static> {
    Request::MemcpyDtoH(MemcpyDtoH { src: 0x0000_7f10_0000_0000, len, stream: 0x0000_7f00_beef_0002 })
}
