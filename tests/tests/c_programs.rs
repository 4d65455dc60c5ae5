//! The C test programs of `tests/c/`, compiled against our headers and the built drop-in
//! `libamdhip64.so.7`, run against a host-backend `hip-worker`.

use hip_remote_tests::{
    assert_lost_worker_cleanly, client_command, closed_port, kill_worker_midcopy, run_with_timeout, Interactive, Sandbox, RUN_TIMEOUT,
};
use std::time::{Duration, Instant};

/// Compiles `name`, runs it against a fresh worker and requires success.
fn run_program(name: &str) {
    run_program_on(name, 1);
}

/// [`run_program`] against a worker emulating `devices` devices.
fn run_program_on(name: &str, devices: u32) {
    let sandbox = Sandbox::new(name);
    let exe = sandbox.compile(name);
    let mut worker = sandbox.start_worker_devices(devices);
    let out = worker.run(&exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains(&format!("PASS {name}")), "no PASS line: {}", out.report());
    worker.assert_alive();
}

/// Compiles a hipBLAS program (linked `-lhipblas -lamdhip64`), runs it against a fresh worker
/// (in a chain: the hip backend's BLAS is hip-remote's own libhipblas, forwarding to the host
/// worker behind it) and requires success.
fn run_hipblas_program(name: &str) {
    let sandbox = Sandbox::new(name);
    let exe = sandbox.compile_with(name, &["-lhipblas", "-lamdhip64", "-lm"]);
    let mut worker = sandbox.start_worker();
    let out = worker.run(&exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains(&format!("PASS {name}")), "no PASS line: {}", out.report());
    worker.assert_alive();
}

/// Level 1/2/3 routines, the gemm forms CuPy and PyTorch use, streams and pointer modes,
/// checked against a CPU reference.
#[test]
fn hipblas_ops() {
    run_hipblas_program("hipblas_ops");
}

/// hipBLAS inside stream capture: gemm and strided-batched gemm become graph nodes, run at
/// every launch after the kernel before them (also after hipblasDestroy, and from a clone);
/// host-result reductions and pointer-array routines invalidate the capture.
#[test]
fn hipblas_capture() {
    let name = "hipblas_capture";
    let sandbox = Sandbox::new(name);
    let exe = sandbox.compile_with(name, &["-lhipblas", "-lhiprtc", "-lamdhip64", "-lm"]);
    let mut worker = sandbox.start_worker();
    let out = worker.run(&exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains(&format!("PASS {name}")), "no PASS line: {}", out.report());
    worker.assert_alive();
}

/// Bad handles, sizes and leading dimensions, operands outside the session's allocations:
/// refused, and the worker and session go on.
#[test]
fn hipblas_hostile() {
    run_hipblas_program("hipblas_hostile");
}

#[test]
fn device_query() {
    run_program("device_query");
}

#[test]
fn memory() {
    run_program("memory");
}

#[test]
fn arrays() {
    run_program("arrays");
}

#[test]
fn memcpy3d() {
    run_program("memcpy3d");
}

#[test]
fn textures() {
    run_program("textures");
}

#[test]
fn streams_events() {
    run_program("streams_events");
}

#[test]
fn errors() {
    run_program("errors");
}

#[test]
fn threads() {
    run_program("threads");
}

/// Device, attribute, flag and pointer queries answer while another thread's
/// `hipStreamSynchronize` holds the connection (from what the sessions publish).
#[test]
fn queries_do_not_wait_for_a_synchronize() {
    run_program("queries_during_sync");
}

/// A program that calls only hiprtc, linked `-Wl,--as-needed -lhiprtc` (no `-lamdhip64`):
/// libhiprtc's own `NEEDED libamdhip64.so.7` must bring in the library whose connection
/// carries the compilation.
#[test]
fn hiprtc_only_program_linked_as_needed() {
    let sandbox = Sandbox::new("hiprtc_only");
    let exe = sandbox.compile_with("hiprtc_only", &["-Wl,--as-needed", "-lhiprtc"]);
    let mut worker = sandbox.start_worker();
    let mut cmd = worker.command(&exe);
    // `cargo test` puts target/debug on LD_LIBRARY_PATH, where libhiprtc's fallback dlopen
    // would find libamdhip64.so.7 anyway; a user's program runs without it.
    cmd.env_remove("LD_LIBRARY_PATH");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS hiprtc_only"), "no PASS line: {}", out.report());
    worker.assert_alive();
}

#[test]
fn memory2d() {
    run_program("memory2d");
}

#[test]
fn memset2d3d() {
    run_program("memset2d3d");
}

#[test]
fn symbols_spt() {
    run_program("symbols_spt");
}

/// Run against one device and against two emulated devices (peer and link attributes).
#[test]
fn device_extra() {
    run_program("device_extra");
    run_program_on("device_extra", 2);
}

/// Run against one device and against two emulated devices (peer copies across devices).
#[test]
fn memory_extra() {
    run_program("memory_extra");
    let sandbox = Sandbox::new("memory_extra_two_devices");
    let exe = sandbox.compile("memory_extra");
    let mut worker = sandbox.start_worker_devices(2);
    let out = worker.run(&exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains("PASS memory_extra"), "no PASS line: {}", out.report());
    worker.assert_alive();
}

