//! Kernels end to end through the session's handler methods (no transport), on the host backend.

use super::*;
use crate::backend::MemoryBackend;
use crate::backend::{DevicePtr, HostBackend, HostConfig};
use proto_core::opcode::{MemoryHandler, ModuleHandler, RtcHandler, StreamHandler};
use proto_core::wire::ModuleFormat;
use proto_core::{wire, Status};
use proto_core::{Bulk, StrList};

fn setup() -> (Session, CallCx, Arc<HostBackend>) {
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 << 20, allow_host_code: true, ..HostConfig::default() }));
    let session = Session::new(backend.clone(), Arc::new(SessionConfig::default()));
    let io = CallCx::new(1, proto_core::Opcode::Ping, false, 0);
    (session, io, backend)
}

fn have_compiler() -> bool {
    let found = std::process::Command::new("c++").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        transport_core::test_skip::skip("session tests needing a C++ compiler: none here");
    }
    found
}

fn status<T: std::fmt::Debug>(result: Result<T, Failure>) -> (Status, String) {
    match result {
        Err(Failure::Status(status, message)) => (status, message),
        other => panic!("expected an error status, got {other:?}"),
    }
}

fn list(items: &[&str]) -> String {
    items.iter().map(|s| format!("{s}\0")).collect()
}

/// Compiles `source` through the session and loads the code it returned onto device 0.
fn compile_and_load(session: &mut Session, io: &mut CallCx, source: &str) -> u64 {
    compile_and_load_on(session, io, source, 0)
}

/// Compiles `source` for `device` and loads the code onto it.
fn compile_and_load_on(session: &mut Session, io: &mut CallCx, source: &str, device: u32) -> u64 {
    let (options, exprs) = (list(&["-O3"]), list(&[]));
    let compiled = session
        .rtc_compile(
            io,
            wire::RtcCompile {
                device,
                name: "kernels.hip".into(),
                source: source.into(),
                header_names: StrList::default(),
                header_sources: StrList::default(),
                options: StrList::from_packed(&options).unwrap(),
                name_expressions: StrList::from_packed(&exprs).unwrap(),
            },
        )
        .unwrap()
        .into_reply()
        .unwrap();
    assert!(compiled.success, "{}", compiled.log.as_str());
    let code = compiled.code.0.to_vec();
    session
        .module_load(io, wire::ModuleLoad { device, format: ModuleFormat::HostModule, origin: "kernels.hip".into(), image: Bulk(&code) })
        .unwrap()
        .module
}

#[test]
fn modules_load_on_the_device_the_request_names() {
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 2, memory_per_device: 64 << 20, allow_host_code: true, ..HostConfig::default() }));
    let mut session = Session::new(backend.clone(), Arc::new(SessionConfig::default()));
    let io = &mut CallCx::new(1, proto_core::Opcode::Ping, false, 0);

    // An ordinal the worker does not serve is refused before anything is compiled or loaded.
    let empty = StrList::default();
    let compile = |device| wire::RtcCompile {
        device,
        name: "k.hip".into(),
        source: "".into(),
        header_names: empty,
        header_sources: empty,
        options: empty,
        name_expressions: empty,
    };
    let (code, message) = status(session.rtc_compile(io, compile(2)));
    assert_eq!(code, Status::INVALID_DEVICE, "{message}");
    let load = wire::ModuleLoad { device: 2, format: ModuleFormat::HostModule, origin: "".into(), image: Bulk(b"\x7fELF") };
    let (code, message) = status(session.module_load(io, load));
    assert_eq!(code, Status::INVALID_DEVICE, "{message}");
    let load = wire::ModuleLoad { device: u32::MAX, format: ModuleFormat::Auto, origin: "".into(), image: Bulk(b"junk") };
    assert_eq!(status(session.module_load(io, load)).0, Status::INVALID_DEVICE);

    if !have_compiler() {
        return;
    }
    let module = compile_and_load_on(&mut session, io, SOURCE, 1);
    assert_eq!(session.modules.get(module).unwrap().device(), 1);
    // Its globals are device 1's memory.
    let global = session.module_get_global(io, wire::SymbolLookup { module, name: "bias".into() }).unwrap();
    assert_eq!(session.allocations.get(global.ptr).unwrap().device, 1);
    let function = session.module_get_function(io, wire::SymbolLookup { module, name: "vadd".into() }).unwrap().function;

    // A null-stream launch runs on the module's device, after that device's earlier work.
    let n = 64i32;
    let ptrs: Vec<u64> = (0..3).map(|_| session.malloc(io, wire::Malloc { device: 1, size: 4 * n as u64, flags: 0 }).unwrap().ptr).collect();
    for ptr in &ptrs[..2] {
        session.memcpy_htod(io, wire::MemcpyHtoD { dst: *ptr, stream: 0, sync: true, data: Bulk(&bytes_of(&vec![5; n as usize])) }).unwrap();
    }
    let mut args: Vec<u8> = ptrs.iter().flat_map(|p| p.to_le_bytes()).collect();
    args.extend_from_slice(&n.to_le_bytes());
    let launch = wire::LaunchKernel { function, grid: [1, 1, 1], block: [64, 1, 1], shared_mem: 0, stream: 0, args: args.as_slice().into() };
    session.launch_kernel(io, launch).unwrap();
    // The null stream is asynchronous: its launch has finished once it is synchronized.
    session.stream_synchronize(io, wire::StreamRef { stream: 0 }).unwrap();
    let mut out = vec![0u8; 4 * n as usize];
    backend.memcpy_dtoh_sync(None, DevicePtr(ptrs[2]), &mut out).unwrap();
    assert_eq!(out, bytes_of(&vec![10; n as usize]));
}

