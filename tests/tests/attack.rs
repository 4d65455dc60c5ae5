//! The attack suite: a hostile or broken peer against the worker, and a broken worker
//! against the library. Every scenario runs while a well-behaved client ("bystander") stays
//! connected, and ends by checking that the worker still serves it and has freed everything
//! the scenario held (device memory back to where it was).
//!
//! The tests live in `mod attack`, so `scripts/test.sh` runs them as a check of their own
//! (`cargo test --test attack`). Attacks on one part of the protocol sit with that part's
//! tests as well: `session.rs` (pre-authentication bulk and its memory, hostile header
//! lengths, connection floods, the pre-authentication deadline, unread device-to-host
//! replies), `c_programs.rs` (a client killed mid-copy, another session's pointers), the
//! `fuzz/` targets (frames, messages, RDMA peers).

mod common;

mod attack {
    use super::common::*;
    use hip_remote_tests::{Sandbox, WorkerProcess};
    use proto_core::wire;
    use proto_core::{Bulk, Flags, Opcode, Request, Status};
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    use transport_core::TransportError;

    /// Control parts no well-behaved client sends: empty, one byte, all ones (every length
    /// field maximal), and pseudo-random bytes of several lengths.
    fn hostile_control_parts() -> Vec<Vec<u8>> {
        let mut parts = vec![Vec::new(), vec![1], vec![0xff; 64], vec![0; 3]];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for len in [7usize, 16, 40, 200] {
            parts.push(
                (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        state as u8
                    })
                    .collect(),
            );
        }
        parts
    }

    /// Reads the frame answering `id`, passing over the worker's heartbeats (unsolicited
    /// PONGs with request id 0, sent while a request takes long).
    fn reply_to(c: &mut Client, id: u64) -> Reply {
        loop {
            let reply = c.recv();
            if reply.header.request_id == 0 && reply.header.opcode == Opcode::Ping.raw() {
                continue;
            }
            assert_eq!(reply.header.request_id, id, "reply to another request: {:?}", reply.header);
            return reply;
        }
    }

    /// Every opcode in the table, with every hostile control part, on an authenticated
    /// session: each frame gets exactly one answer (an error, or a response where the bytes
    /// happen to decode to a valid request), and the session keeps serving after each.
    #[test]
    fn malformed_frames_for_every_opcode() {
        with_bystander(|worker| {
            let mut c = Client::greeted(worker);
            let mut answered_with_error = 0;
            for &opcode in Opcode::ALL {
                if opcode == Opcode::Goodbye {
                    // Ends the session by design, whatever its (empty) control part says.
                    continue;
                }
                for (i, control) in hostile_control_parts().iter().enumerate() {
                    let id = 1_000 + i as u64;
                    let head = raw_header(opcode.raw(), Flags::empty(), id, control.len() as u32, 0);
                    c.send_raw(&[&head[..], control].concat());
                    let reply = reply_to(&mut c, id);
                    assert_eq!(reply.header.opcode, opcode.raw(), "answer with another opcode: {:?}", reply.header);
                    if reply.is_error() {
                        let (status, message) = reply.error();
                        assert_ne!(status, Status::SUCCESS, "{opcode}: error frame with SUCCESS");
                        assert!(!message.is_empty(), "{opcode}: error without a message");
                        answered_with_error += 1;
                    }
                }
                c.ping(opcode.raw().into());
            }
            assert!(answered_with_error > Opcode::ALL.len() * 4, "only {answered_with_error} hostile frames were refused");
            c.round_trip(3);
        });
    }

    /// A frame whose bulk section is shorter than its header says, then the connection
    /// closes (a client killed mid-upload); and a download nobody reads. Both sessions'
    /// memory comes back and the bystander is served.
    #[test]
    fn client_killed_mid_transfer_frees_everything() {
        const BYTES: u32 = 32 << 20;
        with_bystander_on(TestWorker::tcp(config_with(None)), |worker| {
            let mut uploader = Client::greeted(worker);
            let dst = uploader.malloc(BYTES.into());
            let part = vec![0x5a; 4 << 20];
            let request = Request::MemcpyHtoD(wire::MemcpyHtoD { dst, stream: 0, sync: true, data: Bulk(&part) });
            let mut buf = vec![0; 4096];
            let frame = request.encode_frame(&mut buf, Flags::empty(), 7).expect("encode");
            let control = &buf[proto_core::header::HEADER_LEN..frame.head_len];
            // The header announces the whole 32 MiB; only 4 MiB follow before the end.
            let head = raw_header(Opcode::MemcpyHtoD.raw(), Flags::empty(), 7, control.len() as u32, BYTES);
            uploader.sink.send(&[&head[..], control].concat(), &part).expect("send the first part");
            drop(uploader);

            let mut downloader = Client::greeted(worker);
            let src = downloader.malloc(BYTES.into());
            downloader.send(&Request::MemcpyDtoH(wire::MemcpyDtoH { src, len: BYTES.into(), stream: 0 }), Flags::empty());
            drop(downloader);
        });
    }

    /// A client that sends its HELLO one byte at a time is closed when the pre-authentication
    /// deadline passes, counted from the connection, not reset by each byte.
    #[test]
    fn trickling_handshake_is_closed_at_the_deadline() {
        const DEADLINE: Duration = Duration::from_millis(400);
        // Without tokens too, a connection is trusted only once its HELLO is complete.
        let mut config = config_with(None);
        config.limits.preauth_deadline = DEADLINE;
        with_bystander_on(TestWorker::tcp(config), |worker| {
            let mut c = Client::connect(worker);
            let mut buf = vec![0; 512];
            let frame = hello(1, 1, "").encode_frame(&mut buf, Flags::empty(), 1).expect("encode HELLO");
            let started = Instant::now();
            let mut closed_after = None;
            for &byte in &buf[..frame.head_len - 1] {
                if c.sink.send(&[byte], &[]).is_err() {
                    closed_after = Some(started.elapsed());
                    break;
                }
                std::thread::sleep(Duration::from_millis(40));
            }
            let closed_after = closed_after.unwrap_or_else(|| {
                match c.try_recv() {
                    Err(TransportError::Closed) | Err(TransportError::Io(_)) => {}
                    other => panic!("a trickling client was answered: {other:?}"),
                }
                started.elapsed()
            });
            assert!(closed_after < DEADLINE * 5, "a trickling client was closed only after {closed_after:?}");
        });
    }

    /// Idle connections fill the worker's connection limit: further clients get an error
    /// frame at once (not a bare reset), and once the idle ones pass the pre-authentication
    /// deadline a client authenticates and is served; the idle ones find their connection
    /// closed.
    #[test]
    fn idle_connections_cannot_lock_everyone_out() {
        const LIMIT: usize = 8;
        let mut config = config_with(Some("sesame"));
        config.limits.max_connections = LIMIT + 1; // the bystander's and LIMIT idle ones
        config.limits.preauth_deadline = Duration::from_millis(300);
        let worker = TestWorker::tcp(config);
        let mut bystander = Client::connect(&worker);
        let reply = authenticate(&mut bystander, b"sesame");
        assert!(!reply.is_error(), "AUTHENTICATE refused: {:?}", reply.error());
        let mut idle: Vec<Client> = (0..LIMIT).map(|_| Client::connect(&worker)).collect();
        bystander.ping(1);
        let mut refused = Client::connect(&worker);
        let (status, message) = refused.recv().error();
        assert_eq!(status, Status::TOO_MANY_CONNECTIONS, "{message}");
        let mut admitted = None;
        let started = Instant::now();
        while admitted.is_none() && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
            let mut c = Client::connect(&worker);
            c.send(&hello(1, 1, ""), Flags::empty());
            if !c.recv().is_error() {
                admitted = Some(c);
            }
        }
        assert!(admitted.is_some(), "no client got in after the idle connections' deadline");
        for c in &mut idle {
            c.expect_closed();
        }
        bystander.round_trip(4);
        drop(bystander);
        worker.shutdown();
    }

    /// A worker that freezes (stopped, its sockets still open) while a program is connected:
    /// the program's next call fails within the liveness timeout instead of hanging for the
    /// I/O timeout; once the worker runs again, it serves a new program.
    #[test]
    fn frozen_worker_is_given_up_within_the_liveness_timeout() {
        const LIVENESS_SECONDS: u64 = 3;
        let sandbox = Sandbox::new("frozen_worker");
        let exe = sandbox.compile("frozen_worker");
        let mut worker = sandbox.start_worker();
        let mut cmd = worker.command(&exe);
        cmd.env("HIP_REMOTE_LIVENESS_TIMEOUT", LIVENESS_SECONDS.to_string()).env("HIP_REMOTE_HEARTBEAT", "0.5");
        let mut program = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start the program");
        let mut stdout = BufReader::new(program.stdout.take().expect("stdout"));
        let mut line = String::new();
        while !line.contains("ready") {
            line.clear();
            assert!(stdout.read_line(&mut line).expect("read the program's output") > 0, "the program ended before it was ready");
        }
        let frozen = Frozen::stop(worker.pid());
        let started = Instant::now();
        program.stdin.take().expect("stdin").write_all(b"go\n").expect("tell the program to go on");
        let status = loop {
            if let Some(status) = program.try_wait().expect("wait") {
                break status;
            }
            if started.elapsed() > Duration::from_secs(60) {
                let _ = program.kill();
                panic!("the program hung on a frozen worker");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let took = started.elapsed();
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut rest);
        assert!(status.success(), "the program failed:\n{line}{rest}");
        assert!(took < Duration::from_secs(LIVENESS_SECONDS + 5), "the frozen worker was given up after {took:?}");
        drop(frozen);
        worker.assert_alive();
        sandbox_device_query(&sandbox, &worker);
    }

    /// A well-behaved program against `worker`.
    fn sandbox_device_query(sandbox: &Sandbox, worker: &WorkerProcess) {
        let exe = sandbox.compile("device_query");
        worker.run(&exe, &[]).assert_success();
    }

    /// A process stopped with SIGSTOP until this is dropped.
    struct Frozen(u32);

    impl Frozen {
        fn stop(pid: u32) -> Self {
            signal("-STOP", pid);
            Self(pid)
        }
    }

    impl Drop for Frozen {
        fn drop(&mut self) {
            signal("-CONT", self.0);
        }
    }

    fn signal(which: &str, pid: u32) {
        let ok = std::process::Command::new("kill").args([which, &pid.to_string()]).status().is_ok_and(|s| s.success());
        assert!(ok, "kill {which} {pid} failed");
    }
}
