//! Copies between workers at the protocol level (`docs/PROTOCOL.md`, "Copies between
//! workers"): two in-process workers over TCP, a raw client on each, and a hostile peer that
//! presents forged, replayed and mismatched grants to the source worker. Each refusal is
//! `AUTH_FAILED` at once, the connection closes, and the worker goes on serving.

mod common;

use common::*;
use hip_worker::transfer::{DialPolicy, TransferHub};
use proto_core::wire::{self, TRANSFER_SECRET_LEN};
use proto_core::{Bulk, Flags, Request, Response, Status, PROTOCOL_VERSION};
use std::time::{Duration, Instant};

/// A worker whose sessions may dial `dial` (`--dial-workers`).
fn transfer_worker(dial: &[String]) -> TestWorker {
    let mut config = config_with(None);
    config.session.transfers = Some(TransferHub::direct(DialPolicy::new(dial.iter().cloned()).expect("a dial policy")));
    TestWorker::tcp(config)
}

fn addr(worker: &TestWorker) -> String {
    worker.tcp.as_ref().expect("a TCP worker").local_addr().to_string()
}

/// A greeted client and its session id.
fn session(worker: &TestWorker) -> (SessionDriver, u64) {
    let mut c = SessionDriver::connect(worker);
    let reply = c.call(&hello(PROTOCOL_VERSION, PROTOCOL_VERSION, ""));
    let id = match reply.response() {
        Response::Hello(w) => w.session_id,
        other => panic!("HELLO answered with {other:?}"),
    };
    (c, id)
}

fn upload(c: &mut SessionDriver, data: &[u8]) -> u64 {
    let ptr = c.malloc(data.len() as u64);
    let r = c.call(&Request::MemcpyHtoD(wire::MemcpyHtoD { dst: ptr, stream: 0, sync: true, data: Bulk(data) }));
    assert!(matches!(r.response(), Response::MemcpyHtoD(_)));
    ptr
}

fn download(c: &mut SessionDriver, ptr: u64, len: usize) -> Vec<u8> {
    match c.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr, len: len as u64, stream: 0 })).response() {
        Response::MemcpyDtoH(d) => d.data.0.to_vec(),
        other => panic!("MemcpyDtoH answered with {other:?}"),
    }
}

fn offer(c: &mut SessionDriver, grant_id: u64, secret: &[u8], src: u64, len: u64) {
    let offer = wire::TransferOffer { grant_id, secret: proto_core::field::Bytes(secret), src, len, stream: 0 };
    c.send(&Request::TransferOffer(offer), Flags::NO_REPLY);
}

/// A hostile peer's fetch on a fresh connection to `worker`: the worker's answer, then the
/// connection must be closed.
fn fetch(worker: &TestWorker, session_id: u64, grant_id: u64, secret: &[u8], len: u64) -> Reply {
    let mut peer = SessionDriver::connect(worker);
    let req = wire::TransferFetch { session_id, grant_id, secret: proto_core::field::Bytes(secret), len };
    let reply = peer.call(&Request::TransferFetch(req));
    peer.expect_closed();
    reply
}

fn refused(reply: &Reply) -> String {
    let (status, message) = reply.error();
    assert_eq!(status, Status::AUTH_FAILED, "{message}");
    message
}

const SECRET: [u8; TRANSFER_SECRET_LEN] = [0x5c; TRANSFER_SECRET_LEN];

