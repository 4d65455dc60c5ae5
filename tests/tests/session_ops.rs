//! The `session_ops` fuzz target's inputs as tests, on stable Rust: every seed in
//! `fuzz/corpus/session_ops/` and every kept crash in `fuzz/regressions/session_ops/` runs
//! through [`hip_remote_pair::ops::run`], which asserts the model's properties. The seeds are
//! the scripted sequences below; `HIP_REMOTE_WRITE_CORPUS=1` writes them afresh.

use hip_remote_pair::ops::{self, encode_input, Op, Span};
use hip_remote_pair::Pair;
use std::path::{Path, PathBuf};

fn span(buf: u8, offset: u16, len: u16) -> Span {
    Span { buf, offset, len }
}

/// Unchecked: may run past the buffer's end.
fn loose(buf: u8, offset: u16, len: u16) -> Span {
    Span { buf, offset, len: len | 0x8000 }
}

/// Named scripted sequences: each reaches one part of the model.
fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    use Op::*;
    let basic = vec![
        Malloc { size: 4096 },
        Upload { span: span(0, 0, 4096), seed: 7, stream: 0 },
        Memset { span: span(0, 100, 50), value: 0xab, stream: 0 },
        Download { span: span(0, 0, 4096), stream: 0 },
        Malloc { size: 1000 },
        Copy { dst: span(1, 0, 0), src: span(0, 90, 1000), stream: 0 },
        Download { span: span(1, 0, 1000), stream: 0 },
        Free { buf: 0 },
    ];
    let streams = vec![
        Malloc { size: 8192 },
        Malloc { size: 8192 },
        StreamCreate,
        StreamCreate,
        EventCreate,
        Upload { span: span(0, 0, 8192), seed: 3, stream: 1 },
        EventRecord { event: 0, stream: 1 },
        StreamWaitEvent { stream: 2, event: 0 },
        Copy { dst: span(1, 0, 0), src: span(0, 0, 8192), stream: 2 },
        Memset { span: span(0, 0, 16), value: 9, stream: 1 },
        Download { span: span(1, 0, 8192), stream: 2 },
        EventSynchronize { event: 0 },
        EventQuery { event: 0 },
        StreamSynchronize { stream: 1 },
        Download { span: span(0, 0, 64), stream: 1 },
        StreamDestroy { stream: 2 },
        EventDestroy { event: 0 },
    ];
    let racing = vec![
        Malloc { size: 4096 },
        StreamCreate,
        StreamCreate,
        Memset { span: span(0, 0, 4096), value: 1, stream: 1 },
        Memset { span: span(0, 1024, 1024), value: 2, stream: 2 },
        Download { span: span(0, 0, 4096), stream: 1 },
        DeviceSynchronize,
        Download { span: span(0, 0, 4096), stream: 0 },
    ];
    let graph = vec![
        Malloc { size: 2048 },
        StreamCreate,
        Memset { span: span(0, 0, 2048), value: 0, stream: 0 },
        GraphMemset { span: span(0, 512, 256), value: 0x5a, stream: 1 },
        Download { span: span(0, 0, 2048), stream: 1 },
        GraphMemset { span: span(0, 0, 100), value: 0x11, stream: 0 },
        Download { span: span(0, 0, 2048), stream: 0 },
    ];
    let stale = vec![
        Malloc { size: 512 },
        Malloc { size: 512 },
        Upload { span: span(1, 0, 512), seed: 5, stream: 0 },
        Free { buf: 0 },
        Free { buf: 0 },
        Memset { span: span(0, 0, 16), value: 1, stream: 0 },
        Upload { span: span(0, 0, 16), seed: 1, stream: 0 },
        Download { span: span(0, 0, 16), stream: 0 },
        Copy { dst: span(1, 0, 0), src: span(0, 0, 16), stream: 0 },
        StreamCreate,
        StreamDestroy { stream: 1 },
        StreamDestroy { stream: 1 },
        Memset { span: span(1, 0, 16), value: 1, stream: 1 },
        StreamSynchronize { stream: 1 },
        EventCreate,
        EventDestroy { event: 0 },
        EventRecord { event: 0, stream: 0 },
        EventSynchronize { event: 0 },
        StreamWaitEvent { stream: 0, event: 0 },
        EventDestroy { event: 0 },
        Download { span: span(1, 0, 512), stream: 0 },
    ];
    let out_of_bounds = vec![
        Malloc { size: 300 },
        Memset { span: loose(0, 200, 200), value: 1, stream: 0 },
        Upload { span: loose(0, 299, 2), seed: 1, stream: 0 },
        Download { span: loose(0, 0, 301), stream: 0 },
        Copy { dst: loose(0, 250, 0), src: span(0, 0, 100), stream: 0 },
        Memset { span: span(0, 0, 300), value: 4, stream: 0 },
        Download { span: span(0, 0, 300), stream: 0 },
    ];
    let idle = vec![
        Malloc { size: 64 },
        Memset { span: span(0, 0, 64), value: 8, stream: 0 },
        Idle { millis: 65535 },
        Download { span: span(0, 0, 64), stream: 0 },
        Idle { millis: 40000 },
        DeviceSynchronize,
    ];
    let mut out = vec![
        ("basic", encode_input(false, &basic)),
        ("streams", encode_input(false, &streams)),
        ("racing", encode_input(false, &racing)),
        ("graph", encode_input(false, &graph)),
        ("stale", encode_input(false, &stale)),
        ("out_of_bounds", encode_input(false, &out_of_bounds)),
        ("idle", encode_input(false, &idle)),
    ];
    // A broken connection: resumed, or (without RESUME) every later call fails.
    let mut broken = vec![Op::Break { after: 3 }];
    broken.extend_from_slice(&streams);
    out.push(("break_resumed", encode_input(true, &broken)));
    out.push(("break_lost", encode_input(false, &broken)));
    out
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).map(|d| d.map(|e| e.expect("entry").path()).collect()).unwrap_or_default();
    files.sort();
    files
}