const SOURCE: &str = r#"
__device__ int bias;
extern "C" __global__ void vadd(const int* a, const int* b, int* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i] + bias;
}
"#;

fn bytes_of(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn kernels_end_to_end_through_the_session() {
    if !have_compiler() {
        return;
    }
    let (mut session, mut io, backend) = setup();
    let io = &mut io;
    let module = compile_and_load(&mut session, io, SOURCE);

    let info = session.module_get_function(io, wire::SymbolLookup { module, name: "vadd".into() }).unwrap();
    let function = info.function;
    let layout: Vec<(u32, u32)> = info.params.0.iter().map(|p| (p.offset.get(), p.size.get())).collect();
    assert_eq!(layout, [(0, 8), (8, 8), (16, 8), (24, 4)]);
    let again = session.module_get_function(io, wire::SymbolLookup { module, name: "vadd".into() }).unwrap();
    assert_eq!(again.function, function, "one handle per kernel");

    let n = 1000;
    let a: Vec<i32> = (0..n).collect();
    let b: Vec<i32> = (0..n).map(|i| 3 * i).collect();
    let mut ptrs = Vec::new();
    for _ in 0..3 {
        ptrs.push(session.malloc(io, wire::Malloc { device: 0, size: 4 * n as u64, flags: 0 }).unwrap().ptr);
    }
    for (ptr, data) in [(ptrs[0], bytes_of(&a)), (ptrs[1], bytes_of(&b))] {
        session.memcpy_htod(io, wire::MemcpyHtoD { dst: ptr, stream: 0, sync: true, data: Bulk(&data) }).unwrap();
    }
    let global = session.module_get_global(io, wire::SymbolLookup { module, name: "bias".into() }).unwrap();
    assert_eq!(global.size, 4);
    let bias = 7i32.to_le_bytes();
    session.memcpy_htod(io, wire::MemcpyHtoD { dst: global.ptr, stream: 0, sync: true, data: Bulk(&bias) }).unwrap();

    let stream = session.stream_create(io, wire::StreamCreate { device: 0, flags: 0, priority: 0 }).unwrap().stream;
    let mut args = Vec::new();
    for ptr in &ptrs {
        args.extend_from_slice(&ptr.to_le_bytes());
    }
    args.extend_from_slice(&n.to_le_bytes());
    fn launch(function: u64, args: &[u8], stream: u64) -> wire::LaunchKernel<'_> {
        wire::LaunchKernel { function, grid: [4, 1, 1], block: [256, 1, 1], shared_mem: 0, stream, args: args.into() }
    }
    session.launch_kernel(io, launch(function, &args, stream)).unwrap();
    session.stream_synchronize(io, wire::StreamRef { stream }).unwrap();
    let mut out = vec![0u8; 4 * n as usize];
    backend.memcpy_dtoh_sync(None, DevicePtr(ptrs[2]), &mut out).unwrap();
    let expected: Vec<i32> = (0..n).map(|i| 4 * i + 7).collect();
    assert_eq!(out, bytes_of(&expected));

    // Refusals.
    let (code, message) = status(session.launch_kernel(io, launch(function, &args[..27], stream)));
    assert_eq!(code, Status::INVALID_VALUE, "{message}");
    let (code, _) = status(session.launch_kernel(io, launch(function, &args, 0x1234)));
    assert_eq!(code, Status::INVALID_HANDLE);
    let (code, message) = status(session.free(io, wire::Free { ptr: global.ptr }));
    assert_eq!(code, Status::INVALID_VALUE);
    assert!(message.contains("module global"), "{message}");
    let (code, _) = status(session.module_get_function(io, wire::SymbolLookup { module, name: "nope".into() }));
    assert_eq!(code, Status::NOT_FOUND);

    // Attributes and occupancy.
    let attrs = session.func_get_attributes(io, wire::FunctionRef { function }).unwrap();
    assert_eq!(attrs.max_threads_per_block, 1024);
    let occupancy = session.occupancy_max_active_blocks(io, wire::OccupancyQuery { function, block_size: 256, dynamic_shared: 0, flags: 0 }).unwrap();
    assert_eq!(occupancy.blocks, 4);
    let suggested =
        session.occupancy_max_potential_block_size(io, wire::BlockSizeQuery { function, dynamic_shared: 0, block_size_limit: 0, flags: 0 }).unwrap();
    assert_eq!(suggested.block_size, 1024);
    let (code, _) = status(session.occupancy_max_active_blocks(io, wire::OccupancyQuery { function, block_size: 256, dynamic_shared: 0, flags: 8 }));
    assert_eq!(code, Status::INVALID_VALUE);

    // Unloading takes the functions and the global with it.
    session.module_unload(io, wire::ModuleRef { module }).unwrap();
    let (code, _) = status(session.launch_kernel(io, launch(function, &args, stream)));
    assert_eq!(code, Status::INVALID_HANDLE);
    let (code, _) = status(session.memcpy_htod(io, wire::MemcpyHtoD { dst: global.ptr, stream: 0, sync: true, data: Bulk(&bias) }));
    assert_eq!(code, Status::INVALID_VALUE);
    let (code, _) = status(session.module_unload(io, wire::ModuleRef { module }));
    assert_eq!(code, Status::INVALID_HANDLE);
}

