//! The kernel watchdog (`--max-kernel-ms`, `docs/ISOLATION.md`): a kernel that never returns
//! ends its session with hipErrorLaunchTimeOut within a few seconds, and the same worker
//! serves the next client; stream waits held past the limit are not runaway kernels.

use hip_remote_tests::{Sandbox, WorkerProcess, DEFAULT_WORKER_MIB};
use std::time::Duration;

/// The limit the worker runs with.
const LIMIT_MS: u64 = 500;
/// How long the client may wait for the error: the limit, the watchdog's poll and the
/// process's end, with room for a loaded CI machine.
const MAX_WAIT: Duration = Duration::from_secs(20);

#[test]
fn a_kernel_past_the_limit_ends_its_session_and_the_worker_serves_the_next() {
    let sandbox = Sandbox::new("kernel_watchdog");
    let exe = sandbox.compile("kernel_watchdog");
    let limit = LIMIT_MS.to_string();
    let mut worker = WorkerProcess::start_with_args(
        &sandbox.artifacts.worker,
        DEFAULT_WORKER_MIB,
        &sandbox.path().join("worker.log"),
        &["--max-kernel-ms", &limit],
    );

    let spun = worker.run(&exe, &["spin"]);
    eprintln!("{}\n{}", spun.stdout, spun.stderr);
    spun.assert_success();
    let line = spun.stdout.lines().find(|l| l.starts_with("TIMEOUT ")).expect("a TIMEOUT line");
    let took_ms: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(took_ms >= LIMIT_MS as f64, "the error came after {took_ms} ms, before the {LIMIT_MS} ms limit");
    assert!(took_ms < MAX_WAIT.as_millis() as f64, "the error took {took_ms} ms");
    assert!(line.contains("--max-kernel-ms") || spun.stdout.contains("LaunchTimeOut") || line.contains("timed out"), "{line}");

    // Stream waits held three times the limit, a kernel queued behind them: no timeout.
    let hold = (3 * LIMIT_MS).to_string();
    let held = worker.run(&exe, &["held", &hold]);
    eprintln!("{}\n{}", held.stdout, held.stderr);
    held.assert_success();
    assert!(held.stdout.contains("HELD"), "{}", held.stdout);

    let served = worker.run(&exe, &["serve"]);
    served.assert_success();
    assert!(served.stdout.contains("SERVED"), "{}", served.stdout);
    worker.assert_alive();
    let log = worker.log_text();
    assert!(log.contains("--max-kernel-ms"), "the worker logs the watchdog's end of the session:\n{log}");
}
