//! The attack suite: a hostile or broken peer against the worker, and a broken worker
//! against the library. Every scenario runs while a well-behaved client ("bystander") stays
//! connected, and ends by checking that the worker still serves it and has freed everything
//! the scenario held (device memory back to where it was).
//!
//! The tests live in `mod attack`, so `scripts/test.sh` runs them as a check of their own
//! (`cargo test --test attack`): malformed frames for every opcode, clients killed
//! mid-transfer, trickling and idle connections, unread replies, one client's queued work
//! against another's synchronous calls, thousands of streams, a frozen worker. Attacks on one
//! part of the protocol sit with that part's tests as well: `session.rs` (pre-authentication
//! bulk and its memory, hostile header lengths, connection floods, the pre-authentication
//! deadline, the session and worker limits), `c_programs.rs` (a client killed mid-copy,
//! another session's pointers), the `fuzz/` targets (frames, messages, RDMA peers).

mod common;

mod attack {
    use super::common::*;
    use hip_remote_tests::{Sandbox, WorkerProcess};
    use proto_core::wire;
    use proto_core::{Bulk, Flags, Opcode, Request, Response, Status};
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
    fn reply_to(c: &mut SessionDriver, id: u64) -> Reply {
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
            let mut c = SessionDriver::greeted(worker);
            let mut answered_with_error = 0;
            for &opcode in Opcode::ALL {
                if opcode == Opcode::Goodbye {
                    // Ends the session by design, whatever its (empty) control part says.
                    continue;
                }
                for (i, control) in hostile_control_parts().iter().enumerate() {
                    let id = 1_000 + i as u64;
                    let head = raw_header(opcode.raw(), Flags::empty(), id, control.len() as u32, 0);
                    c.hostile().send_raw(&[&head[..], control].concat());
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
            let mut uploader = SessionDriver::greeted(worker);
            let dst = uploader.malloc(BYTES.into());
            let part = vec![0x5a; 4 << 20];
            let request = Request::MemcpyHtoD(wire::MemcpyHtoD { dst, stream: 0, sync: true, data: Bulk(&part) });
            let mut buf = vec![0; 4096];
            let frame = request.encode_frame(&mut buf, Flags::empty(), 7).expect("encode");
            let control = &buf[proto_core::header::HEADER_LEN..frame.head_len];
            // The header announces the whole 32 MiB; only 4 MiB follow before the end.
            let head = raw_header(Opcode::MemcpyHtoD.raw(), Flags::BULK, 7, control.len() as u32, BYTES);
            uploader.hostile().sink.send(&[&head[..], control].concat(), &part).expect("send the first part");
            drop(uploader);

            let mut downloader = SessionDriver::greeted(worker);
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
            let mut c = HostilePeer::connect(worker);
            let mut buf = vec![0; 512];
            let frame = hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, "")
                .encode_frame(&mut buf, Flags::empty(), 1)
                .expect("encode HELLO");
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
        let mut bystander = SessionDriver::connect(&worker);
        let reply = authenticate(&mut bystander, b"sesame");
        assert!(!reply.is_error(), "AUTHENTICATE refused: {:?}", reply.error());
        let mut idle: Vec<SessionDriver> = (0..LIMIT).map(|_| SessionDriver::connect(&worker)).collect();
        bystander.ping(1);
        let mut refused = SessionDriver::connect(&worker);
        let (status, message) = refused.recv().error();
        assert_eq!(status, Status::TOO_MANY_CONNECTIONS, "{message}");
        let mut admitted = None;
        let started = Instant::now();
        while admitted.is_none() && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
            let mut c = SessionDriver::connect(&worker);
            c.send(&hello(proto_core::PROTOCOL_VERSION, proto_core::PROTOCOL_VERSION, ""), Flags::empty());
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
        // The program's session is served by its session process, handed the connection: the
        // whole worker freezes, its session processes with it.
        let frozen: Vec<Frozen> = std::iter::once(worker.pid()).chain(children(worker.pid())).map(Frozen::stop).collect();
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

    /// The processes `parent` started (a worker's session processes) that are still running.
    fn children(parent: u32) -> Vec<u32> {
        let mut children = Vec::new();
        for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // The parent's pid is the second field after the parenthesised command name.
            let parent_of = stat.rsplit_once(") ").and_then(|(_, rest)| rest.split(' ').nth(1)?.parse::<u32>().ok());
            if parent_of == Some(parent) && !stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')) {
                children.push(pid);
            }
        }
        children
    }