#[test]
fn rtc_failures_are_answers_and_bad_images_name_the_arch() {
    let (mut session, mut io, _backend) = setup();
    let io = &mut io;
    let empty = StrList::default();
    let refused = session
        .rtc_compile(
            io,
            wire::RtcCompile {
                device: 0,
                name: "sync.hip".into(),
                source: "extern \"C\" __global__ void k() { no_such_function(); }".into(),
                header_names: empty,
                header_sources: empty,
                options: empty,
                name_expressions: empty,
            },
        )
        .unwrap()
        .into_reply()
        .unwrap();
    assert!(!refused.success);
    assert!(refused.code.0.is_empty());
    assert!(refused.log.as_str().contains("sync.hip:1:"), "{}", refused.log.as_str());
    assert!(refused.log.as_str().contains("no_such_function"), "{}", refused.log.as_str());

    let one = list(&["a.h"]);
    let (code, _) = status(session.rtc_compile(
        io,
        wire::RtcCompile {
            device: 0,
            name: "x".into(),
            source: "".into(),
            header_names: StrList::from_packed(&one).unwrap(),
            header_sources: empty,
            options: empty,
            name_expressions: empty,
        },
    ));
    assert_eq!(code, Status::INVALID_VALUE);

    let (code, message) =
        status(session.module_load(
            io,
            wire::ModuleLoad { device: 0, format: ModuleFormat::CodeObject, origin: "kernel.co".into(), image: Bulk(b"\x7fELF....") },
        ));
    assert_eq!(code, Status::NO_BINARY_FOR_GPU);
    assert!(message.starts_with("kernel.co: ") && message.contains("`host`"), "{message}");
    let (code, _) =
        status(session.module_load(io, wire::ModuleLoad { device: 0, format: ModuleFormat::Auto, origin: "".into(), image: Bulk(b"junk") }));
    assert_eq!(code, Status::INVALID_IMAGE);
}

