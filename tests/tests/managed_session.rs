//! The worker's half of the managed-memory coherence engine, spoken to directly (see
//! `session.rs` for the harness): only pages whose contents changed come back, pushed pages
//! count as seen, and a hostile client's bad allocation, page list or pointer is an error reply
//! that leaves the worker (and a bystander session) serving.

mod common;

use common::*;
use proto_core::wire::{self, MANAGED_PAGE};
use proto_core::{Bulk, List, Request, Response, Status};
use zerocopy::byteorder::little_endian::U32;

const PAGE: usize = MANAGED_PAGE as usize;

fn alloc(c: &mut SessionDriver, size: u64) -> u64 {
    alloc_twin(c, size, wire::TWIN_MANAGED)
}

fn alloc_twin(c: &mut SessionDriver, size: u64, twin: u32) -> u64 {
    match c.call(&Request::ManagedAlloc(wire::ManagedAlloc { device: 0, size, hint: 0, twin })).response() {
        Response::ManagedAlloc(a) => a.ptr,
        other => panic!("ManagedAlloc answered with {other:?}"),
    }
}

/// Pulls every changed page: `(index, bytes)`.
fn pull(c: &mut SessionDriver, ptr: u64) -> Vec<(u32, Vec<u8>)> {
    match c.call(&Request::ManagedPull(wire::ManagedPull { ptr, from: 0 })).response() {
        Response::ManagedPull(p) => {
            assert_eq!(p.data.0.len(), p.pages.0.len() * PAGE);
            p.pages.0.iter().zip(p.data.0.chunks_exact(PAGE)).map(|(i, bytes)| (i.get(), bytes.to_vec())).collect()
        }
        other => panic!("ManagedPull answered with {other:?}"),
    }
}

fn push(c: &mut SessionDriver, ptr: u64, pages: &[u32], data: &[u8]) -> Reply {
    let pages: Vec<U32> = pages.iter().map(|&p| U32::new(p)).collect();
    c.call(&Request::ManagedPush(wire::ManagedPush { ptr, pages: List(&pages), data: Bulk(data) }))
}

/// Both kinds of device side (managed memory; plain device memory, which signal and
/// registered memory use) are kept coherent alike.
#[test]
fn only_pages_that_changed_come_back() {
    for twin in [wire::TWIN_MANAGED, wire::TWIN_DEVICE] {
        pages_that_changed_come_back(twin);
    }
}

fn pages_that_changed_come_back(twin: u32) {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let ptr = alloc_twin(&mut c, 3 * MANAGED_PAGE, twin);
        assert!(pull(&mut c, ptr).is_empty(), "a fresh allocation is zero on both sides");

        // A pushed page is what the client has: it does not come back.
        assert!(!push(&mut c, ptr, &[1], &[0xAB; PAGE]).is_error());
        assert!(pull(&mut c, ptr).is_empty());

        // The device writes 8 bytes of page 2: that page (and only it) comes back, once.
        let bytes = [7u8; 8];
        let copy = Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr + 2 * MANAGED_PAGE + 100, stream: 0, sync: true, data: Bulk(&bytes) });
        assert!(!c.call(&copy).is_error());
        let changed = pull(&mut c, ptr);
        assert_eq!(changed.len(), 1);
        let (index, page) = &changed[0];
        assert_eq!(*index, 2);
        assert_eq!(&page[100..108], &bytes);
        assert!(page[..100].iter().chain(&page[108..]).all(|&b| b == 0));
        assert!(pull(&mut c, ptr).is_empty(), "a pulled page is what the client has");

        // The pushed page reached the device.
        let read = Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr + MANAGED_PAGE, len: 16, stream: 0 });
        match c.call(&read).response() {
            Response::MemcpyDtoH(d) => assert_eq!(d.data.0, &[0xAB; 16]),
            other => panic!("{other:?}"),
        }
        assert!(!c.call(&Request::ManagedFree(wire::ManagedFree { ptr })).is_error());
    });
}

#[test]
fn bad_managed_requests_are_refused() {
    with_bystander(|worker| {
        let mut c = SessionDriver::greeted(worker);
        let bad_alloc = |size| Request::ManagedAlloc(wire::ManagedAlloc { device: 0, size, hint: 0, twin: wire::TWIN_MANAGED });
        assert_eq!(c.call(&bad_alloc(100)).error().0, Status::INVALID_VALUE);
        assert_eq!(c.call(&bad_alloc(0)).error().0, Status::INVALID_VALUE);
        let (status, _) = c.call(&Request::ManagedAlloc(wire::ManagedAlloc { device: 9, size: 4096, hint: 0, twin: wire::TWIN_MANAGED })).error();
        assert_eq!(status, Status(101), "hipErrorInvalidDevice");
        assert_eq!(c.call(&bad_alloc(1 << 50)).error().0, Status::OUT_OF_MEMORY);
        let unknown_twin = Request::ManagedAlloc(wire::ManagedAlloc { device: 0, size: 4096, hint: 0, twin: 2 });
        assert_eq!(c.call(&unknown_twin).error().0, Status::INVALID_VALUE, "a device side that does not exist");

        let ptr = alloc(&mut c, 2 * MANAGED_PAGE);
        assert_eq!(push(&mut c, ptr, &[1, 0], &[0; 2 * PAGE]).error().0, Status::INVALID_VALUE, "descending");
        assert_eq!(push(&mut c, ptr, &[0, 0], &[0; 2 * PAGE]).error().0, Status::INVALID_VALUE, "repeated");
        assert_eq!(push(&mut c, ptr, &[2], &[0; PAGE]).error().0, Status::INVALID_VALUE, "past the end");
        assert_eq!(push(&mut c, ptr, &[0], &[0; PAGE - 1]).error().0, Status::INVALID_VALUE, "short data");
        assert_eq!(push(&mut c, ptr + 8, &[0], &[0; PAGE]).error().0, Status::INVALID_VALUE, "not an allocation start");
        let (status, _) = c.call(&Request::ManagedPull(wire::ManagedPull { ptr, from: 3 })).error();
        assert_eq!(status, Status::INVALID_VALUE);

        // A hipMalloc allocation is not managed: neither pulled nor freed as one.
        let device = c.malloc(4096);
        assert_eq!(c.call(&Request::ManagedPull(wire::ManagedPull { ptr: device, from: 0 })).error().0, Status::INVALID_VALUE);
        assert_eq!(c.call(&Request::ManagedFree(wire::ManagedFree { ptr: device })).error().0, Status::INVALID_VALUE);

        assert!(!c.call(&Request::ManagedFree(wire::ManagedFree { ptr })).is_error());
        assert_eq!(c.call(&Request::ManagedFree(wire::ManagedFree { ptr })).error().0, Status::INVALID_VALUE, "twice");
        assert_eq!(push(&mut c, ptr, &[0], &[0; PAGE]).error().0, Status::INVALID_VALUE, "after free");
    });
}