#[test]
fn ops_encode_and_decode_back() {
    for (name, input) in seeds() {
        let mut rest = &input[1..];
        let mut again = Vec::new();
        while let Some(op) = Op::decode(&mut rest) {
            again.push(op);
        }
        assert_eq!(encode_input(input[0] & 1 != 0, &again), input, "{name}");
    }
}

#[test]
fn the_committed_seeds_are_the_scripted_sequences() {
    let dir = root().join("fuzz/corpus/session_ops");
    if std::env::var_os("HIP_REMOTE_WRITE_CORPUS").is_some() {
        std::fs::create_dir_all(&dir).expect("corpus dir");
        for f in files(&dir) {
            std::fs::remove_file(f).expect("old seed");
        }
        for (name, input) in seeds() {
            std::fs::write(dir.join(format!("{name}.bin")), input).expect("seed");
        }
    }
    let on_disk: Vec<(String, Vec<u8>)> =
        files(&dir).into_iter().map(|f| (f.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read(&f).expect("seed"))).collect();
    let want: Vec<(String, Vec<u8>)> = {
        let mut w: Vec<_> = seeds().into_iter().map(|(n, i)| (n.to_owned(), i)).collect();
        w.sort();
        w
    };
    assert_eq!(on_disk, want, "fuzz/corpus/session_ops/ is stale: HIP_REMOTE_WRITE_CORPUS=1 cargo test -p hip-remote-tests --test session_ops");
}

/// Every seed and every kept crash input runs clean: the model's properties hold.
#[test]
fn seeds_and_regressions_hold_the_models_properties() {
    let backend = Pair::backend();
    let mut inputs = seeds().into_iter().map(|(n, i)| (n.to_owned(), i)).collect::<Vec<_>>();
    for f in files(&root().join("fuzz/regressions/session_ops")) {
        inputs.push((f.display().to_string(), std::fs::read(&f).expect("regression input")));
    }
    for (name, input) in inputs {
        let stats = ops::run(&backend, &input);
        eprintln!("session_ops: {name}: {stats:?}");
        assert!(stats.bytes_checked > 0 || stats.lost, "{name}: nothing was checked: {stats:?}");
    }
}

/// The sequences reach what they were written for: refusals, races, a resume, a lost link.
#[test]
fn the_seeds_reach_refusals_resumes_and_a_lost_connection() {
    let backend = Pair::backend();
    let stats = |name: &str| ops::run(&backend, &seeds().into_iter().find(|(n, _)| *n == name).expect("seed").1);
    let stale = stats("stale");
    assert_eq!(stale.refused, 12, "{stale:?}");
    let oob = stats("out_of_bounds");
    assert_eq!(oob.refused, 4, "{oob:?}");
    assert_eq!(oob.bytes_checked, 2 * 300, "{oob:?}");
    // Two streams write one range unordered: the download racing them is not checked, and
    // the range they both wrote stays unknown after the synchronize.
    let racing = stats("racing");
    assert_eq!(racing.bytes_checked, 2 * (4096 - 1024), "{racing:?}");
    let resumed = stats("break_resumed");
    assert_eq!((resumed.resumes, resumed.lost), (1, false), "{resumed:?}");
    let lost = stats("break_lost");
    assert_eq!((lost.resumes, lost.lost), (0, true), "{lost:?}");
}
