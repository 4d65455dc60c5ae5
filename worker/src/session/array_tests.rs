//! Arrays through the session's handlers: isolation between sessions, the memory bound,
//! hostile places, cleanup with the session.

use super::*;
use crate::backend::{HostBackend, HostConfig, MemoryBackend};
use proto_core::opcode::{ArrayHandler, MemoryHandler};
use proto_core::{wire, Status};

fn backend() -> Arc<HostBackend> {
    Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 << 20, ..HostConfig::default() }))
}

fn session(backend: &Arc<HostBackend>, max_memory: Option<u64>) -> Session {
    let limits = SessionLimits { max_memory, ..SessionLimits::default() };
    Session::new(backend.clone(), Arc::new(SessionConfig { limits, ..SessionConfig::default() }))
}

fn io() -> CallCx {
    CallCx::new(1, proto_core::Opcode::Ping, false, 0)
}

/// A float array of `width` x `height` elements.
fn create(session: &mut Session, width: u64, height: u64) -> Result<u64, Failure> {
    let req = wire::ArrayCreate { device: 0, format: 0x20, channels: 1, width, height, depth: 0, flags: 0, levels: 0 };
    session.array_create(&mut io(), req).map(|a| a.handle)
}

fn status<T: std::fmt::Debug>(result: Result<T, Failure>) -> Status {
    match result {
        Err(Failure::Status(status, _)) => status,
        other => panic!("expected an error status, got {other:?}"),
    }
}

fn upload(array: u64, x: u64, width: u64, data: &[u8]) -> wire::Copy3DFromHost<'_> {
    wire::Copy3DFromHost {
        dst: wire::CopyPlace { array, x, ..Default::default() },
        extent: wire::CopyExtent { width, height: 1, depth: 1 },
        sync: true,
        data: proto_core::Bulk(data),
        ..Default::default()
    }
}

#[test]
fn another_sessions_array_is_refused() {
    let backend = backend();
    let (mut a, mut b) = (session(&backend, None), session(&backend, None));
    let array = create(&mut a, 16, 4).unwrap();
    let data = [1u8; 64];
    assert_eq!(status(b.copy_3d_from_host(&mut io(), upload(array, 0, 64, &data))), Status::INVALID_VALUE);
    assert_eq!(status(b.array_destroy(&mut io(), wire::ArrayRef { handle: array })), Status::INVALID_VALUE);
    a.copy_3d_from_host(&mut io(), upload(array, 0, 64, &data)).unwrap();
    a.array_destroy(&mut io(), wire::ArrayRef { handle: array }).unwrap();
    assert_eq!(status(a.array_destroy(&mut io(), wire::ArrayRef { handle: array })), Status::INVALID_VALUE);
}

#[test]
fn hostile_places_are_errors() {
    let backend = backend();
    let mut s = session(&backend, None);
    let array = create(&mut s, 16, 4).unwrap();
    let data = [0u8; 8];
    // Past the row, offsets that overflow, a payload that is not the box.
    assert_eq!(status(s.copy_3d_from_host(&mut io(), upload(array, 60, 8, &data))), Status::INVALID_VALUE);
    assert_eq!(status(s.copy_3d_from_host(&mut io(), upload(array, u64::MAX - 2, 8, &data))), Status::INVALID_VALUE);
    assert_eq!(status(s.copy_3d_from_host(&mut io(), upload(array, 0, 4, &data))), Status::INVALID_VALUE);
    let on_array = wire::CopyPlace { array, ..Default::default() };
    let extent = wire::CopyExtent { width: 8, height: u64::MAX, depth: u64::MAX };
    let huge = wire::Copy3D { copy: wire::CopyBox { dst: on_array.clone(), src: on_array.clone(), extent }, ..Default::default() };
    assert_eq!(status(s.copy_3d(&mut io(), huge)), Status::INVALID_VALUE);
    // Device memory: outside the allocation, overflowing pitch arithmetic, a pitch too small.
    let ptr = s.malloc(&mut io(), wire::Malloc { device: 0, size: 256, flags: 0 }).unwrap().ptr;
    let to_device = |pitch, height, y, depth| wire::Copy3D {
        copy: wire::CopyBox {
            dst: wire::CopyPlace { ptr, pitch, height, y, ..Default::default() },
            src: on_array.clone(),
            extent: wire::CopyExtent { width: 64, height: 1, depth },
        },
        ..Default::default()
    };
    s.copy_3d(&mut io(), to_device(64, 4, 3, 1)).unwrap();
    assert_eq!(status(s.copy_3d(&mut io(), to_device(64, 4, 4, 1))), Status::INVALID_VALUE);
    assert_eq!(status(s.copy_3d(&mut io(), to_device(64, u64::MAX, 0, 2))), Status::INVALID_VALUE);
    assert_eq!(status(s.copy_3d(&mut io(), to_device(32, 4, 0, 1))), Status::INVALID_PITCH_VALUE);
    // Limits and descriptors.
    assert_eq!(status(create(&mut s, 1 << 20, 0)), Status::INVALID_VALUE);
    assert_eq!(status(create(&mut s, 0, 4)), Status::INVALID_VALUE);
    let mipmap = wire::ArrayCreate { device: 0, format: 0x20, channels: 1, width: 16, height: 0, depth: 0, flags: 0, levels: 6 };
    assert_eq!(status(s.array_create(&mut io(), mipmap)), Status::INVALID_VALUE);
}

