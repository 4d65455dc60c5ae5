//! The link figures of the client, per client configuration ("variant"): the bench
//! re-executes itself as `hip-remote bench-variant` (hidden) with the variant's environment,
//! so each variant gets a fresh client library that reads its settings (transport, stripes)
//! at its first call, exactly as an application started with that environment would.
//!
//! The child prints one line `result {json}` on stdout with its figures ([`Figures`]); other
//! lines are ignored. With `--profile DIR` it samples itself (the client's side; the worker's
//! side is in the parent's profile of the same section).

use crate::hip::Hip;
use serde_json::{json, Value};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one child measures (sizes from the parent).
#[derive(Clone, Debug)]
pub struct Plan {
    /// Bytes of each large copy (256 MiB by default).
    pub big_bytes: usize,
    /// Large copies per figure, after one warm-up.
    pub big_reps: usize,
    /// Samples of the 4 KiB copy and of the sync call.
    pub samples: usize,
    /// `hipMalloc` + `hipFree` pairs (then one `hipDeviceSynchronize`).
    pub allocs: usize,
    /// Bytes of each allocation.
    pub alloc_bytes: usize,
}

/// Bytes of the small host-to-device copy.
pub const SMALL_COPY: usize = 4096;

/// Bytes of the middle-sized pinned copy (one 1 MiB `hipMemcpy`: below the stripes'
/// threshold, so one connection's or the same-host transport's own rate).
pub const MID_COPY: usize = 1 << 20;

/// Middle-sized copies per figure from `samples` (after one warm-up): enough to average
/// out a scheduling hiccup, few enough for a quick run.
pub fn mid_copy_reps(samples: usize) -> usize {
    (samples / 10).clamp(8, 200)
}

/// A client configuration to measure.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    /// Environment the child gets on top of the bench's own.
    pub env: Vec<(String, String)>,
    /// Why the variant cannot run in this build or setup (reported, not measured).
    pub unavailable: Option<String>,
}

/// The variants `names` asks for. `shm_worker`: the `shm://` address of a worker on this
/// host with a shared-memory listener (the embedded one's, once it has one), if any.
pub fn variants(names: &[String], shm_worker: Option<&str>) -> Result<Vec<Variant>, String> {
    names
        .iter()
        .map(|name| {
            let env = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            Ok(match name.as_str() {
                "tcp" => Variant { name: name.clone(), env: env(&[("HIP_REMOTE_STRIPES", "0"), ("HIP_REMOTE_SHM", "off")]), unavailable: None },
                "tcp-striped" => {
                    Variant { name: name.clone(), env: env(&[("HIP_REMOTE_STRIPES", "8"), ("HIP_REMOTE_SHM", "off")]), unavailable: None }
                }
                "shm" => match shm_worker {
                    Some(addr) => Variant { name: name.clone(), env: env(&[("HIP_REMOTE_WORKER", addr)]), unavailable: None },
                    None => Variant {
                        name: name.clone(),
                        env: Vec::new(),
                        unavailable: Some("not available: no worker with a shared-memory listener (`--shm-worker shm:///PATH`)".into()),
                    },
                },
                other => match other.strip_prefix("tcp-striped:").map(str::parse::<u32>) {
                    // `tcp-striped:N`: N stripes, to measure the default against others.
                    Some(Ok(n)) => Variant {
                        name: name.clone(),
                        env: vec![("HIP_REMOTE_STRIPES".into(), n.to_string()), ("HIP_REMOTE_SHM".into(), "off".into())],
                        unavailable: None,
                    },
                    _ => return Err(format!("unknown variant {other:?} (tcp, tcp-striped, tcp-striped:N, shm)")),
                },
            })
        })
        .collect()
}

/// The figures of one variant.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    pub h2d_pinned: f64,
    pub d2h_pinned: f64,
    pub h2d_pageable: f64,
    pub d2h_pageable: f64,
    /// `(h2d, d2h)` GB/s of [`MID_COPY`]-byte `hipMemcpy`s from and to `hipHostMalloc` memory.
    pub mid_pinned: (f64, f64),
    /// 4 KiB host-to-device `hipMemcpy` from `hipHostMalloc` memory, worker idle, p50 µs.
    pub small_pinned_h2d_p50_us: f64,
    /// 4 KiB host-to-device `hipMemcpy` from pageable memory, p50 µs, each copy made with
    /// the worker idle (an untimed `hipDeviceSynchronize` before it): the call's latency.
    pub small_h2d_p50_us: f64,
    /// The same copies back to back, mean µs per copy: the sustained rate, which a worker
    /// that completes each copy in order bounds.
    pub small_h2d_back_to_back_us: f64,
    /// `hipDeviceSynchronize` with nothing queued, p50 µs.
    pub sync_p50_us: f64,
    /// The whole allocation loop and its synchronize, ms.
    pub allocs_ms: f64,
}