/// Two devices of one worker: per-device hiprtc and modules, per-thread hipSetDevice, peer
/// copies both ways and peer access with ROCm's codes.
#[test]
fn multi_device() {
    run_program_on("multi_device", 2);
}

/// IPC between two client processes of one worker: the program forks before any HIP call,
/// the parent exports memory and an interprocess event, the child opens them, reads, writes
/// back and records the event; the exporter frees while the child holds the memory open.
#[test]
fn ipc_between_two_processes() {
    run_program("ipc");
}

/// An IPC handle opens only for the exporter's tenant: another tenant's session is answered
/// as for a made-up handle, a session of the same tenant opens it; after the exporter freed
/// the memory the handle opens no more.
#[test]
fn ipc_handle_of_another_tenant_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    const OTHER_TOKEN: &str = "hip-remote-other-tenant-token";
    const INVALID_DEVICE_POINTER: &str = "17";
    if hip_remote_tests::chain_requested() {
        // A chain's front worker knows only the test tenant (the token file is the upstream's).
        transport_core::test_skip::skip("ipc tenants: a chained worker has a single tenant");
        return;
    }
    let sandbox = Sandbox::new("ipc_tenants");
    let exe = sandbox.compile("ipc");
    let tokens = sandbox.path().join("tokens");
    std::fs::write(&tokens, format!("other:{OTHER_TOKEN}\n")).expect("token file");
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).expect("token file mode");
    let mut worker = sandbox.start_worker_args(&["--token-file".to_string(), tokens.display().to_string()]);

    let mut cmd = worker.command(&exe);
    cmd.arg("export");
    let mut exporter = Interactive::spawn(cmd);
    let handle = exporter.expect_line("HANDLE ", Duration::from_secs(60));

    let mut other = worker.command(&exe);
    other.args(["open", &handle, INVALID_DEVICE_POINTER]).env("HIP_REMOTE_TOKEN", OTHER_TOKEN);
    run_with_timeout(other, RUN_TIMEOUT).assert_success();
    worker.run(&exe, &["open", &handle, "ok"]).assert_success();

    exporter.send_line("go");
    exporter.finish(Duration::from_secs(60)).assert_success();
    worker.run(&exe, &["open", &handle, INVALID_DEVICE_POINTER]).assert_success();
    worker.assert_alive();
}

/// Pointer attributes (one and several at once, set), address ranges, for every kind of
/// memory and for unknown pointers, with ROCm's answers and argument errors.
#[test]
fn pointer_attrs() {
    run_program("pointer_attrs");
}

/// Contexts (hipCtx*, primary contexts) on two devices: the per-thread stack moves the
/// current device, retain/release counts, flags, reset, ROCm's error codes.
#[test]
fn contexts() {
    run_program_on("contexts", 2);
}

/// `--devices 2,0` of three emulated devices: the worker serves two, renumbered (device 2 of
/// the program is out of range), and the multi-device program passes on them.
#[test]
fn multi_device_on_a_selection() {
    let sandbox = Sandbox::new("multi_device_selection");
    let exe = sandbox.compile("multi_device");
    let args = ["--host-devices", "3", "--devices", "2,0"].map(String::from);
    let mut worker = sandbox.start_worker_args(&args);
    let out = worker.run(&exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains("PASS multi_device"), "no PASS line: {}", out.report());
    worker.assert_alive();
}

