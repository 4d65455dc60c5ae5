//! TLS's cost on the TCP transport: the same loopback exchanges through `TcpSink`/`TcpSource`
//! (plain) and `TlsSink`/`TlsSource` (rustls, ring, TLS 1.3 AES-GCM): a 64-byte round trip
//! (ping echoed by a second thread) and a 256 MiB copy (in 4 MiB frames as the client library
//! sends it, each placed by the receiver in its buffer and answered by a small frame). Figures: `docs/BENCHMARKS.md`.
//!
//! `cargo bench -p hip-remote-benches --bench tls_cost -- --warm-up-time 1 --measurement-time 5`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hip_remote_benches::{memcpy_htod_request, ping_frame};
use proto_core::Flags;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;
use transport_core::{FrameSink, FrameSource};
use transport_tcp::tcp::{connect, listen, split};
use transport_tcp::tls::{self, TlsClient};
use transport_tcp::TcpConfig;

const COPY_BYTES: usize = 256 << 20;

type Halves = (Box<dyn FrameSink>, Box<dyn FrameSource>);

/// A CA and a certificate for 127.0.0.1 in a fresh directory.
fn certificates() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hip-tls-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ca_key = rcgen::KeyPair::generate().expect("key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("CA");
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("params").signed_by(&key, &ca, &ca_key).expect("cert");
    std::fs::write(dir.join("ca.pem"), ca.pem()).expect("write");
    std::fs::write(dir.join("worker.pem"), cert.pem()).expect("write");
    std::fs::write(dir.join("worker.key"), key.serialize_pem()).expect("write");
    dir
}

/// A connected pair over loopback, TLS when `pki` is given: (client, server).
fn pair(pki: Option<&Path>) -> (Halves, Halves) {
    let config = TcpConfig::default();
    let listener: TcpListener = listen("127.0.0.1:0").expect("listen");
    let addr = listener.local_addr().expect("address").to_string();
    match pki {
        None => {
            let server = std::thread::spawn(move || split(listener.accept().expect("accept").0, &config).expect("split"));
            let (tx, rx) = connect(&addr, &config).expect("connect");
            let (stx, srx) = server.join().expect("server");
            ((Box::new(tx), Box::new(rx)), (Box::new(stx), Box::new(srx)))
        }
        Some(dir) => {
            let server_tls = tls::server_config(&dir.join("worker.pem"), &dir.join("worker.key"), None).expect("server config");
            let server = std::thread::spawn(move || {
                tls::accept(listener.accept().expect("accept").0, &config, &server_tls, Duration::from_secs(5)).expect("handshake")
            });
            let client = TlsClient::new(Some(&dir.join("ca.pem")), None, None).expect("client config");
            let (tx, rx) = tls::connect(&addr, &config, &client).expect("connect");
            let (stx, srx) = server.join().expect("server");
            ((Box::new(tx), Box::new(rx)), (Box::new(stx), Box::new(srx)))
        }
    }
}

/// Answers every frame with a ping after placing its bulk in a buffer, until the peer goes.
fn echo((mut tx, mut rx): Halves) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut landing = vec![0u8; COPY_BYTES];
        while let Ok(head) = rx.recv_head() {
            let id = head.header.request_id;
            let bulk = rx.bulk_remaining();
            if rx.recv_bulk(&mut landing[..bulk]).is_err() || tx.send(&ping_frame(id), &[]).is_err() {
                break;
            }
        }
    })
}

fn tls_cost(c: &mut Criterion) {
    let dir = certificates();
    let mut g = c.benchmark_group("round_trip_64B");
    g.throughput(Throughput::Elements(1));
    for (name, pki) in [("plain", None), ("tls", Some(dir.as_path()))] {
        let ((mut tx, mut rx), server) = pair(pki);
        let echoing = echo(server);
        let frame = ping_frame(1);
        g.bench_function(name, |b| {
            b.iter(|| {
                tx.send(&frame, &[]).expect("send");
                rx.recv_head().expect("echo");
            })
        });
        drop((tx, rx));
        echoing.join().expect("echo thread");
    }
    g.finish();

    let mut g = c.benchmark_group("copy_256MiB");
    g.throughput(Throughput::Bytes(COPY_BYTES as u64)).sample_size(10);
    let data: Vec<u8> = (0..COPY_BYTES).map(|i| (i * 31) as u8).collect();
    let chunk = proto_core::limits::DEFAULT_COPY_CHUNK;
    let mut head = vec![0u8; 256];
    let head_len = memcpy_htod_request(&data[..chunk]).encode_frame(&mut head, Flags::empty(), 2).expect("encode").head_len;
    for (name, pki) in [("plain", None), ("tls", Some(dir.as_path()))] {
        let ((mut tx, mut rx), server) = pair(pki);
        let echoing = echo(server);
        g.bench_function(name, |b| {
            b.iter(|| {
                for part in data.chunks(chunk) {
                    tx.send(&head[..head_len], part).expect("send");
                }
                for _ in data.chunks(chunk) {
                    rx.recv_head().expect("ack");
                }
            })
        });
        drop((tx, rx));
        echoing.join().expect("echo thread");
    }
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, tls_cost);
criterion_main!(benches);