#[test]
fn forged_replayed_and_mismatched_grants_are_refused_and_the_worker_serves_on() {
    let source = transfer_worker(&[]);
    let (mut owner, session_id) = session(&source);
    let data: Vec<u8> = (0..50_000u32).map(|i| (i * 7) as u8).collect();
    let src = upload(&mut owner, &data);
    offer(&mut owner, 1, &SECRET, src, data.len() as u64);
    owner.ping(1);

    let started = Instant::now();
    let mut forged = SECRET;
    forged[0] ^= 0xff;
    let message = refused(&fetch(&source, session_id, 1, &forged, data.len() as u64));
    assert!(message.contains("transfer grant refused"), "{message}");
    refused(&fetch(&source, session_id, 1, &SECRET, data.len() as u64 - 1));
    refused(&fetch(&source, session_id, 1, &SECRET[..16], data.len() as u64));
    // The genuine fetch, once.
    let genuine = fetch(&source, session_id, 1, &SECRET, data.len() as u64);
    match genuine.response() {
        Response::TransferFetch(d) => assert!(d.data.0 == data.as_slice(), "fetched bytes differ"),
        other => panic!("TransferFetch answered with {other:?}"),
    }
    // Replayed: refused at once, not after waiting for an offer.
    refused(&fetch(&source, session_id, 1, &SECRET, data.len() as u64));
    // A forged secret for a live grant: refused, and the grant stays for its genuine fetch.
    offer(&mut owner, 2, &SECRET, src, 16);
    owner.ping(2);
    refused(&fetch(&source, session_id, 2, &forged, 16));
    assert!(started.elapsed() < Duration::from_secs(10), "refusals took {:?}", started.elapsed());

    // A fetch is a connection's first request only: after HELLO it is refused.
    let (mut greeted, _) = session(&source);
    let req = wire::TransferFetch { session_id, grant_id: 2, secret: proto_core::field::Bytes(&SECRET), len: 16 };
    let reply = greeted.call(&Request::TransferFetch(req));
    assert!(reply.is_error(), "a fetch after HELLO was answered");

    // An offer the session cannot make: memory it does not hold, a short secret.
    let r = owner.call(&Request::TransferOffer(wire::TransferOffer {
        grant_id: 3,
        secret: proto_core::field::Bytes(&SECRET),
        src: 0x10,
        len: 16,
        stream: 0,
    }));
    assert!(r.is_error());
    let r = owner.call(&Request::TransferOffer(wire::TransferOffer {
        grant_id: 4,
        secret: proto_core::field::Bytes(&SECRET[..8]),
        src,
        len: 16,
        stream: 0,
    }));
    assert_eq!(r.error().0, Status::INVALID_VALUE);

    // The worker serves on: the owner and a new client.
    owner.round_trip(3);
    let (mut other, _) = session(&source);
    other.round_trip(4);
    drop((owner, other, greeted));
    source.shutdown();
}

#[test]
fn a_pull_fetches_from_the_source_worker_and_refuses_a_replay() {
    let source = transfer_worker(&[]);
    let destination = transfer_worker(&[addr(&source)]);
    let (mut on_source, session_id) = session(&source);
    let (mut on_destination, _) = session(&destination);
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    let src = upload(&mut on_source, &data);
    let dst = on_destination.malloc(data.len() as u64);
    offer(&mut on_source, 7, &SECRET, src, data.len() as u64);
    on_source.ping(1);
    let source_addr = addr(&source);
    let pull = |grant_id| wire::TransferPull {
        grant_id,
        secret: proto_core::field::Bytes(&SECRET),
        source_session: session_id,
        source: proto_core::field::Str(&source_addr),
        dst,
        len: data.len() as u64,
        stream: 0,
        sync: true,
    };
    let r = on_destination.call(&Request::TransferPull(pull(7)));
    assert!(matches!(r.response(), Response::TransferPull(_)));
    assert!(download(&mut on_destination, dst, data.len()) == data, "pulled bytes differ");
    // The same grant again: the source refuses it, the destination reports it.
    let r = on_destination.call(&Request::TransferPull(pull(7)));
    let (status, message) = r.error();
    assert_eq!(status, Status::INVALID_VALUE, "{message}");
    assert!(message.contains("refused the transfer"), "{message}");
    // A source that may not be dialled by the source itself (no --dial-workers) refuses to pull.
    let r = on_source.call(&Request::TransferPull(pull(8)));
    let (status, message) = r.error();
    assert_eq!(status, Status::NOT_SUPPORTED, "{message}");
    assert!(message.contains("--dial-workers"), "{message}");
    // A source the destination's --dial-workers does not name: refused before any connect.
    let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let elsewhere_addr = elsewhere.local_addr().unwrap().to_string();
    let mut unlisted = pull(9);
    unlisted.source = proto_core::field::Str(&elsewhere_addr);
    let r = on_destination.call(&Request::TransferPull(unlisted));
    let (status, message) = r.error();
    assert_eq!(status, Status::NOT_SUPPORTED, "{message}");
    assert!(message.contains("--dial-workers") && message.contains(&source_addr), "{message}");
    elsewhere.set_nonblocking(true).unwrap();
    assert!(elsewhere.accept().is_err(), "the unlisted address was dialled");
    on_destination.round_trip(5);
    on_source.round_trip(6);
    drop((on_source, on_destination));
    source.shutdown();
    destination.shutdown();
}
