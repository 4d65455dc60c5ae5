//! What a session process executes on ([`BackendSpec`]), how the worker tells it on the
//! command line, and what a GPU session process inherits from the worker's environment.

use crate::backend::HostConfig;
use crate::devices::{parse_device_list, DeviceSelection};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a session process's selection says it came from: the worker resolved `--devices` /
/// `HIP_VISIBLE_DEVICES` already and passes the ordinals on.
pub const INHERITED_SELECTION: &str = "the worker's device selection";

/// Variables a GPU session process inherits from the worker, so that its driver sees the
/// same devices in the same order (the selection's ordinals count in the driver's list),
/// finds the same libraries, and reaches an MPS server the worker would reach. Everything
/// else is cleared (the worker's environment holds its token).
pub const GPU_ENVIRONMENT: &[&str] = &[
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_MPS_PIPE_DIRECTORY",
    "CUDA_MPS_LOG_DIRECTORY",
    "CUDA_MODULE_LOADING",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "HSA_OVERRIDE_GFX_VERSION",
    "ROCM_PATH",
    "LD_LIBRARY_PATH",
];

/// Variables every session process inherits (the host hiprtc's compiler and the locale).
pub const COMMON_ENVIRONMENT: &[&str] = &["HIP_REMOTE_CXX", "HIP_REMOTE_CXX_TIMEOUT", "LANG", "LC_ALL"];

/// The CUDA driver's JIT cache of a tenant (PTX compiled for the device), inside the
/// tenant's compile cache directory (whose sweep removes files, never this directory), so
/// a tenant's PTX is compiled once, not once per session process.
pub const CUDA_JIT_CACHE_DIR: &str = "cuda-jit";
/// Most bytes of one tenant's CUDA JIT cache (`CUDA_CACHE_MAXSIZE`; the driver evicts the
/// oldest entries past it).
pub const CUDA_JIT_CACHE_MAX_BYTES: u64 = 1 << 30;

/// What a session process builds to serve its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendSpec {
    /// Host emulation: with host code allowed (the host sessions that run in processes of
    /// their own), or without, in a shared session process (a test aid, `--shared-process`).
    Host(HostConfig),
    /// NVIDIA GPUs through the CUDA driver: a context of the process's own per device.
    Cuda {
        /// The worker's devices, in its order (`None`: every device the driver lists).
        selection: Option<DeviceSelection>,
    },
    /// AMD GPUs through the HIP runtime.
    Hip {
        /// The `libamdhip64` the worker resolved (`--hip-library`).
        library: PathBuf,
        /// As for [`BackendSpec::Cuda`].
        selection: Option<DeviceSelection>,
    },
}

