//! No session is handed memory that still holds another session's bytes: one tenant fills
//! every kind of allocation with a pattern and frees it, the next allocates the same sizes
//! over and over and must read zeros (what a fresh `hipMalloc` holds on the host backend).

use super::*;
use crate::backend::{DevicePtr, HostBackend, HostConfig, MemoryBackend};
use proto_core::opcode::{ManagedHandler, MemoryHandler, VmmHandler};
use proto_core::wire;

const PATTERN: u8 = 0xa7;
/// Sizes of every path: sub-page, one page, odd, a huge page (the VMM granularity).
const SIZES: [u64; 4] = [256, 4096, 65_536 + 17, 2 << 20];
const ROUNDS: usize = 6;

fn cx() -> CallCx {
    CallCx::new(1, proto_core::Opcode::Ping, false, 0)
}

/// How a tenant allocates: the allocation and how to give it back.
#[derive(Clone, Copy, Debug)]
enum Path {
    Malloc,
    Pool,
    Managed,
    Vmm,
}

struct Held {
    ptr: u64,
    size: u64,
    path: Path,
    /// The VMM physical allocation (VMM only).
    handle: u64,
}

fn allocate(session: &mut Session, path: Path, size: u64) -> Held {
    let cx = &mut cx();
    match path {
        Path::Malloc => Held { ptr: session.malloc(cx, wire::Malloc { device: 0, size, flags: 0 }).unwrap().ptr, size, path, handle: 0 },
        Path::Pool => Held { ptr: session.malloc_async(cx, wire::MallocAsync { device: 0, size, stream: 0 }).unwrap().ptr, size, path, handle: 0 },
        Path::Managed => {
            // The client asks for whole pages (it mirrors them).
            let size = size.next_multiple_of(4096);
            Held {
                ptr: session.managed_alloc(cx, wire::ManagedAlloc { device: 0, size, hint: 0, twin: wire::TWIN_MANAGED }).unwrap().ptr,
                size,
                path,
                handle: 0,
            }
        }
        Path::Vmm => {
            let granularity = session.vmm_get_granularity(cx, wire::VmmGranularityQuery { device: 0, recommended: false }).unwrap().granularity;
            let size = size.next_multiple_of(granularity);
            let handle = session.mem_create(cx, wire::MemCreate { device: 0, size, handle_type: 0 }).unwrap().handle;
            let ptr = session.address_reserve(cx, wire::AddressReserve { size, alignment: 0, addr: 0 }).unwrap().ptr;
            session.mem_map(cx, wire::MemMap { ptr, size, handle }).unwrap();
            session.mem_set_access(cx, wire::MemSetAccess { ptr, size, device: 0, flags: vmm_read_write() }).unwrap();
            Held { ptr, size, path, handle }
        }
    }
}

fn release(session: &mut Session, held: Held) {
    let (cx, ptr) = (&mut cx(), held.ptr);
    match held.path {
        Path::Malloc => session.free(cx, wire::Free { ptr }).map(|_| ()),
        Path::Pool => session.free_async(cx, wire::FreeAsync { ptr, stream: 0 }).map(|_| ()),
        Path::Managed => session.managed_free(cx, wire::ManagedFree { ptr }).map(|_| ()),
        Path::Vmm => {
            let span = wire::VmmSpan { ptr, size: held.size };
            session.mem_unmap(cx, span.clone()).unwrap();
            session.mem_release(cx, wire::PhysicalRef { handle: held.handle }).unwrap();
            session.address_free(cx, span).map(|_| ())
        }
    }
    .unwrap();
}

fn vmm_read_write() -> u32 {
    crate::backend::vmm::access::READ_WRITE
}

fn fill(session: &mut Session, held: &Held) {
    let req = wire::Memset { dst: held.ptr, value: u32::from(PATTERN), width: wire::MemsetWidth::Byte, count: held.size, stream: 0, sync: true };
    session.memset(&mut cx(), req).unwrap();
}

fn read(backend: &HostBackend, held: &Held) -> Vec<u8> {
    let mut out = vec![0u8; held.size as usize];
    backend.memcpy_dtoh_sync(None, DevicePtr(held.ptr), &mut out).unwrap();
    out
}

#[test]
fn a_tenant_never_reads_what_another_freed() {
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 256 << 20, ..HostConfig::default() }));
    let config = Arc::new(SessionConfig::default());
    for path in [Path::Malloc, Path::Pool, Path::Managed, Path::Vmm] {
        for round in 0..ROUNDS {
            let mut a = Session::new(backend.clone(), Arc::clone(&config));
            for size in SIZES {
                let held = allocate(&mut a, path, size);
                fill(&mut a, &held);
                assert!(read(&backend, &held).iter().all(|&b| b == PATTERN), "the pattern was written ({path:?})");
                release(&mut a, held);
            }
            // Half the rounds end tenant A's session too (its pools and caches go).
            if round % 2 == 0 {
                drop(a);
            }
            let mut b = Session::new(backend.clone(), Arc::clone(&config));
            for size in SIZES {
                let held = allocate(&mut b, path, size);
                let bytes = read(&backend, &held);
                let leaked = bytes.iter().filter(|&&b| b == PATTERN).count();
                assert_eq!(leaked, 0, "{path:?}, {size} bytes, round {round}: tenant B read {leaked} bytes of tenant A's pattern");
                assert!(bytes.iter().all(|&b| b == 0), "{path:?}: fresh memory is zeroed");
            }
        }
    }
}