impl Figures {
    pub fn json(&self) -> Value {
        json!({
            "h2d_pinned_gbps": self.h2d_pinned, "d2h_pinned_gbps": self.d2h_pinned,
            "h2d_pageable_gbps": self.h2d_pageable, "d2h_pageable_gbps": self.d2h_pageable,
            "h2d_pinned_1mib_gbps": self.mid_pinned.0, "d2h_pinned_1mib_gbps": self.mid_pinned.1, "small_pinned_h2d_p50_us": self.small_pinned_h2d_p50_us,
            "small_h2d_p50_us": self.small_h2d_p50_us, "small_h2d_back_to_back_us": self.small_h2d_back_to_back_us, "sync_p50_us": self.sync_p50_us, "allocs_ms": self.allocs_ms,
        })
    }

    fn from_json(v: &Value) -> Result<Self, String> {
        let f = |k: &str| v.get(k).and_then(Value::as_f64).ok_or_else(|| format!("the child's result has no {k}"));
        Ok(Self {
            h2d_pinned: f("h2d_pinned_gbps")?,
            d2h_pinned: f("d2h_pinned_gbps")?,
            h2d_pageable: f("h2d_pageable_gbps")?,
            d2h_pageable: f("d2h_pageable_gbps")?,
            mid_pinned: (f("h2d_pinned_1mib_gbps")?, f("d2h_pinned_1mib_gbps")?),
            small_pinned_h2d_p50_us: f("small_pinned_h2d_p50_us")?,
            small_h2d_p50_us: f("small_h2d_p50_us")?,
            small_h2d_back_to_back_us: f("small_h2d_back_to_back_us")?,
            sync_p50_us: f("sync_p50_us")?,
            allocs_ms: f("allocs_ms")?,
        })
    }
}

/// The median of `samples`, µs.
pub fn p50_us(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples.get(samples.len() / 2).map_or(f64::NAN, |d| d.as_secs_f64() * 1e6)
}

/// Runs `variant` in a child process; its figures.
pub fn run(lib: &Path, variant: &Variant, plan: &Plan, profile: Option<&Path>) -> Result<Figures, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&exe);
    cmd.args(["bench-variant", "--lib"]).arg(lib);
    for (flag, value) in [
        ("--big-bytes", plan.big_bytes),
        ("--big-reps", plan.big_reps),
        ("--samples", plan.samples),
        ("--allocs", plan.allocs),
        ("--alloc-bytes", plan.alloc_bytes),
    ] {
        cmd.args([flag, &value.to_string()]);
    }
    if let Some(dir) = profile {
        cmd.arg("--profile").arg(dir.join(format!("variant-{}", variant.name)));
    }
    cmd.envs(variant.env.iter().map(|(k, v)| (k, v))).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let out = cmd.output().map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("result "))
        .ok_or_else(|| format!("the {} child gave no result ({}; its stderr is above)", variant.name, out.status))?;
    let value: Value = serde_json::from_str(line).map_err(|e| format!("the {} child's result: {e}", variant.name))?;
    Figures::from_json(&value)
}

/// The child's side: measures `plan` through the client library `lib` and prints the result.
pub fn child_main(lib: &PathBuf, plan: &Plan, profile: Option<&Path>) -> Result<(), String> {
    let hip = Hip::load(lib)?;
    let profiler = profile.map(|dir| crate::profile::SectionProfile::start(dir, "client")).transpose()?;
    let figures = measure(&hip, plan)?;
    if let Some(p) = profiler {
        for path in p.finish()? {
            eprintln!("wrote {}", path.display());
        }
    }
    println!("result {}", figures.json());
    Ok(())
}