/// `HIP_VISIBLE_DEVICES`, `CUDA_VISIBLE_DEVICES` and `ROCR_VISIBLE_DEVICES` against one worker
/// of three emulated devices (each device's pciBusID is its index there): the program sees
/// the devices ROCm would leave, in the variables' order, and nothing else.
#[test]
fn visible_devices() {
    let sandbox = Sandbox::new("visible_devices");
    let exe = sandbox.compile("visible_devices");
    let mut worker = sandbox.start_worker_devices(3);
    let mib = hip_remote_tests::DEFAULT_WORKER_MIB;
    // (ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES) => the worker devices seen.
    let cases: &[([Option<&str>; 3], &[u32])] = &[
        ([None, None, None], &[0, 1, 2]),
        ([None, Some("0"), None], &[0]),
        ([None, Some("2,0"), None], &[2, 0]),
        ([None, Some("1,1,0"), None], &[1, 0]),
        ([None, Some("1,5,0"), None], &[1]),
        ([None, Some("2,x,0"), None], &[2]),
        ([None, Some("-1"), None], &[]),
        ([None, Some(""), Some("2")], &[2]),
        ([None, Some("1"), Some("2")], &[1]),
        ([None, None, Some("1,2")], &[1, 2]),
        ([Some("2,1"), Some("1"), None], &[1]),
        ([Some("2,1"), None, None], &[2, 1]),
        ([Some(""), None, None], &[]),
    ];
    for ([rocr, hip, cuda], seen) in cases {
        let mut cmd = worker.command(&exe);
        for (name, value) in [("ROCR_VISIBLE_DEVICES", rocr), ("HIP_VISIBLE_DEVICES", hip), ("CUDA_VISIBLE_DEVICES", cuda)] {
            if let Some(value) = value {
                cmd.env(name, value);
            }
        }
        cmd.args(seen.iter().map(|bus| format!("{bus}:{mib}")));
        let out = hip_remote_tests::run_with_timeout(cmd, RUN_TIMEOUT);
        assert!(
            out.status.is_some_and(|s| s.success()) && out.stdout.contains("PASS visible_devices"),
            "ROCR={rocr:?} HIP={hip:?} CUDA={cuda:?} should show {seen:?}: {}",
            out.report()
        );
    }

    // Devices named by UUID (as the program reads them with every device visible), whole
    // or by their start, mixed with an index; an unknown UUID ends the list.
    let out = worker.run(&exe, &["uuids"]);
    out.assert_success();
    let uuids: Vec<&str> = out.stdout.lines().filter_map(|l| l.strip_prefix("UUID ")).collect();
    assert_eq!(uuids.len(), 3, "{}", out.report());
    assert!(uuids.iter().all(|u| u.len() == 36), "{uuids:?}");
    let unique: std::collections::HashSet<&str> = uuids.iter().map(|u| &u[..20]).collect();
    assert_eq!(unique.len(), 3, "the emulated devices' UUIDs differ in their first 8 bytes: {uuids:?}");
    for (hip, seen) in [
        (format!("{},1,{}", uuids[2], &uuids[0][..20]), &[2u32, 1, 0][..]),
        (format!("{},GPU-ffffffffffffffffffffffffffffffff,0", uuids[1].to_uppercase()), &[1][..]),
    ] {
        let mut cmd = worker.command(&exe);
        cmd.env("HIP_VISIBLE_DEVICES", &hip).args(seen.iter().map(|bus| format!("{bus}:{mib}")));
        let out = hip_remote_tests::run_with_timeout(cmd, RUN_TIMEOUT);
        assert!(out.success() && out.stdout.contains("PASS visible_devices"), "HIP_VISIBLE_DEVICES={hip} should show {seen:?}: {}", out.report());
    }
    worker.assert_alive();
}