    impl Frozen {
        /// Stops `pid` and waits until every one of its threads is stopped: the signal is
        /// only sent when `kill` returns, and a busy thread could still answer a request.
        fn stop(pid: u32) -> Self {
            signal("-STOP", pid);
            let stopped = |task: std::fs::DirEntry| {
                let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
                // The state follows the parenthesised command name.
                stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('T') || rest.starts_with('t'))
            };
            let started = Instant::now();
            while !std::fs::read_dir(format!("/proc/{pid}/task")).expect("the worker's threads").flatten().all(stopped) {
                assert!(started.elapsed() < Duration::from_secs(10), "the worker did not stop");
                std::thread::sleep(Duration::from_millis(5));
            }
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

    /// One client's queued work never delays another client's synchronous calls: while A has
    /// seconds of work queued on a blocking stream of its own and on its null stream, B's 4 KiB
    /// synchronous copies and its device synchronize finish at once (they used to wait for A's
    /// blocking streams: the null stream and the device synchronize were the device's, shared).
    #[test]
    fn one_clients_queued_work_does_not_delay_anothers_synchronous_calls() {
        use std::time::Instant;
        with_bystander(|worker| {
            let mut a = SessionDriver::greeted(worker);
            let (a_ptr, a_stream) = (a.malloc(FLOOD_BYTES), a.stream_create(0));
            let mut b = SessionDriver::greeted(worker);
            let b_ptr = b.malloc(4096);
            b.small_sync_copy(b_ptr);

            let busy = Duration::from_secs(3);
            a.flood(a_ptr, a_stream, busy);
            let flooded = Instant::now();
            // A's null stream too: work on A's session, never on B's.
            std::thread::scope(|scope| {
                let a = &mut a;
                let flooding = scope.spawn(move || {
                    for _ in 0..20 {
                        a.memset(a_ptr, FLOOD_BYTES, 0, Flags::NO_REPLY);
                    }
                    let id = a.send(&Request::DeviceSynchronize(wire::DeviceRef { device: 0 }), Flags::empty());
                    // Heartbeats (request id 0) come while it waits.
                    while a.recv().header.request_id != id {}
                });
                for _ in 0..5 {
                    let took = b.small_sync_copy(b_ptr);
                    assert!(took < Duration::from_secs(1), "B's 4 KiB synchronous copy waited {took:?} behind A's queued work");
                }
                let started = Instant::now();
                let r = b.call(&Request::DeviceSynchronize(wire::DeviceRef { device: 0 }));
                assert!(matches!(r.response(), Response::DeviceSynchronize(_)));
                assert!(started.elapsed() < Duration::from_secs(1), "B's device synchronize waited {:?} for A's work", started.elapsed());
                flooding.join().expect("A's flood")
            });
            // A's own synchronize did wait for its work.
            assert!(flooded.elapsed() >= busy / 2, "A's work was not queued: done after {:?}", flooded.elapsed());
            a.ping(1);
        });
    }