#[test]
fn ending_the_session_unloads_its_modules() {
    if !have_compiler() {
        return;
    }
    let (mut session, mut io, backend) = setup();
    let io = &mut io;
    let module = compile_and_load(
        &mut session,
        io,
        r#"
__device__ int* marker;
extern "C" __global__ void arm(int* slot) { marker = slot; }
__attribute__((destructor)) static void on_unload() { if (marker) *marker = 0x600d; }
"#,
    );
    // Memory of the backend itself, so it outlives the session.
    let slot = backend.malloc(0, 4).unwrap();
    let function = session.module_get_function(io, wire::SymbolLookup { module, name: "arm".into() }).unwrap().function;
    let args = slot.0.to_le_bytes();
    session.launch_kernel(io, wire::LaunchKernel { function, grid: [1; 3], block: [1; 3], shared_mem: 0, stream: 0, args: args[..].into() }).unwrap();
    drop(session);
    let mut marker = [0u8; 4];
    backend.memcpy_dtoh_sync(None, slot, &mut marker).unwrap();
    assert_eq!(i32::from_le_bytes(marker), 0x600d, "the module was closed with the session");
}

/// Records what a session announces to its transport's registry.
#[derive(Default)]
struct RegistryLog(std::sync::Mutex<Vec<String>>);

impl MemoryRegistry for RegistryLog {
    fn remember(&self, addr: usize, len: usize) {
        self.0.lock().unwrap().push(format!("remember {addr:#x} {len}"));
    }
    fn forget(&self, addr: usize) {
        self.0.lock().unwrap().push(format!("forget {addr:#x}"));
    }
}

#[test]
fn allocations_are_announced_to_the_transport_and_withdrawn_when_freed() {
    let (mut session, mut io, _backend) = setup();
    let io = &mut io;
    let log = Arc::new(RegistryLog::default());
    session.set_memory_registry(Some(log.clone()));
    let a = session.malloc(io, wire::Malloc { device: 0, size: 4096, flags: 0 }).unwrap().ptr;
    let b = session.malloc(io, wire::Malloc { device: 0, size: 100, flags: 0 }).unwrap().ptr;
    session.free(io, wire::Free { ptr: a }).unwrap();
    // A refused free withdraws nothing.
    assert!(session.free(io, wire::Free { ptr: a }).is_err());
    drop(session);
    let expected = [format!("remember {a:#x} 4096"), format!("remember {b:#x} 100"), format!("forget {a:#x}"), format!("forget {b:#x}")];
    assert_eq!(*log.0.lock().unwrap(), expected, "the host backend has no staging buffers to announce");
}

/// Host code is the operator's choice: a worker started without `--allow-host-code` serves
/// memory but refuses hiprtc and module loads with `hipErrorNotSupported`, saying how to
/// allow them; a GPU image still gets its own answer.
#[test]
fn host_code_is_refused_unless_the_operator_allows_it() {
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 << 20, allow_host_code: false, ..HostConfig::default() }));
    let mut session = Session::new(backend, Arc::new(SessionConfig::default()));
    let mut cx = CallCx::new(1, proto_core::Opcode::Ping, false, 0);
    let (options, exprs) = (list(&[]), list(&[]));
    let compile = wire::RtcCompile {
        device: 0,
        name: "k.hip".into(),
        source: "extern \"C\" __global__ void k() {}".into(),
        header_names: StrList::default(),
        header_sources: StrList::default(),
        options: StrList::from_packed(&options).unwrap(),
        name_expressions: StrList::from_packed(&exprs).unwrap(),
    };
    let (code, message) = status(session.rtc_compile(&mut cx, compile));
    assert_eq!(code, Status::NOT_SUPPORTED);
    assert!(message.contains("--allow-host-code"), "{message}");
    // An ELF shared object for this CPU (the header is enough: the policy is checked first).
    let mut image = vec![0u8; 64];
    image[..4].copy_from_slice(b"\x7fELF");
    image[4] = 2;
    image[5] = 1;
    image[16] = 3;
    image[18..20].copy_from_slice(&(if cfg!(target_arch = "aarch64") { 183u16 } else { 62u16 }).to_le_bytes());
    let load = wire::ModuleLoad { device: 0, format: ModuleFormat::HostModule, origin: "".into(), image: Bulk(&image) };
    let (code, message) = status(session.module_load(&mut cx, load));
    assert_eq!(code, Status::NOT_SUPPORTED, "{message}");
    assert!(message.contains("--allow-host-code"), "{message}");
    let ptx = wire::ModuleLoad { device: 0, format: ModuleFormat::Ptx, origin: "".into(), image: Bulk(b".version 8.0\n.target sm_90\n") };
    let (code, _) = status(session.module_load(&mut cx, ptx));
    assert_eq!(code, Status(proto_core::hip_error::code::NO_BINARY_FOR_GPU), "a GPU image keeps its own answer");
    let alloc = session.malloc(&mut cx, wire::Malloc { device: 0, size: 4096, flags: 0 }).expect("memory is still served");
    assert_ne!(alloc.ptr, 0);
}