/// A device list the worker cannot serve stops it at start, naming the list.
#[test]
fn bad_device_lists_stop_the_worker() {
    let worker = hip_remote_tests::target_debug_dir().join("hip-worker");
    assert!(worker.is_file(), "{} is missing: run `cargo build --workspace` first", worker.display());
    for (args, says) in [
        (&["--devices", "0,0"][..], "--devices \"0,0\" is refused"),
        (&["--devices", "1,x"][..], "--devices \"1,x\" is refused"),
        (&["--host-devices", "2", "--devices", "2"][..], "--devices names device 2, but --host-devices has only 2"),
    ] {
        let refused = std::process::Command::new(&worker)
            .args(["--listen", "127.0.0.1:0", "--backend", "host", "--host-memory-mib", "64"])
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run hip-worker");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// Another session's device pointer is refused for every operation, and its owner's data
/// stays intact.
#[test]
fn other_session_pointer_is_refused() {
    let sandbox = Sandbox::new("other_session");
    let exe = sandbox.compile("other_session");
    let mut worker = sandbox.start_worker();

    let mut cmd = worker.command(&exe);
    cmd.arg("hold");
    let mut holder = Interactive::spawn(cmd);
    let ptr = holder.expect_line("PTR ", Duration::from_secs(60));

    let attack = worker.run(&exe, &["attack", &ptr]);
    attack.assert_success();

    holder.send_line("go");
    let held = holder.finish(Duration::from_secs(60));
    held.assert_success();
    assert!(held.stdout.contains("data intact"), "{}", held.report());
    worker.assert_alive();
}

/// Parses "FREE <n> TOTAL <n>".
fn parse_meminfo(stdout: &str) -> (u64, u64) {
    let line = stdout.lines().find(|l| l.starts_with("FREE ")).unwrap_or_else(|| panic!("no FREE line in {stdout:?}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words.len(), 4, "bad meminfo line {line:?}");
    (words[1].parse().expect("free"), words[3].parse().expect("total"))
}

/// A client SIGKILLed in the middle of a 256 MiB copy: the worker frees its session's memory
/// once the connection drops, and keeps serving.
#[test]
fn killed_client_memory_is_reclaimed() {
    let sandbox = Sandbox::new("kill_midcopy");
    let meminfo = sandbox.compile("meminfo");
    let victim = sandbox.compile("kill_midcopy");
    let mut worker = sandbox.start_worker_with(1024);

    let before = worker.run(&meminfo, &[]);
    before.assert_success();
    let (free_before, total) = parse_meminfo(&before.stdout);
    assert!(free_before <= total);

    let mut client = Interactive::spawn(worker.command(&victim));
    client.expect_line("READY", Duration::from_secs(60));
    // The allocation is visible to other sessions while the client lives.
    let during = worker.run(&meminfo, &[]);
    during.assert_success();
    let (free_during, _) = parse_meminfo(&during.stdout);
    assert!(free_during + (256 << 20) <= free_before, "256 MiB allocated but free went from {free_before} to {free_during}");
    // Let it get into its copy loop, then kill it mid-copy.
    std::thread::sleep(Duration::from_millis(300));
    client.kill();
    let killed = client.finish(Duration::from_secs(10));
    assert!(!killed.stdout.contains("NOT KILLED"), "the client finished before it was killed");

    let after = worker.run(&meminfo, &["wait", &free_before.to_string(), "10"]);
    after.assert_success();
    let (free_after, _) = parse_meminfo(&after.stdout);
    assert_eq!(free_after, free_before, "free memory after the killed client's session ended");
    worker.assert_alive();
    assert!(worker.log_text().contains("session closed"), "worker log shows no session cleanup:\n{}", worker.log_text());
}

/// A worker SIGKILLed in the middle of a 256 MiB upload: the copy fails with
/// hipErrorNotInitialized and the application lives on with SIGPIPE at its default
/// disposition, the library's writes to the dead worker's sockets raise no signal. Over TCP
/// striped (what large copies take by default) from pinned and pageable memory, and
/// unstriped; and moved to the same-host transport (`HIP_REMOTE_SHM=auto`).
#[test]
fn a_worker_killed_midcopy_fails_the_copy_not_the_application() {
    let sandbox = Sandbox::new("worker_dies_midcopy");
    let exe = sandbox.compile("worker_dies_midcopy");
    for (shm, stripes, host) in [("off", "4", "pinned"), ("off", "4", "pageable"), ("off", "0", "pinned"), ("auto", "0", "pinned")] {
        let mut worker = sandbox.start_worker_in_one_process();
        let mut cmd = worker.command(&exe);
        cmd.arg(host).env("HIP_REMOTE_STRIPES", stripes).env("HIP_REMOTE_SHM", shm);
        let out = kill_worker_midcopy(&mut worker, cmd);
        let log = worker.log_text();
        if stripes != "0" {
            assert!(log.contains("stripe joined"), "the copies were not striped: {log}");
        }
        if shm == "auto" {
            // The TCP session ended with the move (GOODBYE) before the copies began.
            assert!(log.contains("TCP connection ended") && !out.stderr.contains("staying on TCP"), "the client did not move to shm: {log}");
        }
        assert_lost_worker_cleanly(&out);
    }
}

/// Memory handed between tenants: a session fills and frees buffers, the next session's new
/// buffers hold none of it (on GPU workers in shared mode the backend zeroes what the driver
/// hands out again; scripts/device-isolation.sh runs it there).
#[test]
fn a_session_never_gets_memory_another_filled_and_freed() {
    let sandbox = Sandbox::new("freed_memory");
    let exe = sandbox.compile("freed_memory");
    let worker = sandbox.start_worker();
    let filled = worker.run(&exe, &["fill"]);
    filled.assert_success();
    let scanned = worker.run(&exe, &["scan"]);
    scanned.assert_success();
    assert!(scanned.stdout.contains("PASS"), "{}", scanned.report());
}

/// Two client processes at once against the same worker.
#[test]
fn two_clients_at_once() {
    let sandbox = Sandbox::new("two_clients");
    let threads = sandbox.compile("threads");
    let streams = sandbox.compile("streams_events");
    let mut worker = sandbox.start_worker();
    let addr = worker.addr().to_string();
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| run_with_timeout(client_command(&threads, &addr), RUN_TIMEOUT));
        let b = s.spawn(|| run_with_timeout(client_command(&streams, &addr), RUN_TIMEOUT));
        (a.join().expect("thread a"), b.join().expect("thread b"))
    });
    a.assert_success();
    b.assert_success();
    worker.assert_alive();
}

/// No worker listening: calls fail promptly with hipErrorNotInitialized and a one-line reason
/// on stderr; the program neither hangs nor aborts.
#[test]
fn worker_down_fails_fast() {
    let sandbox = Sandbox::new("worker_down");
    let exe = sandbox.compile("worker_down");
    let addr = format!("127.0.0.1:{}", closed_port());
    let mut cmd = client_command(&exe, &addr);
    cmd.env_remove("HIP_REMOTE_DEBUG");
    let start = Instant::now();
    let out = run_with_timeout(cmd, Duration::from_secs(60));
    let took = start.elapsed();
    out.assert_success();
    assert!(took < Duration::from_secs(10), "took {took:?}: {}", out.report());
    let reasons: Vec<&str> = out.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(reasons.len(), 1, "expected exactly one line of explanation on stderr: {}", out.report());
    assert!(
        reasons[0].starts_with("hip-remote:") && reasons[0].contains(&addr),
        "the stderr line should name the library and the worker address: {:?}",
        reasons[0]
    );
}

/// Large async D2H then sync H2D with a non-blocking stream: passes (the worker's null-stream
/// barrier does not wait for non-blocking streams). Also with small sizes on a blocking stream.
#[test]
fn async_download_then_sync_upload() {
    let sandbox = Sandbox::new("d2h_then_h2d");
    let exe = sandbox.compile("d2h_then_h2d");
    let worker = sandbox.start_worker();
    for args in [&["1"][..], &["64", "nonblocking"][..]] {
        let mut cmd = worker.command(&exe);
        cmd.args(args);
        run_with_timeout(cmd, Duration::from_secs(60)).assert_success();
    }
}

/// Regression (was a deadlock): a 64 MiB `hipMemcpyAsync` device-to-host on a *blocking*
/// stream followed by a 64 MiB synchronous `hipMemcpy` host-to-device. The sync upload runs
/// on the null stream, which first waits for the device's blocking streams
/// (worker/src/backend/host.rs, null-stream barrier), while the client is busy writing the
/// upload's chunks and reads no replies. The blocking stream's executor must therefore
/// never write to the connection: it queues the download's replies on the session's
/// `LateReplies` (worker/src/session/memory.rs), and the driver's `ReplyWriter` thread
/// (worker/src/driver.rs) sends them.
/// On ROCm this pattern just works.
#[test]
fn async_download_then_sync_upload_blocking_stream() {
    let sandbox = Sandbox::new("d2h_then_h2d_blocking");
    let exe = sandbox.compile("d2h_then_h2d");
    let worker = sandbox.start_worker();
    let mut cmd = worker.command(&exe);
    cmd.arg("64");
    run_with_timeout(cmd, Duration::from_secs(30)).assert_success();
}

/// BUG (crash): `hipMemcpy` with a kind that contradicts the pointers dereferences the
/// worker's synthetic device addresses as host memory and kills the application with SIGSEGV
/// (client-capi/src/api/memory.rs `copy`: `Direction::HostToHost` does `std::ptr::copy` on
/// whatever it is given; `HostToDevice` reads `src` and `DeviceToHost` lands into `dst` as
/// host memory). ROCm looks both pointers up and performs the copy the memory calls for
/// (clr `ihipMemcpy`); at the very least the library should return `hipErrorInvalidValue`
/// for a pointer it knows is a device allocation.
#[test]
fn memcpy_with_contradicting_kind_does_not_crash() {
    let sandbox = Sandbox::new("wrong_kind");
    let exe = sandbox.compile("wrong_kind");
    let worker = sandbox.start_worker();
    let failures: Vec<String> =
        (0..4).map(|case| worker.run(&exe, &[&case.to_string()])).filter(|out| !out.success()).map(|out| out.report()).collect();
    assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
}

/// BUG: `hipErrorNotReady` from `hipStreamQuery` / `hipEventQuery` becomes the thread's last
/// error (client-capi/src/boundary.rs `record` stores every non-success code; the queries in
/// client-capi/src/api/stream.rs and api/event.rs return NOT_READY through `hip_boundary!`).
/// ROCm records neither hipSuccess nor hipErrorNotReady (clr `HIP_UPDATE_ERROR_STATE`), so
/// `hipGetLastError()` after a polling loop returns hipSuccess there, hipErrorNotReady here —
/// applications that poll and then check `hipGetLastError()` report a bogus failure.
#[test]
fn not_ready_is_not_a_last_error() {
    run_program("not_ready");
}

/// Streams, events and `hipMalloc` without a round trip, small `hipMemcpy` uploads without
/// waiting (ordering with kernels and copies on other streams, HIP's immediate errors where
/// the library can know them).
#[test]
fn no_wait_ops() {
    run_program("no_wait_ops");
}

/// The same program with `HIP_REMOTE_CLIENT_ALLOC=off`: every operation waits, as before.
#[test]
fn no_wait_ops_turned_off() {
    let sandbox = Sandbox::new("no_wait_ops_off");
    let exe = sandbox.compile("no_wait_ops");
    let mut worker = sandbox.start_worker();
    let mut cmd = worker.command(&exe);
    cmd.env("HIP_REMOTE_CLIENT_ALLOC", "off");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS no_wait_ops"), "no PASS line: {}", out.report());
    worker.assert_alive();
}

#[test]
fn kernels() {
    run_program("kernels");
}

/// hiprtc with the client's `-I` directories, as CuPy compiles: the headers a program includes
/// from them travel with the compile (quoted, relative and angle forms), the worker supplies
/// HIP's own and rocThrust's namespace header, and a CuPy-style kernel (its own
/// `atomicAdd(long long*)`, `__half`, `__HIPCC__`) runs.
#[test]
fn rtc_client_headers() {
    run_program("rtc_client_headers");
}

/// CuPy's own headers and generated kernels through hiprtc (`tests/c/rtc_cupy_kernels.c`): needs
/// an installed CuPy's `cupy/_core/include` — `$HIP_REMOTE_CUPY_INCLUDE`, else the one the
/// `python3` on PATH finds (CuPy is located, not imported); skipped without one.
#[test]
fn rtc_cupy_kernels() {
    let Some(include) = cupy_include_dir() else {
        transport_core::test_skip::skip("CuPy's kernels through hiprtc: no CuPy installed (set HIP_REMOTE_CUPY_INCLUDE)");
        return;
    };
    let sandbox = Sandbox::new("rtc_cupy_kernels");
    let exe = sandbox.compile("rtc_cupy_kernels");
    let mut worker = sandbox.start_worker();
    let out = worker.run(&exe, &[include.as_str()]);
    out.assert_success();
    assert!(out.stdout.contains("PASS rtc_cupy_kernels"), "no PASS line: {}", out.report());
    worker.assert_alive();
}

/// CuPy's header directory, from the environment or the `python3` on PATH.
fn cupy_include_dir() -> Option<String> {
    if let Ok(dir) = std::env::var("HIP_REMOTE_CUPY_INCLUDE") {
        return Some(dir);
    }
    let find = "import importlib.util as u; s = u.find_spec('cupy'); print(s.submodule_search_locations[0] if s else '')";
    let out = std::process::Command::new("python3").args(["-c", find]).output().ok()?;
    let package = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let include = std::path::Path::new(&package).join("_core/include");
    (!package.is_empty() && include.join("cupy/carray.cuh").is_file()).then(|| include.to_string_lossy().into_owned())
}

/// Block-cooperative kernels through hiprtc: tiled matmul in `__shared__` memory, block and
/// warp-shuffle reductions, a shared-atomics histogram, dynamic shared memory.
#[test]
fn shared_kernels() {
    run_program("shared_kernels");
}

/// A failing device-side assert: `hipErrorAssert`, latched on the stream; the worker goes on.
#[test]
fn device_assert() {
    run_program("device_assert");
}

/// Libraries, extended/cooperative/attribute launches, the hipConfigureCall stack, entry
/// points by name; two devices for the multi-device launches.
#[test]
fn module_extra() {
    run_program_on("module_extra", 2);
}

/// Kernel lookups from 8 threads at once: one handle per kernel, no error left for later.
#[test]
fn module_lookup_threads() {
    run_program("module_lookup_threads");
}

/// A kernel name the module lacks: `hipErrorNotFound` at `hipModuleGetFunction` by default,
/// answered by the client from the module's image (the profile shows no lookup that waited;
/// the kernel it holds is looked up without waiting too, and launched with arguments without
/// asking for its layout), nothing deferred to a later call.
#[test]
fn module_lookup_missing() {
    let sandbox = Sandbox::new("module_lookup_missing");
    let exe = sandbox.compile("module_lookup_missing");
    let mut worker = sandbox.start_worker();
    let mut cmd = worker.command(&exe);
    cmd.env_remove("HIP_REMOTE_POSTED_LOOKUPS").env("HIP_REMOTE_PROFILE", "1");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS module_lookup_missing"), "no PASS line: {}", out.report());
    assert!(out.stderr.contains("hip-remote profile (HIP_REMOTE_PROFILE=1)"), "no profile: {}", out.report());
    // A row of the profile: the HIP call, then what it waited for.
    let waited = |call: &str, what: &str| {
        out.stderr.lines().any(|l| {
            let mut columns = l.split_whitespace();
            columns.next() == Some(call) && columns.next().is_some_and(|w| w.starts_with(what))
        })
    };
    assert!(!waited("hipModuleGetFunction", "ModuleGetFunction"), "a lookup waited for the worker: {}", out.report());
    // The kernel's parameter layout came with its name: the first launch with arguments
    // packed them without asking.
    assert!(!waited("hipModuleLaunchKernel", "ModuleGetFunction"), "the launch asked for the layout: {}", out.report());
    worker.assert_alive();
}

/// The linker: two -fgpu-rdc pieces linked on the worker into one module.
#[test]
fn module_link() {
    run_program("module_link");
}

#[test]
fn managed() {
    run_program("managed");
}

#[test]
fn host_register() {
    run_program("host_register");
}

#[test]
fn device_control() {
    run_program("device_control");
}

/// The same program over two emulated devices: peers, per-device limits and bus ids.
#[test]
fn device_control_two_devices() {
    run_program_on("device_control", 2);
}

#[test]
fn stream_info() {
    run_program_on("stream_info", 2);
}

#[test]
fn func_attributes() {
    run_program("func_attributes");
}

/// Explicit graphs: build, instantiate, replay 100 times, queries, clones, errors, DOT.
#[test]
fn graphs() {
    run_program("graphs");
}

/// Executable graphs: per-node setters, exec update, enable/disable, upload, flags.
#[test]
fn graph_exec() {
    run_program("graph_exec");
}

/// printf from kernels reaches the program's standard output at synchronization (through a
/// chain too: the front worker's hip backend takes the output from our library and forwards it).
#[test]
fn kernel_printf() {
    run_program("kernel_printf");
}

/// Stream capture: a two-stream step captured on the worker, replayed 100 times; status and
/// info queries; HIP's errors for what is illegal during capture.
#[test]
fn capture() {
    run_program("capture");
}

/// Graph node kinds: event record/wait, child graphs, destroy node, find in clone.
#[test]
fn graph_nodes() {
    run_program("graph_nodes");
}

#[test]
fn mempool() {
    run_program("mempool");
}

#[test]
fn vmm() {
    run_program("vmm");
}

/// A physical allocation exported by one client process is imported by another (same tenant)
/// through the shareable "file descriptor": both see the same bytes, and the memory outlives
/// the exporter's own handle while the importer holds it.
#[test]
fn vmm_shareable_handle_between_processes() {
    let sandbox = Sandbox::new("vmm_share");
    let exe = sandbox.compile("vmm");
    let mut worker = sandbox.start_worker_in_one_process();

    let mut cmd = worker.command(&exe);
    cmd.arg("export");
    let mut exporter = Interactive::spawn(cmd);
    let path = exporter.expect_line("FD ", Duration::from_secs(60));

    let import = worker.run(&exe, &["import", path.trim()]);
    import.assert_success();
    assert!(import.stdout.contains("PASS vmm import"), "{}", import.report());

    exporter.send_line("go");
    let exported = exporter.finish(Duration::from_secs(60));
    exported.assert_success();
    assert!(exported.stdout.contains("importer's bytes arrived"), "{}", exported.report());
    worker.assert_alive();
}

/// A memory pool and one of its blocks exported by one client process are imported by
/// another: the importer reads the exporter's bytes and writes its own, which the exporter
/// then reads.
#[test]
fn mempool_shared_between_processes() {
    let sandbox = Sandbox::new("mempool_share");
    let exe = sandbox.compile("mempool");
    let mut worker = sandbox.start_worker_in_one_process();

    let mut cmd = worker.command(&exe);
    cmd.arg("export");
    let mut exporter = Interactive::spawn(cmd);
    let line = exporter.expect_line("SHARE ", Duration::from_secs(60));
    let (path, data) = line.trim().split_once(' ').expect("SHARE <path> <export data>");

    let import = worker.run(&exe, &["import", path, data]);
    import.assert_success();
    assert!(import.stdout.contains("PASS mempool import"), "{}", import.report());

    exporter.send_line("go");
    let exported = exporter.finish(Duration::from_secs(60));
    exported.assert_success();
    assert!(exported.stdout.contains("importer's bytes arrived"), "{}", exported.report());
    worker.assert_alive();
}

#[test]
fn callbacks() {
    run_program("callbacks");
}

#[test]
fn stream_extra() {
    run_program("stream_extra");
}

/// A stream waiting on a word the application's host thread writes after the stream blocked
/// (registered host memory, device memory, registered memory through its device pointer):
/// released, and the stream's writes to registered memory visible after the synchronize.
#[test]
fn stream_wait_host() {
    run_program("stream_wait_host");
}

#[test]
fn per_thread_stream() {
    run_program("per_thread_stream");
}

/// Striped TCP bulk through the real client: every size and kind of `stripes.c` over 4
/// stripes (the worker's log shows them joining), in the worker's process and in a session
/// process (the worker hands each stripe connection to it); and the same program where the
/// worker grants none (`--max-stripes 0`): the old path gives the same bytes.
#[test]
fn striped_copies() {
    let sandbox = Sandbox::new("stripes");
    let exe = sandbox.compile("stripes");
    let run_striped = |worker: &mut hip_remote_tests::WorkerProcess, what: &str| {
        let mut cmd = worker.command(&exe);
        cmd.env("HIP_REMOTE_STRIPES", "4");
        let out = run_with_timeout(cmd, RUN_TIMEOUT);
        out.assert_success();
        assert!(out.stdout.contains("PASS stripes"), "{what}: no PASS line: {}", out.report());
        worker.assert_alive();
        let log = worker.log_text();
        assert_eq!(log.matches("stripe joined").count(), 4, "{what}: four stripes should have joined:\n{log}");
        assert!(!out.stderr.contains("stripe"), "{what}: the stripes fell back to the main connection: {}", out.report());
        log
    };
    run_striped(&mut sandbox.start_worker_in_one_process(), "sessions in the worker's process");

    // A chained run's first worker serves its sessions itself and takes no extra arguments,
    // which go to the upstream one: the session-process and refusal halves run direct.
    if hip_remote_tests::chain_requested() {
        return;
    }
    let log = run_striped(&mut sandbox.start_worker(), "session processes");
    assert_eq!(log.matches("connection handed to its session's process (a stripe").count(), 4, "the stripes were not handed over:\n{log}");
    assert!(
        log.lines().filter(|l| l.contains("stripe joined")).all(|l| l.contains("session-process{")),
        "the stripes joined elsewhere than in the session process:\n{log}"
    );

    let mut worker = sandbox.start_worker_in_one_process_args(&["--max-stripes".into(), "0".into()]);
    let mut cmd = worker.command(&exe);
    cmd.env("HIP_REMOTE_STRIPES", "4");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS stripes"), "--max-stripes 0: no PASS line: {}", out.report());
    worker.assert_alive();
    assert!(!worker.log_text().contains("stripe joined"), "a worker with --max-stripes 0 granted stripes");
}

/// Descriptors and threads of process `pid` now.
#[cfg(target_os = "linux")]
fn fds_and_threads(pid: u32) -> (usize, usize) {
    let count = |what: &str| std::fs::read_dir(format!("/proc/{pid}/{what}")).map_or(usize::MAX, |d| d.count());
    (count("fd"), count("task"))
}

/// Waits (up to `limit`) until `pid`'s descriptors and threads are at most `at_most`; the
/// counts last seen.
#[cfg(target_os = "linux")]
fn settle_to(pid: u32, at_most: (usize, usize), limit: Duration) -> (usize, usize) {
    let started = Instant::now();
    loop {
        let now = fds_and_threads(pid);
        if (now.0 <= at_most.0 && now.1 <= at_most.1) || started.elapsed() > limit {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A client SIGKILLed in the middle of 256 MiB striped copies (8 stripes): afterwards the
/// worker has freed the allocation, holds no more descriptors or threads than before the
/// client came (its session and every stripe are gone), and serves a new striped client.
#[cfg(target_os = "linux")]
#[test]
fn client_killed_mid_striped_copy_leaks_nothing() {
    let sandbox = Sandbox::new("stripes_kill");
    let meminfo = sandbox.compile("meminfo");
    let victim = sandbox.compile("kill_midcopy");
    let striped = sandbox.compile("stripes");
    // Without a resume grace period: a session whose connection broke is freed at once
    // rather than kept for its client to resume it (docs/CLIENT.md, "Resume").
    let mut worker = sandbox.start_worker_in_one_process_args(&["--resume-grace-s".into(), "0".into()]);
    let pid = worker.pid();

    let before = worker.run(&meminfo, &[]);
    before.assert_success();
    let (free_before, _) = parse_meminfo(&before.stdout);
    // The meminfo client's connection is gone once its thread has ended: wait for a stable count.
    let mut baseline = fds_and_threads(pid);
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(50));
        let now = fds_and_threads(pid);
        baseline = (baseline.0.min(now.0), baseline.1.min(now.1));
    }

    let mut cmd = worker.command(&victim);
    cmd.env("HIP_REMOTE_STRIPES", "8");
    let mut client = Interactive::spawn(cmd);
    client.expect_line("READY", Duration::from_secs(60));
    // Two whole striped copies done: the next one is under way when the client dies.
    client.expect_line("COPIED 1", Duration::from_secs(60));
    let during = fds_and_threads(pid);
    assert!(during.0 >= baseline.0 + 9, "the session and its 8 stripes hold descriptors: {during:?} vs {baseline:?} before");
    std::thread::sleep(Duration::from_millis(30));
    client.kill();
    let killed = client.finish(Duration::from_secs(10));
    assert!(!killed.stdout.contains("NOT KILLED"), "the client finished before it was killed");
    assert_eq!(worker.log_text().matches("stripe joined").count(), 8, "the victim's copies were not striped");

    let after = worker.run(&meminfo, &["wait", &free_before.to_string(), "10"]);
    after.assert_success();
    assert_eq!(parse_meminfo(&after.stdout).0, free_before, "free memory after the killed client's session ended");
    let settled = settle_to(pid, baseline, Duration::from_secs(10));
    assert!(settled.0 <= baseline.0, "descriptors leaked: {} now, {} before the client", settled.0, baseline.0);
    assert!(settled.1 <= baseline.1, "threads leaked: {} now, {} before the client", settled.1, baseline.1);
    worker.assert_alive();

    let mut cmd = worker.command(&striped);
    cmd.env("HIP_REMOTE_STRIPES", "4");
    let out = run_with_timeout(cmd, RUN_TIMEOUT);
    out.assert_success();
    assert!(out.stdout.contains("PASS stripes"), "no PASS line: {}", out.report());
}

/// ROCm 7's answers that ROCm's hip-tests check: tracer API names, hipKernelNameRef, the
/// external semaphore calls' argument checks, never-created streams, and a query of the null
/// stream seeing the blocking streams' pending work, invalid asynchronous copies refused at
/// the call; with two devices, peer copies past an allocation and events recorded on another
/// device's stream.
#[test]
fn hip_tests_answers() {
    let sandbox = Sandbox::new("hip_tests_answers");
    let exe = sandbox.compile("hip_tests_answers");
    let mut worker = sandbox.start_worker_devices(2);
    let out = worker.run(&exe, &[]);
    out.assert_success();
    assert!(out.stdout.contains("two-device checks ran"), "the two-device checks did not run: {}", out.report());
    assert!(out.stdout.contains("PASS hip_tests_answers"), "no PASS line: {}", out.report());
    worker.assert_alive();
}

/// ROCm 7's answers where hip-remote once drifted: errors of posted calls at the call
/// (destroyed streams, memory HIP did not allocate), NULL events, memsets of pinned host memory.
#[test]
fn rocm_conformance() {
    run_program("rocm_conformance");
}

/// `hip/hip_runtime.h` under a plain C++ compiler (`$CXX`, else `c++`): standard headers after
/// it, `hipCreateChannelDesc<T>()`, the kernel-typed occupancy forms, `hipChooseDevice`.
#[test]
fn cxx_host_headers() {
    let cxx = std::env::var("CXX").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "c++".into());
    let sandbox = Sandbox::new("cxx_host_headers");
    let src = sandbox.artifacts.c_dir.join("../cxx/host_headers.cpp");
    let exe = sandbox.path().join("host_headers");
    let lib = sandbox.lib_dir();
    let out = std::process::Command::new(&cxx)
        .args(["-std=c++17", "-Wall", "-Werror", "-I"])
        .arg(&sandbox.artifacts.include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg("-lamdhip64")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C++ compiler `{cxx}`: {e}"));
    assert!(out.status.success(), "compiling host_headers.cpp failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let mut worker = sandbox.start_worker();
    let run = worker.run(&exe, &[]);
    run.assert_success();
    assert!(run.stdout.contains("PASS host_headers"), "no PASS line: {}", run.report());
    worker.assert_alive();
}
