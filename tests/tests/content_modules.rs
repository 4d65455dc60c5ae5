//! Content-addressed module loads at the protocol level (`ModuleLoadByHash`,
//! `ModuleLoadKeep`): an image loaded once with its hash is found by the next session of the
//! same tenant, which loads it without sending it, and its functions work; a hash that does
//! not match the image, or a length that differs, is never found.

mod common;

use common::{authenticate, config_with, Client, TestWorker};
use proto_core::content::content_hash;
use proto_core::wire::{self, ModuleFormat};
use proto_core::{Bulk, Request, Response};

const TOKEN: &str = "content-modules-token";

const SOURCE: &str = r#"extern "C" __global__ void add_one(int* p) { p[threadIdx.x] += 1; }"#;

fn tenant_client(worker: &TestWorker) -> Client {
    let mut c = Client::connect(worker);
    assert!(!authenticate(&mut c, TOKEN.as_bytes()).is_error(), "authenticated");
    c
}

fn by_hash(c: &mut Client, len: usize, hash: &[u8]) -> wire::ModuleFoundByHash {
    let req = wire::ModuleLoadByHash { device: 0, format: ModuleFormat::Auto, origin: "add_one.hip".into(), len: len as u64, hash: hash.into() };
    match c.call(&Request::ModuleLoadByHash(req)).response() {
        Response::ModuleLoadByHash(found) => found,
        other => panic!("ModuleLoadByHash answered with {other:?}"),
    }
}

fn keep(c: &mut Client, image: &[u8], hash: &[u8]) -> u64 {
    let req = wire::ModuleLoadKeep { device: 0, format: ModuleFormat::Auto, origin: "add_one.hip".into(), hash: hash.into(), image: Bulk(image) };
    match c.call(&Request::ModuleLoadKeep(req)).response() {
        Response::ModuleLoadKeep(loaded) => loaded.module,
        other => panic!("ModuleLoadKeep answered with {other:?}"),
    }
}

fn has_function(c: &mut Client, module: u64) -> bool {
    !c.call(&Request::ModuleGetFunction(wire::SymbolLookup { module, name: "add_one".into() })).is_error()
}

#[test]
fn a_module_image_kept_once_is_loaded_by_hash_in_the_next_session_of_its_tenant() {
    let worker = TestWorker::in_memory(config_with(Some(TOKEN)));
    let mut first = tenant_client(&worker);
    let compile = wire::RtcCompile { device: 0, name: "add_one.hip".into(), source: SOURCE.into(), ..Default::default() };
    let image = match first.call(&Request::RtcCompile(compile)).response() {
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