#[test]
fn arrays_count_toward_the_session_memory_and_go_with_the_session() {
    let backend = backend();
    let free_before = backend.mem_get_info(0).unwrap().free;
    let mut s = session(&backend, Some(1 << 20));
    // 2 MiB of floats: past the bound, refused before anything is allocated.
    assert_eq!(status(create(&mut s, 1024, 512)), Status::OUT_OF_MEMORY);
    create(&mut s, 512, 256).unwrap(); // 512 KiB
    assert_eq!(status(create(&mut s, 512, 300)), Status::OUT_OF_MEMORY);
    let levels = wire::ArrayCreate { device: 0, format: 0x20, channels: 1, width: 256, height: 128, depth: 0, flags: 0, levels: 3 };
    let mipmap = s.array_create(&mut io(), levels).unwrap().handle;
    let level = s.mipmap_get_level(&mut io(), wire::MipmapLevel { mipmap, level: 2 }).unwrap().handle;
    assert_eq!(status(s.array_destroy(&mut io(), wire::ArrayRef { handle: level })), Status::INVALID_VALUE);
    assert_eq!(status(s.mipmap_get_level(&mut io(), wire::MipmapLevel { mipmap, level: 3 })), Status::INVALID_VALUE);
    assert!(backend.mem_get_info(0).unwrap().free < free_before);
    drop(s);
    assert_eq!(backend.mem_get_info(0).unwrap().free, free_before, "arrays freed with the session");
}

#[test]
fn texture_objects_name_only_the_sessions_resources() {
    let backend = backend();
    let (mut a, mut b) = (session(&backend, None), session(&backend, None));
    let array = create(&mut a, 16, 4).unwrap();
    let over = |res_type, resource, width, height, pitch| wire::TextureCreate {
        res_type,
        resource,
        format: 0x20,
        channels: 1,
        width,
        height,
        pitch,
        ..Default::default()
    };
    let texture = a.texture_create(&mut io(), over(0, array, 0, 0, 0)).unwrap().texture;
    assert_eq!(status(b.texture_create(&mut io(), over(0, array, 0, 0, 0))), Status::INVALID_VALUE);
    assert_eq!(status(b.texture_destroy(&mut io(), wire::ArrayRef { handle: texture })), Status::INVALID_VALUE);
    let ptr = a.malloc(&mut io(), wire::Malloc { device: 0, size: 1024, flags: 0 }).unwrap().ptr;
    a.texture_create(&mut io(), over(2, ptr, 1024, 0, 0)).unwrap();
    assert_eq!(status(a.texture_create(&mut io(), over(2, ptr + 1, 1024, 0, 0))), Status::INVALID_VALUE);
    assert_eq!(status(b.texture_create(&mut io(), over(2, ptr, 16, 0, 0))), Status::INVALID_VALUE);
    a.texture_create(&mut io(), over(3, ptr, 64, 4, 256)).unwrap();
    assert_eq!(status(a.texture_create(&mut io(), over(3, ptr, 64, 5, 256))), Status::INVALID_VALUE);
    assert_eq!(status(a.texture_create(&mut io(), over(3, ptr, 64, 4, u64::MAX))), Status::INVALID_VALUE);
    assert_eq!(status(a.texture_create(&mut io(), over(4, ptr, 16, 0, 0))), Status::INVALID_VALUE);
    a.texture_destroy(&mut io(), wire::ArrayRef { handle: texture }).unwrap();
    assert_eq!(status(a.texture_destroy(&mut io(), wire::ArrayRef { handle: texture })), Status::INVALID_VALUE);
}

#[test]
fn queued_3d_uploads_are_bounded() {
    use proto_core::opcode::StreamHandler;
    let backend = backend();
    let limits = SessionLimits { max_pending_bytes: 100, ..SessionLimits::default() };
    let mut s = Session::new(backend.clone(), Arc::new(SessionConfig { limits, ..SessionConfig::default() }));
    let array = create(&mut s, 64, 0).unwrap();
    let stream = s.stream_create(&mut io(), wire::StreamCreate { device: 0, flags: 0, priority: 0 }).unwrap().stream;
    let data = [7u8; 128];
    let upload = |stream, sync| wire::Copy3DFromHost {
        dst: wire::CopyPlace { array, ..Default::default() },
        extent: wire::CopyExtent { width: 128, height: 1, depth: 1 },
        stream,
        sync,
        data: proto_core::Bulk(&data),
    };
    // Queued behind a stream: 128 bytes pass the 100-byte bound.
    assert_eq!(status(s.copy_3d_from_host(&mut io(), upload(stream, false))), Status::OUT_OF_MEMORY);
    // Synchronous or on the null stream: nothing is held.
    s.copy_3d_from_host(&mut io(), upload(stream, true)).unwrap();
    s.copy_3d_from_host(&mut io(), upload(0, false)).unwrap();
}
