//! proto-core never touches the heap: encoding and decoding the heaviest messages, a thousand
//! times over, performs zero allocations.
//!
//! A counting `#[global_allocator]` counts only on threads that opted in, so the test harness
//! (its other threads, output capture) cannot disturb the measurement; everything the
//! measured window needs is prepared before it, and assertions run after it.

use proto_core::field::{Bytes, DecodeCx, FixedStr, Str, StrList};
use proto_core::wire::*;
use proto_core::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;

struct Counting;

thread_local! {
    // `const` initialisation and no destructor: using them never allocates. Both are
    // per thread, so tests measuring in parallel do not see each other's allocations.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    if MEASURING.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: every call is forwarded unchanged to `System`; counting has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note();
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations (and frees) made on this thread by `f`, run `ITERATIONS` times.
fn allocations_in(mut f: impl FnMut()) -> usize {
    const ITERATIONS: usize = 1000;
    f(); // warm-up outside the window (lazy statics, if any, would show here, not below)
    let before = ALLOCATIONS.with(Cell::get);
    MEASURING.with(|m| m.set(true));
    for _ in 0..ITERATIONS {
        f();
    }
    MEASURING.with(|m| m.set(false));
    ALLOCATIONS.with(Cell::get) - before
}

/// Encodes `req` into a stack buffer, deframes the bytes, parses them back, and checks the
/// result without formatting anything. Returns whether it matched (checked outside).
fn request_cycle(req: &Request<'_>, flags: Flags, buf: &mut [u8], wire: &mut [u8]) -> bool {
    let Ok(enc) = req.encode_frame(buf, flags, 42) else { return false };
    let (head, bulk) = (&buf[..enc.head_len], enc.bulk);
    let total = head.len() + bulk.len();
    wire[..head.len()].copy_from_slice(head);
    wire[head.len()..total].copy_from_slice(bulk);
    let Ok(Deframed::Frame { consumed, frame }) = FrameDecoder::decode(&wire[..total]) else { return false };
    let Ok(parsed) = Request::parse(frame.header.opcode, frame.control, frame.bulk) else { return false };
    consumed == total && frame.header.request_id == 42 && black_box(&parsed) == req
}

fn response_cycle(resp: &Response<'_>, buf: &mut [u8]) -> bool {
    let Ok(enc) = resp.encode_frame(buf, 7, 0) else { return false };
    let Ok(frame) = parse_frame(&buf[..enc.head_len]) else { return false };
    let Ok(parsed) = Response::parse(frame.header.opcode, frame.control, frame.bulk) else { return false };
    black_box(&parsed) == resp
}

#[test]
fn launch_kernel_with_16_args() {
    let mut args = [0u8; 16 * 8];
    for (i, chunk) in args.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&(0x1000_0000_0000 + i as u64 * 0x100).to_le_bytes());
    }
    let req = Request::LaunchKernel(LaunchKernel {
        function: 0xf00d,
        grid: [1024, 1, 1],
        block: [256, 1, 1],
        shared_mem: 0,
        stream: 3,
        args: Bytes(&args),
    });
    let (mut buf, mut wire) = ([0u8; 512], [0u8; 512]);
    let mut ok = true;
    let n = allocations_in(|| ok &= request_cycle(black_box(&req), Flags::NO_REPLY, &mut buf, &mut wire));
    assert!(ok, "round trip failed");
    assert_eq!(n, 0, "LaunchKernel allocated");

    // The parameter layout that made those 16 args: FunctionInfo with 16 ParamDescs.
    let mut descs = [0u8; 16 * 8];
    for (i, d) in descs.chunks_mut(8).enumerate() {
        d[..4].copy_from_slice(&(i as u32 * 8).to_le_bytes());
        d[4..].copy_from_slice(&8u32.to_le_bytes());
    }
    let mut control = [0u8; 8 + 4 + 16 * 8];
    control[8..12].copy_from_slice(&16u32.to_le_bytes());
    control[12..].copy_from_slice(&descs);
    let resp = Response::parse(Opcode::ModuleGetFunction.raw(), &control, &[]).unwrap();
    let mut ok = true;
    let n = allocations_in(|| ok &= response_cycle(black_box(&resp), &mut buf));
    assert!(ok);
    assert_eq!(n, 0, "FunctionInfo allocated");
}

#[test]
fn memcpy_htod_with_bulk() {
    let data = [0x5au8; 4096];
    let req = Request::MemcpyHtoD(MemcpyHtoD { dst: 0x7f00_0000_0000, stream: 0, sync: true, data: Bulk(&data) });
    let mut buf = [0u8; 128];
    let mut wire = vec![0u8; 8192]; // allocated before the window
    let mut ok = true;
    let n = allocations_in(|| ok &= request_cycle(black_box(&req), Flags::empty(), &mut buf, &mut wire));
    assert!(ok);
    assert_eq!(n, 0, "MemcpyHtoD allocated");
}

#[test]
fn device_properties_response() {
    let props = DeviceProperties {
        name: FixedStr::truncated("hip-remote host device with a rather long marketing name"),
        arch_name: FixedStr::truncated("gfx90a:sramecc+:xnack-"),
        uuid: [7; 16],
        total_global_mem: 64 << 30,
        max_threads_dim: [1024, 1024, 64],
        max_grid_size: [i32::MAX as u32, 65535, 65535],
        warp_size: 64,
        concurrent_kernels: true,
        ..Default::default()
    };
    let resp = Response::GetDeviceProperties(props);
    let mut buf = [0u8; 1024];
    let mut ok = true;
    let n = allocations_in(|| ok &= response_cycle(black_box(&resp), &mut buf));
    assert!(ok);
    assert_eq!(n, 0, "DeviceProperties allocated");
}

#[test]
fn rtc_compile_request() {
    let req = Request::RtcCompile(RtcCompile {
            device: 0,
        name: Str("saxpy.hip"),
        source: Str("#include \"common.h\"\nextern \"C\" __global__ void saxpy(float a, float* x, float* y) {\n  int i = threadIdx.x;\n  y[i] = a * x[i] + y[i];\n}\n"),
        header_names: StrList::from_packed("common.h\0").unwrap(),
        header_sources: StrList::from_packed("#pragma once\n\0").unwrap(),
        options: StrList::from_packed("-O3\0--offload-arch=gfx90a\0-DN=256\0").unwrap(),
        name_expressions: StrList::from_packed("saxpy\0").unwrap(),
    });
    let (mut buf, mut wire) = ([0u8; 1024], [0u8; 1024]);
    let mut ok = true;
    let n = allocations_in(|| ok &= request_cycle(black_box(&req), Flags::empty(), &mut buf, &mut wire));
    assert!(ok);
    assert_eq!(n, 0, "RtcCompile allocated");
}

/// The counter works: a window that allocates is seen (so the zeros above mean something).
#[test]
fn counter_sees_allocations() {
    let n = allocations_in(|| {
        black_box(vec![1u8; 16]);
    });
    assert_eq!(n, 2000, "1000 allocations and 1000 frees");
    // Decoding straight from a DecodeCx is covered too.
    let n = allocations_in(|| {
        let mut cx = DecodeCx::new(black_box(&[1, 0, 0, 0]), &[]);
        black_box(<u32 as WireField>::decode(&mut cx, "x").ok());
    });
    assert_eq!(n, 0);
}
