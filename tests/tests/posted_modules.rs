//! Module loads and function lookups without a round trip (`ModuleLoadAt`,
//! `ModuleGetFunctionAt`, with `CLIENT_ALLOCATION`), spoken to the worker's session directly:
//! a module loaded and a kernel looked up under handles the client chose, then launched, all
//! posted and checked by the data; a failed posted load deferred with the status a waiting
//! load of the same bytes answers; a missing kernel left unknown, its waiting lookup
//! answering `hipErrorNotFound`; handles outside the client's tags or already live refused.

mod common;

use common::{authenticate, config_with, SessionDriver, TestWorker};
use proto_core::wire::{self, ModuleFormat};
use proto_core::{Bulk, Flags, Request, Response, Status};

const TOKEN: &str = "posted-modules-token";
const SOURCE: &str = r#"extern "C" __global__ void add_one(int* p) { p[threadIdx.x] += 1; }"#;
const MODULE: u64 = wire::CLIENT_MODULE_TAG | 1;
const ADD_ONE: u64 = wire::CLIENT_FUNCTION_TAG | 2;
const MISSING: u64 = wire::CLIENT_FUNCTION_TAG | 3;

fn post(c: &mut SessionDriver, req: &Request<'_>) {
    c.send(req, Flags::NO_REPLY);
}

fn compiled(c: &mut SessionDriver) -> Vec<u8> {
    let compile = wire::RtcCompile { device: 0, name: "add_one.hip".into(), source: SOURCE.into(), ..Default::default() };
    // The compile takes long enough for the worker's heartbeats (request id 0) to come first.
    let id = c.send(&Request::RtcCompile(compile), Flags::empty());
    let reply = loop {
        let frame = c.recv();
        if frame.header.request_id == id {
            break frame;
        }
        assert_eq!(frame.header.request_id, 0, "only heartbeats come before the compile's reply: {:?}", frame.header);
    };
    match reply.response() {
        Response::RtcCompile(out) => {
            assert!(out.success, "compiled: {}", out.log.as_str());
            out.code.0.to_vec()
        }
        other => panic!("RtcCompile answered with {other:?}"),
    }
}

fn load_at<'a>(module: u64, image: &'a [u8]) -> Request<'a> {
    Request::ModuleLoadAt(wire::ModuleLoadAt { module, device: 0, format: ModuleFormat::Auto, origin: "add_one.hip".into(), image: Bulk(image) })
}

fn lookup_at(module: u64, function: u64, name: &str) -> Request<'_> {
    Request::ModuleGetFunctionAt(wire::FunctionAt { module, function, name: name.into() })
}

