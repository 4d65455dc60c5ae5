//! `HIP_REMOTE_PROFILE=1`: which HIP calls waited for the worker, how often and how long,
//! printed to stderr as a table when the process exits. Over a long link each wait is at
//! least a round trip, so the table says where a program's time goes and which calls to make
//! asynchronous.
//!
//! A wait is the driver blocking on the worker: a call's reply (keyed by the request's
//! opcode), the landing of a device-to-host copy, or a striped copy. It is attributed to the
//! HIP call the thread is in (set by `hip_boundary!` through [`entering`]).

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Distinct (call, waited-for) rows kept; further ones are counted under one overflow row.
pub const MAX_PROFILE_ROWS: usize = 512;

thread_local! {
    static CALL: Cell<&'static str> = const { Cell::new("(inside the library)") };
}

#[derive(Clone, Copy, Default)]
struct Stat {
    count: u64,
    total: Duration,
    max: Duration,
}

// C's own `atexit` (ISO C: every platform's C library has it, Windows' included).
extern "C" {
    fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
}

static ROWS: Mutex<Option<HashMap<(&'static str, String), Stat>>> = Mutex::new(None);

/// Whether `HIP_REMOTE_PROFILE` asks for the table (`1`/`on`; read once).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| match std::env::var("HIP_REMOTE_PROFILE").as_deref() {
        Err(_) | Ok("" | "0" | "off") => false,
        Ok("1" | "on") => {
            // SAFETY: registering a plain `extern "C" fn()` that takes no arguments.
            if unsafe { atexit(print_at_exit) } != 0 {
                eprintln!("hip-remote: HIP_REMOTE_PROFILE: cannot register the exit report");
            }
            true
        }
        Ok(other) => {
            eprintln!("hip-remote: HIP_REMOTE_PROFILE={other:?}: give 1 (or on) for the wait table, 0 (or off) for none; profiling stays off");
            false
        }
    })
}

/// The HIP call this thread is in from now on (the exported function's name).
pub fn entering(call: &'static str) {
    enabled();
    // `try_with`: a thread-exit destructor may call HIP after this thread's slot is gone.
    let _ = CALL.try_with(|c| c.set(call));
}

/// A wait of the driver that began at `since`, for `what` (an opcode or a copy's kind).
pub(crate) fn waited(what: impl FnOnce() -> String, since: Instant) {
    if !enabled() {
        return;
    }
    let took = since.elapsed();
    let call = CALL.try_with(Cell::get).unwrap_or("(thread exit)");
    let mut rows = ROWS.lock().unwrap_or_else(|p| p.into_inner());
    let rows = rows.get_or_insert_with(HashMap::new);
    let mut key = (call, what());
    if !rows.contains_key(&key) && rows.len() >= MAX_PROFILE_ROWS {
        key = ("(other calls)", "(more rows than the table keeps)".into());
    }
    let stat = rows.entry(key).or_default();
    stat.count += 1;
    stat.total += took;
    stat.max = stat.max.max(took);
}

/// The table of the waits so far, longest total first (empty when there were none).
pub fn table() -> String {
    let rows = ROWS.lock().unwrap_or_else(|p| p.into_inner());
    let Some(rows) = rows.as_ref().filter(|r| !r.is_empty()) else { return String::new() };
    let mut rows: Vec<_> = rows.iter().collect();
    rows.sort_by(|a, b| b.1.total.cmp(&a.1.total).then(a.0.cmp(b.0)));
    let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e3);
    let mut lines = vec![["HIP call".to_string(), "waited for".into(), "waits".into(), "total ms".into(), "mean ms".into(), "max ms".into()]];
    let (mut count, mut total) = (0u64, Duration::ZERO);
    for ((call, what), s) in rows {
        count += s.count;
        total += s.total;
        lines.push([call.to_string(), what.clone(), s.count.to_string(), ms(s.total), ms(s.total / s.count.max(1) as u32), ms(s.max)]);
    }
    lines.push(["total".into(), String::new(), count.to_string(), ms(total), String::new(), String::new()]);
    let widths: Vec<usize> = (0..6).map(|i| lines.iter().map(|l| l[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::from("hip-remote profile (HIP_REMOTE_PROFILE=1): calls that waited for the worker\n");
    for (n, l) in lines.iter().enumerate() {
        let cells: Vec<String> =
            l.iter().enumerate().map(|(i, c)| if i < 2 { format!("{c:<w$}", w = widths[i]) } else { format!("{c:>w$}", w = widths[i]) }).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
        if n == 0 {
            out.push_str(&widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
            out.push('\n');
        }
    }
    out
}

extern "C" fn print_at_exit() {
    use std::io::Write;
    let text = table();
    let text = if text.is_empty() { "hip-remote profile (HIP_REMOTE_PROFILE=1): no call waited for the worker\n".to_string() } else { text };
    // Never a panic at exit: a closed stderr just loses the table.
    let _ = std::io::stderr().write_all(text.as_bytes());
}