/// `SessionDeviceBase`: ordinals in requests and replies are the client's, handles carry the
/// base, other workers' ordinals are refused, and the base is fixed once the session holds
/// anything.
#[test]
fn a_device_base_renumbers_the_session_and_namespaces_its_handles() {
    use proto_core::opcode::{DeviceHandler, EventHandler, SessionHandler};
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 2, memory_per_device: 16 << 20, ..HostConfig::default() }));
    let mut session = Session::new(backend, Arc::new(SessionConfig::default()));
    let mut cx = CallCx::new(1, proto_core::Opcode::Ping, false, 0);
    let (code, _) = status(session.session_device_base(&mut cx, wire::DeviceBase { base: 255 }));
    assert_eq!(code, Status::INVALID_VALUE, "two devices from 255 pass the client's 256");
    session.session_device_base(&mut cx, wire::DeviceBase { base: 3 }).expect("base 3");

    assert_eq!(session.get_device_count(&mut cx, wire::Empty {}).unwrap().count, 2, "the count stays the worker's");
    for other in [0, 2, 5] {
        let (code, message) = status(session.get_device_properties(&mut cx, wire::DeviceRef { device: other }));
        assert_eq!(code, Status::INVALID_DEVICE, "device {other}");
        assert!(message.contains("3..5"), "{message}");
    }
    session.get_device_properties(&mut cx, wire::DeviceRef { device: 4 }).expect("the worker's device 1");
    let ptr = session.malloc(&mut cx, wire::Malloc { device: 4, size: 4096, flags: 0 }).unwrap().ptr;
    assert_eq!(session.allocations.get(ptr).map(|a| a.device), Some(1), "client device 4 is the backend's device 1");

    let stream = session.stream_create(&mut cx, wire::StreamCreate { device: 4, flags: 0, priority: 0 }).unwrap().stream;
    assert_eq!(stream >> 40 & 0xff, 3, "the stream handle {stream:#x} carries the base");
    assert_eq!(session.stream_get_info(&mut cx, wire::StreamRef { stream }).unwrap().device, 4, "replies name the client's device");
    let event = session.event_create(&mut cx, wire::EventCreate { device: 3, flags: 0 }).unwrap().event;
    assert_eq!(event >> 40 & 0xff, 3, "the event handle {event:#x} carries the base");

    let (code, _) = status(session.session_device_base(&mut cx, wire::DeviceBase { base: 7 }));
    assert_eq!(code, Status::INVALID_VALUE, "no renumbering once the session holds memory");
    session.session_device_base(&mut cx, wire::DeviceBase { base: 3 }).expect("the same base again is harmless");
}