#[test]
fn a_module_loaded_and_looked_up_without_waiting_runs_its_kernel() {
    let worker = TestWorker::in_memory(config_with(Some(TOKEN)));
    let mut c = SessionDriver::connect(&worker);
    assert!(!authenticate(&mut c, TOKEN.as_bytes()).is_error(), "authenticated");
    let image = compiled(&mut c);
    let ptr = c.malloc(4 * 32);
    let data: Vec<u8> = (0..32i32).flat_map(|i| (i * 3).to_le_bytes()).collect();
    post(&mut c, &Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr, stream: 0, sync: false, data: Bulk(&data) }));
    // Load, lookups and launch in one burst, nothing waited for.
    post(&mut c, &load_at(MODULE, &image));
    post(&mut c, &lookup_at(MODULE, ADD_ONE, "add_one"));
    post(&mut c, &lookup_at(MODULE, MISSING, "no_such_kernel"));
    let args = ptr.to_le_bytes();
    let launch = wire::LaunchKernel { function: ADD_ONE, grid: [1, 1, 1], block: [32, 1, 1], shared_mem: 0, stream: 0, args: args[..].into() };
    post(&mut c, &Request::LaunchKernel(launch));
    let reply = c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr, len: 4 * 32, stream: 0 }));
    assert_eq!(reply.header.aux, 0, "every posted request succeeded, the missing kernel's lookup too");
    let Response::MemcpyDtoH(out) = reply.response() else { panic!("MemcpyDtoH reply") };
    let expected: Vec<u8> = (0..32i32).flat_map(|i| (i * 3 + 1).to_le_bytes()).collect();
    assert_eq!(out.data.0, &expected[..], "the kernel ran");

    // The layout, asked by name, comes under the client's handle.
    let reply = c.call(&Request::ModuleGetFunction(wire::SymbolLookup { module: MODULE, name: "add_one".into() }));
    let Response::ModuleGetFunction(info) = reply.response() else { panic!("ModuleGetFunction reply") };
    assert_eq!(info.function, ADD_ONE);
    assert_eq!(info.params.0.len(), 1);
    assert_eq!(info.params.0[0].size.get(), 8);
    // The missing kernel: its waiting lookup says so; its handle is unknown.
    let (status, _) = c.call(&Request::ModuleGetFunction(wire::SymbolLookup { module: MODULE, name: "no_such_kernel".into() })).error();
    assert_eq!(status, Status::NOT_FOUND);
    let missing = wire::LaunchKernel { function: MISSING, grid: [1, 1, 1], block: [1, 1, 1], shared_mem: 0, stream: 0, args: args[..].into() };
    post(&mut c, &Request::LaunchKernel(missing));
    assert_eq!(c.ping(1).header.aux, Status::INVALID_HANDLE.0, "a launch of the missing kernel's handle");

    // Handles outside the client's tags, or already live, are refused (deferred).
    post(&mut c, &load_at(wire::CLIENT_FUNCTION_TAG | 9, &image));
    assert_eq!(c.ping(2).header.aux, Status::INVALID_HANDLE.0, "a function-tagged module");
    post(&mut c, &load_at(MODULE, &image));
    assert_eq!(c.ping(3).header.aux, Status::INVALID_HANDLE.0, "a live module handle");
    post(&mut c, &lookup_at(MODULE, MODULE, "add_one"));
    assert_eq!(c.ping(4).header.aux, Status::INVALID_HANDLE.0, "a module-tagged function");
    post(&mut c, &lookup_at(MODULE, ADD_ONE, "add_one"));
    assert_eq!(c.ping(5).header.aux, Status::INVALID_HANDLE.0, "a live function handle");
    post(&mut c, &lookup_at(MODULE, wire::CLIENT_FUNCTION_TAG | 10, "add_one"));
    assert_eq!(c.ping(6).header.aux, Status::INVALID_VALUE.0, "a second handle for one kernel");

    // Unloaded, the module and its function are gone.
    c.call(&Request::ModuleUnload(wire::ModuleRef { module: MODULE }));
    let launch = wire::LaunchKernel { function: ADD_ONE, grid: [1, 1, 1], block: [32, 1, 1], shared_mem: 0, stream: 0, args: args[..].into() };
    post(&mut c, &Request::LaunchKernel(launch));
    assert_eq!(c.ping(7).header.aux, Status::INVALID_HANDLE.0, "a launch after the unload");
}

#[test]
fn a_failed_posted_load_is_deferred_with_the_loads_own_status() {
    let worker = TestWorker::in_memory(config_with(Some(TOKEN)));
    let mut c = SessionDriver::connect(&worker);
    assert!(!authenticate(&mut c, TOKEN.as_bytes()).is_error(), "authenticated");
    let garbage = vec![0x5au8; 4096];
    // The oracle: what a waiting load of the same bytes answers.
    let (waited, _) = c
        .call(&Request::ModuleLoad(wire::ModuleLoad { device: 0, format: ModuleFormat::Auto, origin: "garbage".into(), image: Bulk(&garbage) }))
        .error();
    assert_ne!(waited, Status::INVALID_HANDLE, "the load's own status is not the handle's");
    post(&mut c, &load_at(MODULE, &garbage));
    post(&mut c, &lookup_at(MODULE, ADD_ONE, "add_one"));
    assert_eq!(c.ping(1).header.aux, waited.0, "the first failure, the load's, is the one reported");
    let (status, _) = c.call(&Request::ModuleGetFunction(wire::SymbolLookup { module: MODULE, name: "add_one".into() })).error();
    assert_eq!(status, Status::INVALID_HANDLE, "the module never loaded");
}