    /// A client creating 4 096 streams gets the session's limit of them and hipErrorOutOfMemory
    /// for the rest; every stream given work still leaves the worker's thread count bounded
    /// (a thread per stream made it grow by one per stream), and another client is served.
    #[test]
    #[cfg(target_os = "linux")]
    fn thousands_of_streams_keep_the_worker_threads_bounded() {
        use hip_worker::session::MAX_STREAMS_PER_SESSION;
        fn threads() -> usize {
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            status.lines().find_map(|l| l.strip_prefix("Threads:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
        }
        with_bystander(|worker| {
            let mut greedy = SessionDriver::greeted(worker);
            let ptr = greedy.malloc(4096);
            let (mut streams, mut refused) = (Vec::new(), 0);
            for _ in 0..4096 {
                let reply = greedy.call(&Request::StreamCreate(wire::StreamCreate { device: 0, flags: 0, priority: 0 }));
                match reply.is_error() {
                    true => {
                        assert_eq!(reply.error().0, Status::OUT_OF_MEMORY);
                        refused += 1;
                    }
                    false => match reply.response() {
                        Response::StreamCreate(s) => streams.push(s.stream),
                        other => panic!("{other:?}"),
                    },
                }
            }
            assert_eq!(streams.len(), MAX_STREAMS_PER_SESSION);
            assert_eq!(refused, 4096 - MAX_STREAMS_PER_SESSION);
            // Work on every stream, so each needs running.
            for &stream in &streams {
                greedy.memset(ptr, 4096, stream, Flags::NO_REPLY);
            }
            let peak = threads();
            assert!(peak < 256, "{peak} threads for {} streams", streams.len());
            let mut polite = SessionDriver::greeted(worker);
            polite.round_trip(5);
            let r = greedy.call(&Request::DeviceSynchronize(wire::DeviceRef { device: 0 }));
            assert!(matches!(r.response(), Response::DeviceSynchronize(_)));
            // Freeing streams makes room again.
            let r = greedy.call(&Request::StreamDestroy(wire::StreamRef { stream: streams[0] }));
            assert!(matches!(r.response(), Response::StreamDestroy(_)));
            greedy.stream_create(1);
        });
    }

    /// A client that asks for many asynchronous device-to-host copies and never reads the replies
    /// holds at most the session's bound of worker memory: the copies past it fail with
    /// hipErrorOutOfMemory, and other clients are served meanwhile.
    #[test]
    #[cfg(target_os = "linux")]
    fn unread_replies_are_bounded() {
        const BOUND: usize = 8 << 20;
        const COPY: usize = 1 << 20;
        const COPIES: usize = 400;
        let mut config = config_with(None);
        config.session.max_queued_reply_bytes = BOUND;
        with_bystander_on(TestWorker::tcp(config), |worker| {
            let mut greedy = SessionDriver::greeted(worker);
            let ptr = greedy.malloc(COPY as u64);
            let stream = match greedy.call(&Request::StreamCreate(wire::StreamCreate { device: 0, flags: 1, priority: 0 })).response() {
                Response::StreamCreate(s) => s.stream,
                other => panic!("{other:?}"),
            };
            let before = resident_bytes();
            let ids: Vec<u64> = (0..COPIES)
                .map(|_| greedy.send(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr, len: COPY as u64, stream }), Flags::empty()))
                .collect();
            // Let the worker do all it will with them while nobody reads.
            std::thread::sleep(Duration::from_millis(1500));
            let grown = resident_bytes().saturating_sub(before);
            // 400 MiB were asked for; the bound, the socket buffers and encoding scratch remain.
            assert!(grown < 96 << 20, "worker memory grew by {} MiB for unread replies", grown >> 20);

            // A well-behaved client is served while the greedy one's replies sit unread.
            let mut polite = SessionDriver::greeted(worker);
            polite.round_trip(7);

            let (mut data, mut refused) = (0, 0);
            let mut open: std::collections::HashSet<u64> = ids.into_iter().collect();
            while !open.is_empty() {
                let reply = greedy.recv();
                if !open.remove(&reply.header.request_id) {
                    continue; // a heartbeat
                }
                if reply.is_error() {
                    assert_eq!(reply.error().0, Status::OUT_OF_MEMORY);
                    refused += 1;
                } else {
                    data += 1;
                }
            }
            assert!(refused > 0, "nothing was refused: the queue is not bounded");
            assert!(data >= BOUND / COPY, "{data} copies were answered; at least the bound's worth should be");
            // Reading the replies gave the bound back: the same client is served again.
            greedy.round_trip(3);
            let r = greedy.call(&Request::MemcpyDtoH(wire::MemcpyDtoH { src: ptr, len: COPY as u64, stream }));
            assert!(matches!(r.response(), Response::MemcpyDtoH(_)));
        });
    }
}
