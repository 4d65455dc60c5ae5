//! Sessions that outlive their connection, end to end: a C program through the drop-in
//! `libamdhip64` talks to a host-backend worker through a relay that cuts every connection
//! on command (in the middle of an upload, a download, a storm of posted operations and a
//! synchronize); the library resumes the session each time and the program's results match
//! the host's. A cut longer than the worker's grace period gives the lost connection's
//! `hipErrorNotInitialized`, not a hang.

use hip_remote_tests::{client_command, Interactive, Sandbox};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which way bytes go through the relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    ToWorker,
    ToClient,
}

#[derive(Default)]
struct RelayState {
    /// Both sockets of every relayed connection.
    links: Mutex<Vec<(TcpStream, TcpStream)>>,
    /// Cut every connection once this many more bytes have gone this way.
    armed: Mutex<Option<(Way, usize)>>,
    /// Until then, new connections are closed at once (the network is down).
    down_until: Mutex<Option<Instant>>,
    cuts: AtomicUsize,
}

impl RelayState {
    /// How many of `n` bytes going `way` pass, and whether the link is cut after them.
    fn budget(&self, way: Way, n: usize) -> (usize, bool) {
        let mut armed = self.armed.lock().unwrap();
        match *armed {
            Some((w, left)) if w == way && n >= left => {
                *armed = None;
                (left, true)
            }
            Some((w, left)) if w == way => {
                *armed = Some((w, left - n));
                (n, false)
            }
            _ => (n, false),
        }
    }

    fn cut_all(&self) {
        // Counted first: the client may resume and go on before the loop below ends.
        self.cuts.fetch_add(1, Ordering::SeqCst);
        for (client, worker) in self.links.lock().unwrap().drain(..) {
            let _ = client.shutdown(Shutdown::Both);
            let _ = worker.shutdown(Shutdown::Both);
        }
    }
}

/// A test-only TCP relay in front of a worker that cuts all its connections on command.
struct Relay {
    addr: String,
    state: Arc<RelayState>,
}

impl Relay {
    fn start(worker: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
        let addr = listener.local_addr().unwrap().to_string();
        let state = Arc::new(RelayState::default());
        let (worker, accept_state) = (worker.to_string(), Arc::clone(&state));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let down = accept_state.down_until.lock().unwrap().is_some_and(|t| Instant::now() < t);
                if down {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(upstream) = TcpStream::connect(&worker) else { continue };
                let _ = (client.set_nodelay(true), upstream.set_nodelay(true));
                let pair = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
                accept_state.links.lock().unwrap().push(pair);
                for (from, to, way) in
                    [(client.try_clone().unwrap(), upstream.try_clone().unwrap(), Way::ToWorker), (upstream, client, Way::ToClient)]
                {
                    let state = Arc::clone(&accept_state);
                    std::thread::spawn(move || pump(from, to, way, &state));
                }
            }
        });
        Self { addr, state }
    }

    /// Cuts every connection once `bytes` more bytes have gone `way` (in the middle of a
    /// frame, as a network does).
    fn cut_after(&self, way: Way, bytes: usize) {
        *self.state.armed.lock().unwrap() = Some((way, bytes));
    }

    /// New connections are closed at once for `down` from now.
    fn down_for(&self, down: Duration) {
        *self.state.down_until.lock().unwrap() = Some(Instant::now() + down);
    }

    fn cuts(&self) -> usize {
        self.state.cuts.load(Ordering::SeqCst)
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream, way: Way, state: &RelayState) {
    let mut buf = vec![0; 64 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => {
                let _ = to.shutdown(Shutdown::Write);
                return;
            }
            Ok(n) => n,
        };
        let (pass, cut) = state.budget(way, n);
        if to.write_all(&buf[..pass]).is_err() {
            return;
        }
        if cut {
            state.cut_all();
            return;
        }
    }
}

/// The relay cuts every connection in the middle of each phase of `resume_cut.c`: the
/// library resumes the session each time, and the program's checks of every result pass.
#[test]
fn cuts_mid_upload_download_storm_and_synchronize_are_resumed() {
    let sandbox = Sandbox::new("resume_cut");
    let exe = sandbox.compile("resume_cut");
    let mut worker = sandbox.start_worker_in_one_process_args(&["--resume-grace-s".into(), "30".into()]);
    let relay = Relay::start(worker.addr());
    let mut cmd = client_command(&exe, &relay.addr);
    // Striped copies are not resumed (docs/CLIENT.md, "Resume"): the plain connection here.
    cmd.env("HIP_REMOTE_STRIPES", "0");
    let mut client = Interactive::spawn(cmd);
    let phases =
        [("upload", Way::ToWorker, 6 << 20), ("download", Way::ToClient, 6 << 20), ("storm", Way::ToWorker, 100 << 10), ("sync", Way::ToClient, 1)];
    for (i, (phase, way, bytes)) in phases.into_iter().enumerate() {
        client.expect_line(&format!("PHASE {phase}"), Duration::from_secs(120));
        assert_eq!(relay.cuts(), i, "one cut per phase before {phase}");
        relay.cut_after(way, bytes);
        client.send_line("go");
    }
    let out = client.finish(Duration::from_secs(180));
    out.assert_success();
    assert!(out.stdout.contains("PASS resume_cut"), "no PASS line: {}", out.report());
    assert_eq!(relay.cuts(), phases.len(), "every phase was cut: {}", out.report());
    let resumed = out.stderr.matches("session resumed on a new connection").count();
    assert_eq!(resumed, phases.len(), "one resume per cut: {}", out.report());
    worker.assert_alive();
    let log = worker.log_text();
    assert_eq!(log.matches("session resumed on a new connection").count(), phases.len(), "the worker resumed each time:\n{log}");
}

/// A cut that outlasts the worker's grace period (1 s; the network stays down 4 s): the
/// worker has freed the session, the library reports the lost connection
/// (`hipErrorNotInitialized`) on the upload or the next call, and never hangs.
#[test]
fn a_cut_longer_than_the_grace_period_fails_with_hip_error_not_initialized() {
    let sandbox = Sandbox::new("resume_cut_lost");
    let exe = sandbox.compile("resume_cut");
    let mut worker = sandbox.start_worker_in_one_process_args(&["--resume-grace-s".into(), "1".into()]);
    let relay = Relay::start(worker.addr());
    let mut cmd = client_command(&exe, &relay.addr);
    cmd.env("HIP_REMOTE_STRIPES", "0").arg("lost");
    let mut client = Interactive::spawn(cmd);
    client.expect_line("PHASE upload", Duration::from_secs(120));
    relay.down_for(Duration::from_secs(4));
    relay.cut_after(Way::ToWorker, 6 << 20);
    let started = Instant::now();
    client.send_line("go");
    let out = client.finish(Duration::from_secs(120));
    out.assert_success();
    assert!(out.stdout.contains("LOST hipErrorNotInitialized"), "no LOST line: {}", out.report());
    assert!(out.stderr.contains("could not be resumed"), "the reason is on stderr: {}", out.report());
    assert!(started.elapsed() < Duration::from_secs(60), "failed after {:?}", started.elapsed());
    assert_eq!(relay.cuts(), 1);
    worker.assert_alive();
    assert!(worker.log_text().contains("not resumed within the grace period"), "the worker freed the session:\n{}", worker.log_text());
}