fn measure(hip: &Hip, plan: &Plan) -> Result<Figures, String> {
    let big = plan.big_bytes.max(SMALL_COPY);
    let mut figures = Figures::default();
    let (mut dev, mut pinned) = (std::ptr::null_mut::<c_void>(), std::ptr::null_mut::<c_void>());
    // SAFETY: HIP API contracts: valid out-pointers, buffers of `big` bytes.
    unsafe {
        hip.check("hipMalloc", (hip.malloc)(&mut dev, big))?;
        hip.check("hipHostMalloc", (hip.host_malloc)(&mut pinned, big, 0))?;
        std::ptr::write_bytes(pinned as *mut u8, 5, big);
    }
    let mut pageable = vec![6u8; big];
    let result = (|| -> Result<(), String> {
        let gbps = |h2d: bool, host: *mut c_void, len: usize, reps: usize| -> Result<f64, String> {
            let (dst, src, kind) = if h2d { (dev, host as *const c_void, 1) } else { (host, dev as *const c_void, 2) };
            // SAFETY: `dev` and `host` hold `big` bytes, at least `len`.
            let once = || hip.check("hipMemcpy", unsafe { (hip.memcpy)(dst, src, len, kind) });
            once()?;
            let t = Instant::now();
            for _ in 0..reps.max(1) {
                once()?;
            }
            Ok((len * reps.max(1)) as f64 / t.elapsed().as_secs_f64() / 1e9)
        };
        figures.h2d_pinned = gbps(true, pinned, big, plan.big_reps)?;
        figures.d2h_pinned = gbps(false, pinned, big, plan.big_reps)?;
        figures.h2d_pageable = gbps(true, pageable.as_mut_ptr().cast(), big, plan.big_reps)?;
        figures.d2h_pageable = gbps(false, pageable.as_mut_ptr().cast(), big, plan.big_reps)?;
        let mid = MID_COPY.min(big);
        figures.mid_pinned = (gbps(true, pinned, mid, mid_copy_reps(plan.samples))?, gbps(false, pinned, mid, mid_copy_reps(plan.samples))?);

        // 4 KiB copies, each made with the worker idle (an untimed synchronize before it).
        let idle_p50 = |host: *const c_void| -> Result<f64, String> {
            let mut samples = Vec::with_capacity(plan.samples);
            for i in 0..plan.samples + plan.samples / 10 {
                // SAFETY: no arguments.
                hip.check("hipDeviceSynchronize", unsafe { (hip.device_synchronize)() })?;
                let t = Instant::now();
                // SAFETY: `host` holds at least 4 KiB, `dev` too.
                hip.check("hipMemcpy", unsafe { (hip.memcpy)(dev, host, SMALL_COPY, 1) })?;
                if i >= plan.samples / 10 {
                    samples.push(t.elapsed());
                }
            }
            Ok(p50_us(samples))
        };
        figures.small_pinned_h2d_p50_us = idle_p50(pinned as *const c_void)?;
        let small = pageable.as_ptr().cast::<c_void>();
        // SAFETY: `small` holds at least 4 KiB, `dev` too.
        let copy_small = || hip.check("hipMemcpy", unsafe { (hip.memcpy)(dev, small, SMALL_COPY, 1) });
        figures.small_h2d_p50_us = idle_p50(small)?;
        // SAFETY: no arguments.
        hip.check("hipDeviceSynchronize", unsafe { (hip.device_synchronize)() })?;
        let t = Instant::now();
        for _ in 0..plan.samples {
            copy_small()?;
        }
        // SAFETY: no arguments.
        hip.check("hipDeviceSynchronize", unsafe { (hip.device_synchronize)() })?;
        figures.small_h2d_back_to_back_us = t.elapsed().as_secs_f64() * 1e6 / plan.samples.max(1) as f64;

        let mut samples = Vec::with_capacity(plan.samples);
        for i in 0..plan.samples + plan.samples / 10 {
            let t = Instant::now();
            // SAFETY: no arguments.
            hip.check("hipDeviceSynchronize", unsafe { (hip.device_synchronize)() })?;
            if i >= plan.samples / 10 {
                samples.push(t.elapsed());
            }
        }
        figures.sync_p50_us = p50_us(samples);

        let t = Instant::now();
        for _ in 0..plan.allocs {
            let mut p = std::ptr::null_mut();
            // SAFETY: a valid out-pointer; the allocation is freed at once.
            unsafe {
                hip.check("hipMalloc", (hip.malloc)(&mut p, plan.alloc_bytes))?;
                hip.check("hipFree", (hip.free)(p))?;
            }
        }
        // SAFETY: no arguments.
        hip.check("hipDeviceSynchronize", unsafe { (hip.device_synchronize)() })?;
        figures.allocs_ms = t.elapsed().as_secs_f64() * 1e3;
        Ok(())
    })();
    // SAFETY: allocated above, released once.
    unsafe {
        let _ = (hip.host_free)(pinned);
        let _ = (hip.free)(dev);
    }
    result.map(|()| figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_carry_their_environment() {
        let names: Vec<String> = ["tcp", "tcp-striped", "shm"].iter().map(|s| s.to_string()).collect();
        let v = variants(&names, None).unwrap();
        assert_eq!(v[0].env[0], ("HIP_REMOTE_STRIPES".to_string(), "0".to_string()));
        assert_eq!(v[1].env[0], ("HIP_REMOTE_STRIPES".to_string(), "8".to_string()));
        assert!(v[2].unavailable.is_some(), "no shm worker: not available");
        let v = variants(&names[2..], Some("shm:///tmp/w.sock")).unwrap();
        assert_eq!(v[0].env, vec![("HIP_REMOTE_WORKER".to_string(), "shm:///tmp/w.sock".to_string())]);
        assert!(v[0].unavailable.is_none());
        assert!(variants(&["udp".to_string()], None).is_err());
        let v = variants(&["tcp-striped:12".to_string()], None).unwrap();
        assert_eq!(v[0].env[0], ("HIP_REMOTE_STRIPES".to_string(), "12".to_string()));
        assert!(variants(&["tcp-striped:many".to_string()], None).is_err());
    }
}
