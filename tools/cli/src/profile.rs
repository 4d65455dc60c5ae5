//! `hip-remote bench --profile DIR`: samples this process while each section runs, so that
//! what limits a figure is a profile, not a guess. The bench embeds the worker, so the
//! client's threads and the worker's (session reader, stream executors) are in the same
//! samples; the GPU machine has no perf, so the sampling is in-process (`pprof`: SIGPROF,
//! every thread). Per section: `<section>.svg` (a flamegraph) and `<section>.txt` (the
//! functions with the most samples, by itself and with its callees, and samples per thread).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Samples per second of the process's CPU time (`ITIMER_PROF`): prime, so it does not beat
/// with periodic work.
const SAMPLING_HZ: i32 = 997;
/// How deep the sampler's own frames can reach at the innermost end of a sample.
const SAMPLER_DEPTH: usize = 6;
/// Functions listed in each top list.
const TOP: usize = 40;

/// The flamegraph of a section that got no sample.
const NO_SAMPLES_SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"40\">\
<text x=\"10\" y=\"25\">no samples: the section was shorter than one sampling period</text></svg>\n";

/// A running profile of one section.
pub struct SectionProfile {
    guard: pprof::ProfilerGuard<'static>,
    dir: PathBuf,
    name: String,
}

/// A file name for a section name: letters, digits and dashes.
fn file_stem(name: &str) -> String {
    let mut stem: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    while stem.contains("--") {
        stem = stem.replace("--", "-");
    }
    stem.trim_matches('-').to_string()
}

impl SectionProfile {
    /// Starts sampling for section `name`, to be written into `dir`.
    pub fn start(dir: &Path, name: &str) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(SAMPLING_HZ)
            // Unwinding from a signal that landed in the unwinder itself or in the dynamic
            // loader can deadlock; libc stays sampled (memcpy, syscalls: what copies cost).
            .blocklist(&["libgcc", "ld-linux", "vdso"])
            .build()
            .map_err(|e| format!("cannot start the profiler: {e}"))?;
        Ok(Self { guard, dir: dir.to_path_buf(), name: name.to_string() })
    }

    /// Stops sampling and writes the flamegraph and the top list; returns their paths.
    pub fn finish(self) -> Result<Vec<PathBuf>, String> {
        let report = self.guard.report().frames_post_processor(strip_sampler_frames).build().map_err(|e| format!("profile of {}: {e}", self.name))?;
        let stem = file_stem(&self.name);
        let svg = self.dir.join(format!("{stem}.svg"));
        if report.data.is_empty() {
            // A section shorter than one sampling period: say so rather than leave an empty file.
            std::fs::write(&svg, NO_SAMPLES_SVG).map_err(|e| format!("{}: {e}", svg.display()))?;
        } else {
            let file = std::fs::File::create(&svg).map_err(|e| format!("{}: {e}", svg.display()))?;
            report.flamegraph(std::io::BufWriter::new(file)).map_err(|e| format!("{}: {e}", svg.display()))?;
        }
        let txt = self.dir.join(format!("{stem}.txt"));
        std::fs::write(&txt, top_functions(&self.name, &report)).map_err(|e| format!("{}: {e}", txt.display()))?;
        Ok(vec![svg, txt])
    }
}

/// Drops the sampler's own frames (the unwinder called from the signal handler) from the
/// innermost end of a sample, so the first frame is where the thread was.
fn strip_sampler_frames(frames: &mut pprof::Frames) {
    let sampler = |f: &Vec<pprof::Symbol>| f.iter().any(|s| s.name().contains("pprof::"));
    if let Some(last) = frames.frames.iter().take(SAMPLER_DEPTH).rposition(sampler) {
        frames.frames.drain(..=last);
    }
}

/// The report as text: samples per thread, then the functions with the most samples by
/// themselves (leaf frames) and with their callees (each function counted once per sample).
fn top_functions(section: &str, report: &pprof::Report) -> String {
    let mut total = 0isize;
    let mut by_thread: HashMap<String, isize> = HashMap::new();
    let mut own: HashMap<String, isize> = HashMap::new();
    let mut inclusive: HashMap<String, isize> = HashMap::new();
    for (frames, &count) in &report.data {
        total += count;
        *by_thread.entry(frames.thread_name_or_id()).or_default() += count;
        // Frames are innermost first; each frame lists its inlined functions innermost first.
        let names: Vec<String> = frames.frames.iter().flat_map(|f| f.iter().map(|s| s.name())).collect();
        if let Some(leaf) = names.first() {
            *own.entry(leaf.clone()).or_default() += count;
        }
        let mut seen = std::collections::HashSet::new();
        for n in names {
            if seen.insert(n.clone()) {
                *inclusive.entry(n).or_default() += count;
            }
        }
    }
    let pct = |n: isize| if total > 0 { n as f64 * 100.0 / total as f64 } else { 0.0 };
    let sorted = |m: HashMap<String, isize>| {
        let mut v: Vec<(String, isize)> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    };
    let mut out = String::new();
    let _ = writeln!(out, "# profile of section \"{section}\": {total} samples, one per 1/{SAMPLING_HZ} s of the process's CPU time\n");
    let _ = writeln!(out, "## samples per thread\n");
    for (thread, n) in sorted(by_thread) {
        let _ = writeln!(out, "{:>6.2} %  {n:>8}  {thread}", pct(n));
    }
    for (title, map) in [("by itself (leaf frame)", own), ("with callees (inclusive)", inclusive)] {
        let _ = writeln!(out, "\n## top {TOP} functions {title}\n");
        for (name, n) in sorted(map).into_iter().take(TOP) {
            let _ = writeln!(out, "{:>6.2} %  {n:>8}  {name}", pct(n));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_names_become_file_stems() {
        assert_eq!(file_stem("kernels (launch rate, MLP)"), "kernels-launch-rate-mlp");
        assert_eq!(file_stem("copies: 4 KiB & 256 MiB"), "copies-4-kib-256-mib");
    }
}
