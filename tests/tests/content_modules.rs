//! Content-addressed module loads at the protocol level (`ModuleLoadByHash`,
//! `ModuleLoadKeep`): an image loaded once with its hash is found by the next session of the
//! same tenant, which loads it without sending it, and its functions work; a hash that does
//! not match the image, or a length that differs, is never found.

mod common;

use common::{authenticate, config_with, SessionDriver, TestWorker};
use proto_core::content::content_hash;
use proto_core::wire::{self, ModuleFormat};
use proto_core::{Bulk, Flags, Request, Response};

const TOKEN: &str = "content-modules-token";

const SOURCE: &str = r#"extern "C" __global__ void add_one(int* p) { p[threadIdx.x] += 1; }"#;

fn tenant_client(worker: &TestWorker) -> SessionDriver {
    let mut c = SessionDriver::connect(worker);
    assert!(!authenticate(&mut c, TOKEN.as_bytes()).is_error(), "authenticated");
    c
}

fn by_hash(c: &mut SessionDriver, len: usize, hash: &[u8]) -> wire::ModuleFoundByHash {
    let req = wire::ModuleLoadByHash { device: 0, format: ModuleFormat::Auto, origin: "add_one.hip".into(), len: len as u64, hash: hash.into() };
    match c.call(&Request::ModuleLoadByHash(req)).response() {
        Response::ModuleLoadByHash(found) => found,
        other => panic!("ModuleLoadByHash answered with {other:?}"),
    }
}

fn keep(c: &mut SessionDriver, image: &[u8], hash: &[u8]) -> u64 {
    let req = wire::ModuleLoadKeep { device: 0, format: ModuleFormat::Auto, origin: "add_one.hip".into(), hash: hash.into(), image: Bulk(image) };
    match c.call(&Request::ModuleLoadKeep(req)).response() {
        Response::ModuleLoadKeep(loaded) => loaded.module,
        other => panic!("ModuleLoadKeep answered with {other:?}"),
    }
}

fn has_function(c: &mut SessionDriver, module: u64) -> bool {
    !c.call(&Request::ModuleGetFunction(wire::SymbolLookup { module, name: "add_one".into() })).is_error()
}

#[test]
fn a_module_image_kept_once_is_loaded_by_hash_in_the_next_session_of_its_tenant() {
    let worker = TestWorker::in_memory(config_with(Some(TOKEN)));
    let mut first = tenant_client(&worker);
    let compile = wire::RtcCompile { device: 0, name: "add_one.hip".into(), source: SOURCE.into(), ..Default::default() };
    // The compile takes long enough for the worker's heartbeats (request id 0) to come first.
    let id = first.send(&Request::RtcCompile(compile), Flags::empty());
    let reply = loop {
        let frame = first.recv();
        if frame.header.request_id == id {
            break frame;
        }
        assert_eq!(frame.header.request_id, 0, "only heartbeats come before the compile's reply: {:?}", frame.header);
    };
    let image = match reply.response() {
        Response::RtcCompile(out) => {
            assert!(out.success, "compiled: {}", out.log.as_str());
            out.code.0.to_vec()
        }
        other => panic!("RtcCompile answered with {other:?}"),
    };
    let hash = content_hash(&image);

    assert!(!by_hash(&mut first, image.len(), &hash).found, "nothing kept yet");
    // Kept under a hash it does not have: loaded, not kept.
    let wrong = content_hash(b"other bytes");
    let module = keep(&mut first, &image, &wrong);
    assert!(has_function(&mut first, module));
    assert!(!by_hash(&mut first, image.len(), &wrong).found, "an image is kept only under its own hash");
    // Kept under its hash.
    let module = keep(&mut first, &image, &hash);
    assert!(has_function(&mut first, module));
    drop(first);

    // The tenant's next session (a program run again) finds it: loaded without the bytes.
    let mut second = tenant_client(&worker);
    let found = by_hash(&mut second, image.len(), &hash);
    assert!(found.found && found.module != 0, "{found:?}");
    assert!(has_function(&mut second, found.module), "the module loaded by hash has its function");
    assert!(!by_hash(&mut second, image.len() + 1, &hash).found, "a length that differs is not the same content");
}

/// The client's side, end to end: a program loads a module image of over 1 MiB twice (its
/// kernel run and checked each time) with the content store on. The first load names the image
/// by hash, misses and sends it with `ModuleLoadKeep`; the second loads it by hash alone.
/// Counted in the program's `HIP_REMOTE_PROFILE=1` table.
#[test]
fn a_large_module_loaded_again_goes_by_hash() {
    use hip_remote_tests::{client_command, run_with_timeout, Sandbox, RUN_TIMEOUT};
    let sandbox = Sandbox::new("module_by_hash");
    let exe = sandbox.compile("module_by_hash");
    let mut worker = sandbox.start_worker();
    let mut cmd = client_command(&exe, worker.addr());
    cmd.env("HIP_REMOTE_CONTENT_STORE", "on").env("HIP_REMOTE_PROFILE", "1");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS module_by_hash"), "{}", out.report());
    let waits = |opcode: &str| -> u64 {
        out.stderr
            .lines()
            .filter_map(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                (cells.len() >= 3 && cells[0] == "hipModuleLoadData" && cells[1] == opcode).then(|| cells[2].parse::<u64>().unwrap_or(0))
            })
            .sum()
    };
    assert_eq!(waits("ModuleLoadByHash"), 2, "both loads name the image first: {}", out.report());
    assert_eq!(waits("ModuleLoadKeep"), 1, "only the first sends it: {}", out.report());
    assert_eq!(waits("ModuleLoad"), 0, "no plain load: {}", out.report());
    worker.assert_alive();
}
