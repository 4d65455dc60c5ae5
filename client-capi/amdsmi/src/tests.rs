use super::*;
use hip_worker::backend::{HostBackend, HostConfig, MemoryBackend};
use hip_worker::http::MetricsServer;
use hip_worker::metrics::Metrics;
use std::sync::Arc;

/// Every name the amdsmi 7.0.2 Python package binds at import is exported here, once.
#[test]
fn every_entry_point_of_the_python_package_is_exported() {
    let listed: Vec<&str> = include_str!("../symbols/amdsmi-7.0.2.txt").lines().filter(|l| !l.is_empty()).collect();
    let source = include_str!("lib.rs");
    let implemented: Vec<&str> = source.lines().filter_map(|l| l.strip_prefix("pub extern \"C\" fn ")?.split('(').next()).collect();
    for name in &listed {
        let count = implemented.iter().filter(|n| *n == name).count() + NOT_SUPPORTED.iter().filter(|n| *n == name).count();
        assert_eq!(count, 1, "{name}");
    }
    assert_eq!(implemented.len() + NOT_SUPPORTED.len(), listed.len());
}

#[test]
fn bdf_and_target_versions() {
    assert_eq!(bdf_bits("00000000:1b:03.1"), Some(1 | 3 << 3 | 0x1b << 8));
    assert_eq!(bdf_bits("0000:1b:03"), None);
    assert_eq!(target_graphics_version("gfx942:sramecc+:xnack-"), 0x942);
    assert_eq!(target_graphics_version("gfx90a"), 0x90a);
    assert_eq!(target_graphics_version("gfx1100"), 0x1100);
    assert_eq!(target_graphics_version("sm_90"), 0);
}

/// The C API against a real worker endpoint (host backend, two devices).
#[test]
fn a_host_workers_devices_through_the_c_api() {
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 2, memory_per_device: 64 << 20, ..HostConfig::default() }));
    let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), backend.clone(), Arc::new(Metrics::default())).unwrap();

    let mut count = 0u32;
    assert_eq!(amdsmi_get_socket_handles(&mut count, std::ptr::null_mut()), AMDSMI_STATUS_NOT_INIT);
    std::env::set_var("HIP_REMOTE_METRICS", server.local_addr().to_string());
    assert_eq!(amdsmi_init(2), AMDSMI_STATUS_SUCCESS);
    assert_eq!(amdsmi_get_socket_handles(&mut count, std::ptr::null_mut()), AMDSMI_STATUS_SUCCESS);
    assert_eq!(count, 2);
    let mut sockets = [std::ptr::null_mut(); 2];
    assert_eq!(amdsmi_get_socket_handles(&mut count, sockets.as_mut_ptr()), AMDSMI_STATUS_SUCCESS);
    let mut processors = Vec::new();
    for socket in sockets {
        let (mut n, mut handle) = (1u32, std::ptr::null_mut());
        assert_eq!(amdsmi_get_processor_handles(socket, &mut n, &mut handle), AMDSMI_STATUS_SUCCESS);
        assert_eq!(n, 1);
        processors.push(handle);
    }
    // A socket handle is not a processor handle, and a made-up one is refused.
    let mut kind = 0;
    assert_eq!(amdsmi_get_processor_type(sockets[0], &mut kind), AMDSMI_STATUS_INVAL);
    assert_eq!(amdsmi_get_processor_type(0x1234 as Handle, &mut kind), AMDSMI_STATUS_INVAL);
    assert_eq!(amdsmi_get_processor_type(processors[1], &mut kind), AMDSMI_STATUS_SUCCESS);
    assert_eq!(kind, AMDSMI_PROCESSOR_TYPE_AMD_GPU);

    // Memory in use follows the backend.
    let ptr = backend.malloc(1, 5 << 20).unwrap();
    let (mut used, mut total) = (0u64, 0u64);
    assert_eq!(amdsmi_get_gpu_memory_usage(processors[1], AMDSMI_MEM_TYPE_VRAM, &mut used), AMDSMI_STATUS_SUCCESS);
    assert_eq!(amdsmi_get_gpu_memory_total(processors[1], AMDSMI_MEM_TYPE_VRAM, &mut total), AMDSMI_STATUS_SUCCESS);
    let info = backend.mem_get_info(1).unwrap();
    assert_eq!((used, total), (info.total - info.free, info.total));
    assert_eq!(used, 5 << 20);
    // SAFETY: all-zero bytes are a valid value of these plain C structures.
    let mut usage: amdsmi_vram_usage_t = unsafe { std::mem::zeroed() };
    assert_eq!(amdsmi_get_gpu_vram_usage(processors[1], &mut usage), AMDSMI_STATUS_SUCCESS);
    assert_eq!((usage.vram_used, usage.vram_total), (5, 64));
    backend.free(ptr).unwrap();
    assert_eq!(amdsmi_get_gpu_memory_usage(processors[1], AMDSMI_MEM_TYPE_VRAM, &mut used), AMDSMI_STATUS_SUCCESS);
    assert_eq!(used, 0);

    // SAFETY: as above.
    let mut asic: amdsmi_asic_info_t = unsafe { std::mem::zeroed() };
    assert_eq!(amdsmi_get_gpu_asic_info(processors[0], &mut asic), AMDSMI_STATUS_SUCCESS);
    // SAFETY: copy_str NUL-terminates inside the array.
    let market = unsafe { CStr::from_ptr(asic.market_name.as_ptr()) }.to_str().unwrap().to_string();
    assert_eq!(market, hip_worker::backend::DeviceBackend::device_properties(&*backend, 0).unwrap().name);
    // The host backend measures the CPU's busy share, and has no power sensor.
    // SAFETY: as above.
    let mut activity: amdsmi_engine_usage_t = unsafe { std::mem::zeroed() };
    assert_eq!(amdsmi_get_gpu_activity(processors[0], &mut activity), AMDSMI_STATUS_SUCCESS);
    assert!(activity.gfx_activity <= 100);
    // SAFETY: as above.
    let mut power: amdsmi_power_info_t = unsafe { std::mem::zeroed() };
    assert_eq!(amdsmi_get_power_info(processors[0], &mut power), AMDSMI_STATUS_NOT_SUPPORTED);
    assert_eq!(amdsmi_get_gpu_memory_usage(processors[0], 2, &mut used), AMDSMI_STATUS_NOT_SUPPORTED);
    assert_eq!(amdsmi_get_gpu_memory_usage(processors[0], AMDSMI_MEM_TYPE_VRAM, std::ptr::null_mut()), AMDSMI_STATUS_INVAL);

    // A short array gets what fits and says so.
    let mut one = [std::ptr::null_mut(); 1];
    let mut n = 1u32;
    assert_eq!(amdsmi_get_socket_handles(&mut n, one.as_mut_ptr()), AMDSMI_STATUS_INSUFFICIENT_SIZE);
    assert_eq!((n, one[0]), (1, sockets[0]));

    // The worker gone: calls fail with I/O, not stale figures.
    drop(server);
    assert_eq!(amdsmi_get_gpu_memory_usage(processors[1], AMDSMI_MEM_TYPE_VRAM, &mut used), AMDSMI_STATUS_IO);
    assert_eq!(amdsmi_shut_down(), AMDSMI_STATUS_SUCCESS);
    assert_eq!(amdsmi_shut_down(), AMDSMI_STATUS_NOT_INIT);
}