impl BackendSpec {
    /// The backend's name (as `DeviceBackend::name` reports it).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Host(_) => "host",
            Self::Cuda { .. } => "cuda",
            Self::Hip { .. } => "hip",
        }
    }

    /// Whether the process drives a GPU (its confinement lets the driver reach the device).
    pub fn gpu(&self) -> Option<super::confine::GpuVendor> {
        match self {
            Self::Host(_) => None,
            Self::Cuda { .. } => Some(super::confine::GpuVendor::Nvidia),
            Self::Hip { .. } => Some(super::confine::GpuVendor::Amd),
        }
    }

    /// `KEY=VALUE` arguments of a session process's command line.
    pub(super) fn to_args(&self) -> Vec<String> {
        let mut args = vec![format!("backend={}", self.name())];
        let selection = match self {
            Self::Host(host) => {
                args.push(format!("devices={}", host.devices));
                args.push(format!("memory={}", host.memory_per_device));
                args.push(format!("stream-threads={}", host.stream_threads));
                args.push(format!("host-code={}", u8::from(host.allow_host_code)));
                None
            }
            Self::Cuda { selection } => selection.as_ref(),
            Self::Hip { library, selection } => {
                args.push(format!("hip-library={}", library.display()));
                selection.as_ref()
            }
        };
        if let Some(selection) = selection {
            let list: Vec<String> = selection.ordinals.iter().map(u32::to_string).collect();
            args.push(format!("select={}", list.join(",")));
        }
        args
    }

    /// Parses [`to_args`](Self::to_args)'s keys out of `map`.
    pub(super) fn parse(map: &HashMap<String, String>) -> Result<Self, String> {
        let get = |key: &str| map.get(key).cloned().ok_or_else(|| format!("missing {key}="));
        let number = |key: &str| get(key)?.parse::<u64>().map_err(|e| format!("{key}=: {e}"));
        let selection = map
            .get("select")
            .map(|list| parse_device_list(list).map(|ordinals| DeviceSelection { ordinals, source: INHERITED_SELECTION }))
            .transpose()
            .map_err(|e| format!("select=: {e}"))?;
        match get("backend")?.as_str() {
            "host" => Ok(Self::Host(HostConfig {
                devices: u32::try_from(number("devices")?).map_err(|e| format!("devices=: {e}"))?,
                memory_per_device: number("memory")?,
                allow_host_code: map.get("host-code").is_none_or(|v| v != "0"),
                stream_threads: usize::try_from(number("stream-threads")?).map_err(|e| format!("stream-threads=: {e}"))?,
            })),
            "cuda" => Ok(Self::Cuda { selection }),
            "hip" => Ok(Self::Hip { library: get("hip-library")?.into(), selection }),
            other => Err(format!("backend={other}: expected host, cuda or hip")),
        }
    }

    /// The environment of a session process beyond `PATH`, `TMPDIR` and `HOME`: the common
    /// variables, a GPU process's [`GPU_ENVIRONMENT`], and a CUDA process's JIT cache in
    /// `tenant_cache` (the tenant's compile cache directory) when there is one.
    pub fn child_environment(&self, tenant_cache: Option<&Path>) -> Vec<(OsString, OsString)> {
        let inherited = COMMON_ENVIRONMENT.iter().chain(if self.gpu().is_some() { GPU_ENVIRONMENT } else { &[] });
        let mut env: Vec<(OsString, OsString)> = inherited.filter_map(|&name| std::env::var_os(name).map(|value| (name.into(), value))).collect();
        if let (Self::Cuda { .. }, Some(dir)) = (self, tenant_cache) {
            env.push(("CUDA_CACHE_PATH".into(), dir.join(CUDA_JIT_CACHE_DIR).into()));
            env.push(("CUDA_CACHE_MAXSIZE".into(), CUDA_JIT_CACHE_MAX_BYTES.to_string().into()));
        }
        env
    }

    /// Directories whose libraries the process loads beyond the system's (read-only there):
    /// the HIP library's directory, and `LD_LIBRARY_PATH`'s entries for a GPU process.
    pub fn library_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        if let Self::Hip { library, .. } = self {
            if let Some(dir) = library.parent().filter(|d| !d.as_os_str().is_empty()) {
                dirs.push(dir.to_path_buf());
            }
        }
        if self.gpu().is_some() {
            if let Some(paths) = std::env::var_os("LD_LIBRARY_PATH") {
                dirs.extend(std::env::split_paths(&paths).filter(|p| p.is_absolute()));
            }
        }
        dirs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(spec: &BackendSpec) -> BackendSpec {
        let map = spec.to_args().into_iter().map(|a| a.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())).unwrap()).collect();
        BackendSpec::parse(&map).unwrap()
    }

    #[test]
    fn every_backend_spec_survives_the_command_line() {
        let selection = Some(DeviceSelection { ordinals: vec![2, 0], source: INHERITED_SELECTION });
        let host = BackendSpec::Host(HostConfig { devices: 3, memory_per_device: 5 << 30, allow_host_code: true, stream_threads: 7 });
        let specs = [
            host,
            BackendSpec::Host(HostConfig { devices: 1, memory_per_device: 1 << 30, allow_host_code: false, stream_threads: 2 }),
            BackendSpec::Cuda { selection: None },
            BackendSpec::Cuda { selection: selection.clone() },
            BackendSpec::Hip { library: "/opt/rocm-7.0.0/lib/libamdhip64.so".into(), selection: None },
            BackendSpec::Hip { library: "libamdhip64.so".into(), selection },
        ];
        for spec in &specs {
            assert_eq!(&round_trip(spec), spec);
        }
    }

    #[test]
    fn a_bad_backend_spec_is_refused_by_name() {
        let map = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<HashMap<_, _>>();
        let err = BackendSpec::parse(&map(&[("backend", "tpu")])).unwrap_err();
        assert!(err.contains("backend=tpu"), "{err}");
        assert!(BackendSpec::parse(&map(&[("backend", "hip")])).unwrap_err().contains("hip-library="));
        assert!(BackendSpec::parse(&map(&[("backend", "cuda"), ("select", "0,0")])).unwrap_err().contains("select="));
        assert!(BackendSpec::parse(&map(&[("backend", "host"), ("devices", "1")])).unwrap_err().contains("memory="));
    }

    #[test]
    fn only_a_cuda_process_gets_a_jit_cache_and_only_gpu_processes_the_driver_variables() {
        let tenant = Path::new("/var/cache/hip-remote/rtc/0123abcd");
        let cuda = BackendSpec::Cuda { selection: None }.child_environment(Some(tenant));
        let cache = cuda.iter().find(|(k, _)| k == "CUDA_CACHE_PATH").map(|(_, v)| PathBuf::from(v));
        assert_eq!(cache.as_deref(), Some(tenant.join(CUDA_JIT_CACHE_DIR).as_path()));
        assert!(cuda.iter().any(|(k, v)| k == "CUDA_CACHE_MAXSIZE" && *v == *CUDA_JIT_CACHE_MAX_BYTES.to_string()));
        let hip = BackendSpec::Hip { library: "libamdhip64.so".into(), selection: None }.child_environment(Some(tenant));
        assert!(!hip.iter().any(|(k, _)| k == "CUDA_CACHE_PATH"));
        assert!(!BackendSpec::Cuda { selection: None }.child_environment(None).iter().any(|(k, _)| k == "CUDA_CACHE_PATH"));
        // The driver's variables are never passed to a host session process.
        let host = BackendSpec::Host(HostConfig::default());
        assert!(GPU_ENVIRONMENT.iter().all(|name| !host.child_environment(None).iter().any(|(k, _)| k == name)));
    }

    #[test]
    fn the_hip_library_directory_is_readable_by_its_process() {
        let hip = BackendSpec::Hip { library: "/home/ops/rocm/lib/libamdhip64.so".into(), selection: None };
        assert!(hip.library_dirs().contains(&PathBuf::from("/home/ops/rocm/lib")));
        let bare = BackendSpec::Hip { library: "libamdhip64.so".into(), selection: None };
        assert!(!bare.library_dirs().iter().any(|d| d.as_os_str().is_empty()));
        assert!(BackendSpec::Host(HostConfig::default()).library_dirs().is_empty());
    }
}