/// `SessionDeviceMap`: the session sees only the mapped devices, under the client's ordinals;
/// hidden devices and unmapped ordinals are refused; a malformed map is refused whole; the map
/// is fixed once the session holds anything.
#[test]
fn a_device_map_shows_only_the_visible_devices() {
    use proto_core::field::List;
    use proto_core::opcode::{DeviceHandler, SessionHandler};
    use zerocopy::byteorder::little_endian::U32;
    let backend = Arc::new(HostBackend::new(HostConfig { devices: 3, memory_per_device: 16 << 20, ..HostConfig::default() }));
    let mut session = Session::new(backend, Arc::new(SessionConfig::default()));
    let mut cx = CallCx::new(1, proto_core::Opcode::Ping, false, 0);
    let u32s = |values: &[u32]| values.iter().map(|&v| U32::new(v)).collect::<Vec<_>>();
    for (ordinals, devices, why) in [
        (&[0u32, 1][..], &[2u32][..], "lengths differ"),
        (&[0, 1], &[2, 2], "a device twice"),
        (&[1, 1], &[0, 2], "an ordinal twice"),
        (&[0], &[3], "no such device"),
        (&[256], &[0], "ordinal past the client's 256"),
    ] {
        let (o, d) = (u32s(ordinals), u32s(devices));
        let (code, _) = status(session.session_device_map(&mut cx, wire::DeviceMap { ordinals: List(&o), devices: List(&d) }));
        assert_eq!(code, Status::INVALID_VALUE, "{why}");
    }
    // The client's devices 4 and 7 are the worker's 2 and 0; its device 1 is hidden.
    let (o, d) = (u32s(&[7, 4]), u32s(&[0, 2]));
    session.session_device_map(&mut cx, wire::DeviceMap { ordinals: List(&o), devices: List(&d) }).expect("a valid map");
    assert_eq!(session.get_device_count(&mut cx, wire::Empty {}).unwrap().count, 2, "only the mapped devices count");
    for hidden in [0, 1, 2, 5] {
        let (code, _) = status(session.get_device_properties(&mut cx, wire::DeviceRef { device: hidden }));
        assert_eq!(code, Status::INVALID_DEVICE, "client ordinal {hidden} is not mapped");
    }
    assert_eq!(session.get_device_properties(&mut cx, wire::DeviceRef { device: 4 }).unwrap().pci_bus_id, 2, "ordinal 4 is device 2");
    let ptr = session.malloc(&mut cx, wire::Malloc { device: 7, size: 4096, flags: 0 }).unwrap().ptr;
    assert_eq!(session.allocations.get(ptr).map(|a| a.device), Some(0), "client device 7 is the backend's device 0");
    let stream = session.stream_create(&mut cx, wire::StreamCreate { device: 7, flags: 0, priority: 0 }).unwrap().stream;
    assert_eq!(stream >> 40 & 0xff, 4, "handles carry the smallest mapped ordinal");
    assert_eq!(session.stream_get_info(&mut cx, wire::StreamRef { stream }).unwrap().device, 7, "replies name the client's device");
    assert_eq!(session.client_device(1), HIDDEN_DEVICE, "a hidden device has no client ordinal");

    let (o, d) = (u32s(&[0]), u32s(&[1]));
    let (code, _) = status(session.session_device_map(&mut cx, wire::DeviceMap { ordinals: List(&o), devices: List(&d) }));
    assert_eq!(code, Status::INVALID_VALUE, "no new map once the session holds memory");
}

/// `RtcCompileStaged` of `names`, with no options or name expressions.
fn compile_staged<'a>(session: &'a mut Session, io: &mut CallCx, names: &'a str) -> Result<proto_core::Outcome<wire::RtcCompiled<'a>>, Failure> {
    let req = wire::RtcCompileStaged {
        device: 0,
        name: "big.hip".into(),
        header_names: StrList::from_packed(names).unwrap(),
        options: StrList::default(),
        name_expressions: StrList::default(),
    };
    session.rtc_compile_staged(io, req)
}

