//! Shared registered host memory at the protocol level, over a real same-host connection to
//! an in-process worker: regions made and passed with their memfd, copies that name them,
//! and hostile requests (huge sizes, unknown regions, ranges past the end or overflowing,
//! another session's region, a connection without a descriptor channel) refused with clear
//! errors while the worker serves on.

#![cfg(target_os = "linux")]

mod common;

use common::{config_with, SessionDriver, TestWorker};
use hip_worker::shm::ShmWorker;
use proto_core::wire::{self, features};
use proto_core::{Request, Response, Status, PROTOCOL_VERSION};
use std::os::fd::AsFd;
use std::time::Duration;
use transport_shm::sys::Mapping;
use transport_shm::FdChannel;

/// A greeted client of `worker`'s socket that asked for shared memory, with its descriptor
/// channel.
fn shm_client(path: &std::path::Path) -> (SessionDriver, FdChannel) {
    let (sink, source, descriptors) = transport_shm::connect_with_fds(path, &transport_shm::ShmConfig::default()).expect("connect");
    let mut c = SessionDriver::over(Box::new(sink), Box::new(source));
    let hello = Request::Hello(wire::Hello {
        min_version: PROTOCOL_VERSION,
        max_version: PROTOCOL_VERSION,
        features: features::FIRE_AND_FORGET | features::SHARED_MEMORY,
        client_name: "shared_host.rs".into(),
        resume_session: 0,
        auth_token: Default::default(),
    });
    match c.call(&hello).response() {
        Response::Hello(w) => assert_ne!(w.features & features::SHARED_MEMORY, 0, "a same-host worker offers shared host memory"),
        other => panic!("HELLO answered with {other:?}"),
    }
    (c, descriptors)
}

/// Makes a region of `size` bytes: (id, its mapping here).
fn region(c: &mut SessionDriver, descriptors: &FdChannel, size: u64) -> (u64, Mapping) {
    let reply = c.call(&Request::HostAllocShared(wire::HostAllocShared { size, flags: 0 }));
    let Response::HostAllocShared(r) = reply.response() else { panic!("not a SharedRegion") };
    assert!(r.size >= size && r.size.is_multiple_of(4096), "{r:?}");
    let fd = descriptors.recv(r.region, Duration::from_secs(5)).expect("the region's memfd");
    assert_eq!(transport_shm::sys::sealed_len(fd.as_fd()).expect("sealed") as u64, r.size);
    (r.region, Mapping::new(fd.as_fd(), r.size as usize).expect("map"))
}

fn bytes(map: &mut Mapping) -> &mut [u8] {
    // SAFETY: the whole live mapping, borrowed mutably with it, while the worker is idle.
    unsafe { std::slice::from_raw_parts_mut(map.as_ptr(), map.len()) }
}

fn expect_error(c: &mut SessionDriver, req: &Request<'_>, status: Status, needle: &str) {
    let (got, message) = c.call(req).error();
    assert_eq!(got, status, "{req:?}: {message}");
    assert!(message.contains(needle), "{req:?}: {message:?} should say {needle:?}");
}

#[test]
fn shared_regions_copy_both_ways_and_hostile_requests_are_refused() {
    let local = TestWorker::in_memory(config_with(None));
    let path = std::env::temp_dir().join(format!("hip-shared-host-{}.sock", std::process::id()));
    let worker = ShmWorker::start_shm(&path, local.backend.clone(), local.config.clone()).expect("shm worker");

    let (mut a, a_fds) = shm_client(&path);
    let dev = a.malloc(1 << 20);
    let (id, mut map) = region(&mut a, &a_fds, 10_000);
    for (i, b) in bytes(&mut map).iter_mut().enumerate() {
        *b = (i * 31 % 251) as u8;
    }
    // Up at offset 100, back into offset 6000 of the same region.
    let up = wire::MemcpyHtoDShared { dst: dev + 8, region: id, offset: 100, len: 5000, stream: 0, sync: true };
    assert!(matches!(a.call(&Request::MemcpyHtoDShared(up)).response(), Response::MemcpyHtoDShared(_)));
    let down = wire::MemcpyDtoHShared { src: dev + 8, region: id, offset: 6000, len: 5000, stream: 0, sync: true };
    assert!(matches!(a.call(&Request::MemcpyDtoHShared(down)).response(), Response::MemcpyDtoHShared(_)));
    let b = bytes(&mut map);
    assert!(b[6000..11000] == b[100..5100].to_vec()[..], "the bytes came back through device memory");

    // Hostile requests: clear errors.
    let alloc = |size| Request::HostAllocShared(wire::HostAllocShared { size, flags: 0 });
    expect_error(&mut a, &alloc(u64::MAX), Status::OUT_OF_MEMORY, "limit");
    expect_error(&mut a, &alloc(1 << 50), Status::OUT_OF_MEMORY, "limit");
    expect_error(&mut a, &alloc(0), Status::INVALID_VALUE, "0 bytes");
    let up_with = |region, offset, len, dst| Request::MemcpyHtoDShared(wire::MemcpyHtoDShared { dst, region, offset, len, stream: 0, sync: true });
    let down_with = |region, offset, len| Request::MemcpyDtoHShared(wire::MemcpyDtoHShared { src: dev, region, offset, len, stream: 0, sync: true });
    expect_error(&mut a, &up_with(999, 0, 16, dev), Status::INVALID_VALUE, "not this session's");
    expect_error(&mut a, &up_with(id, u64::MAX, 2, dev), Status::INVALID_VALUE, "not inside");
    expect_error(&mut a, &up_with(id, 12_000, 1000, dev), Status::INVALID_VALUE, "not inside");
    expect_error(&mut a, &down_with(id, 1, u64::MAX), Status::INVALID_VALUE, "not inside");
    expect_error(&mut a, &up_with(id, 0, 16, 0x10), Status::INVALID_VALUE, "hipMemcpy destination");
    expect_error(&mut a, &up_with(id, 0, 4096, dev + (1 << 20) - 8), Status::INVALID_VALUE, "hipMemcpy destination");

    // Another session cannot name A's region (ids are per session).
    let (mut b_client, _b_fds) = shm_client(&path);
    let b_dev = b_client.malloc(4096);
    expect_error(&mut b_client, &up_with(id, 0, 16, b_dev), Status::INVALID_VALUE, "not this session's");
    expect_error(&mut b_client, &Request::HostFreeShared(wire::HostFreeShared { region: id }), Status::INVALID_VALUE, "not this session's");

    // Freed: gone for copies, a second free refused; the worker still serves both.
    let free = Request::HostFreeShared(wire::HostFreeShared { region: id });
    assert!(matches!(a.call(&free).response(), Response::HostFreeShared(_)));
    expect_error(&mut a, &free, Status::INVALID_VALUE, "not this session's");
    expect_error(&mut a, &up_with(id, 0, 16, dev), Status::INVALID_VALUE, "not this session's");
    drop(map);
    a.round_trip(3);
    b_client.round_trip(4);

    // A connection without a descriptor channel (here in memory; TCP, TLS, RDMA, session
    // processes alike) refuses shared host memory: the client keeps its memory local.
    let mut plain = SessionDriver::greeted(&local);
    expect_error(&mut plain, &alloc(4096), Status::NOT_SUPPORTED, "same-host");
    drop((a, b_client, plain));
    worker.shutdown();
}