#[test]
fn staged_programs_are_bounded_and_checked() {
    use proto_core::limits::{MAX_RTC_HEADERS, MAX_RTC_STAGED_BYTES};
    let backend = Arc::new(HostBackend::new(HostConfig { memory_per_device: 16 << 20, allow_host_code: true, ..HostConfig::default() }));
    let mut session = Session::new(backend, Arc::new(SessionConfig::default()));
    let io = &mut CallCx::new(1, proto_core::Opcode::Ping, false, 0);
    let stage =
        |session: &mut Session, io: &mut CallCx, part: u32, text: &[u8]| status(session.rtc_stage(io, wire::RtcStage { part, text: Bulk(text) }));

    // A part beyond the source and MAX_RTC_HEADERS headers is refused.
    assert_eq!(stage(&mut session, io, MAX_RTC_HEADERS as u32 + 1, b"x").0, Status::INVALID_VALUE);
    // Pieces add up to MAX_RTC_STAGED_BYTES; one byte more is refused and drops the rest.
    let big = vec![b' '; MAX_RTC_STAGED_BYTES / 2];
    session.rtc_stage(io, wire::RtcStage { part: 0, text: Bulk(&big) }).unwrap();
    session.rtc_stage(io, wire::RtcStage { part: 1, text: Bulk(&big) }).unwrap();
    let (code, message) = stage(&mut session, io, 2, b"x");
    assert_eq!(code, Status::TOO_LARGE, "{message}");
    assert!(session.rtc_staged.is_empty(), "the staged text is dropped");
    // More staged headers than names; text that is not UTF-8: refused, and the stage is empty
    // afterwards either way.
    session.rtc_stage(io, wire::RtcStage { part: 2, text: Bulk(b"int x;") }).unwrap();
    let one = list(&["a.h"]);
    let (code, message) = status(compile_staged(&mut session, io, &one).map(|_| ()));
    assert_eq!(code, Status::INVALID_VALUE, "{message}");
    assert!(session.rtc_staged.is_empty());
    session.rtc_stage(io, wire::RtcStage { part: 1, text: Bulk(b"\xff\xfe") }).unwrap();
    let (code, message) = status(compile_staged(&mut session, io, &one).map(|_| ()));
    assert!(code == Status::INVALID_VALUE && message.contains("a.h"), "{message}");
    assert!(session.rtc_staged.is_empty());
}

#[test]
fn a_staged_program_beyond_one_frame_compiles_and_runs() {
    if !have_compiler() {
        return;
    }
    let backend = Arc::new(HostBackend::new(HostConfig { memory_per_device: 16 << 20, allow_host_code: true, ..HostConfig::default() }));
    let mut session = Session::new(backend.clone(), Arc::new(SessionConfig::default()));
    let io = &mut CallCx::new(1, proto_core::Opcode::Ping, false, 0);
    // 1.2 MB of source (more than MAX_TEXT_LEN and than a control part) in two pieces, the
    // kernel reading a constant from a staged header.
    let padding = format!("/*{}*/\n", "x".repeat(1_200_000));
    assert!(padding.len() > proto_core::limits::MAX_CONTROL_LEN);
    let source = format!("#include \"scale.h\"\n{padding}{SOURCE}\nextern \"C\" __global__ void scale(int* p) {{ p[threadIdx.x] *= SCALE; }}\n");
    let (first, second) = source.as_bytes().split_at(source.len() / 2);
    for piece in [first, second] {
        session.rtc_stage(io, wire::RtcStage { part: 0, text: Bulk(piece) }).unwrap();
    }
    session.rtc_stage(io, wire::RtcStage { part: 1, text: Bulk(b"#define SCALE 7\n") }).unwrap();
    let names = list(&["scale.h"]);
    let compiled = compile_staged(&mut session, io, &names).unwrap().into_reply().unwrap();
    assert!(compiled.success, "{}", compiled.log.as_str());
    let code = compiled.code.0.to_vec();
    let module = session
        .module_load(io, wire::ModuleLoad { device: 0, format: ModuleFormat::HostModule, origin: "big.hip".into(), image: Bulk(&code) })
        .unwrap()
        .module;
    let function = session.module_get_function(io, wire::SymbolLookup { module, name: "scale".into() }).unwrap().function;
    let n = 32usize;
    let ptr = session.malloc(io, wire::Malloc { device: 0, size: 4 * n as u64, flags: 0 }).unwrap().ptr;
    let values: Vec<i32> = (0..n as i32).collect();
    session.memcpy_htod(io, wire::MemcpyHtoD { dst: ptr, stream: 0, sync: true, data: Bulk(&bytes_of(&values)) }).unwrap();
    let args = ptr.to_le_bytes();
    let launch = wire::LaunchKernel { function, grid: [1, 1, 1], block: [n as u32, 1, 1], shared_mem: 0, stream: 0, args: args.as_slice().into() };
    session.launch_kernel(io, launch).unwrap();
    session.stream_synchronize(io, wire::StreamRef { stream: 0 }).unwrap();
    let mut out = vec![0u8; 4 * n];
    backend.memcpy_dtoh_sync(None, DevicePtr(ptr), &mut out).unwrap();
    let expected: Vec<i32> = values.iter().map(|v| v * 7).collect();
    assert_eq!(out, bytes_of(&expected));
}
