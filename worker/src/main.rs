//! `hip-worker`: serves HIP runtime calls from hip-remote clients.

#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

use clap::{Parser, ValueEnum};
use hip_worker::auth::TokenStore;
use hip_worker::backend::{Backend, DeviceProperties, HostBackend, HostConfig};
use hip_worker::config::ConnectionLimits;
use hip_worker::sandbox::{BackendSpec, SessionProcess};
use hip_worker::{Worker, WorkerConfig};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Default TCP port (the seed prototype's).
const DEFAULT_PORT: u16 = 18515;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BackendKind {
    /// A GPU backend when one loads and has a device, else host emulation.
    Auto,
    /// Host-memory emulation (no GPU needed).
    Host,
    /// NVIDIA GPUs through the CUDA driver (loaded at run time).
    Cuda,
    /// AMD GPUs through the HIP runtime, libamdhip64 (loaded at run time).
    Hip,
}

/// Where the sessions of a GPU backend run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Isolation {
    /// Each session in a confined process of its own, with its own GPU context: a fault
    /// ends that session only, tenants share no address space, device limits are per session.
    Process,
    /// Every session in one shared session process, on one context per device: a sticky
    /// fault (hipErrorIllegalAddress) reaches every session of the device, and new sessions
    /// go to a new process.
    Shared,
}

/// Serve HIP runtime calls from hip-remote clients over TCP.
#[derive(Debug, Parser)]
#[command(name = "hip-worker", version = hip_remote_build_info::VERSION)]
struct Cli {
    /// Address to listen on (ADDR:PORT).
    #[arg(long, env = "HIP_REMOTE_LISTEN")]
    listen: Option<String>,
    /// Also accept RDMA connections (RoCE/InfiniBand) on ADDR:PORT, an address of an RDMA
    /// device's interface (needs a worker built with `--features rdma`).
    #[arg(long, env = "HIP_REMOTE_LISTEN_RDMA")]
    listen_rdma: Option<String>,
    /// Also serve clients on this machine through shared memory, bootstrapped on this Unix
    /// socket (mode 0600; clients: `HIP_REMOTE_WORKER=shm:///PATH`, or found automatically).
    /// Default: `$XDG_RUNTIME_DIR/hip-remote-PORT.sock` (else in /tmp), PORT the TCP port;
    /// `none` turns the same-host transport off. Linux only.
    #[arg(long, value_name = "PATH", env = "HIP_REMOTE_SHM_SOCKET")]
    shm_socket: Option<String>,
    /// Port to listen on at 127.0.0.1 (the seed's `-p`; ignored when --listen is given).
    #[arg(short = 'p', long, env = "TF_WORKER_PORT")]
    port: Option<u16>,
    /// Which backend executes the work.
    #[arg(long, value_enum, default_value = "auto", env = "HIP_REMOTE_BACKEND")]
    backend: BackendKind,
    /// Where the sessions of a GPU backend (cuda, hip) run: `process` (each in a confined
    /// process of its own, with its own GPU context) or `shared` (all in the worker, one
    /// context per device). The host backend ignores it: host code always runs in session
    /// processes, and without --allow-host-code no client code runs (docs/ISOLATION.md).
    #[arg(long, value_enum, default_value = "process", env = "HIP_REMOTE_ISOLATION")]
    isolation: Isolation,
    /// Device to expose first (GPU backends).
    #[arg(short = 'd', long, env = "TF_DEVICE_ID", default_value_t = 0)]
    device: u32,
    /// The HIP runtime the hip backend loads (default: $ROCM_PATH/lib/libamdhip64.so when it
    /// exists, else libamdhip64.so from the loader's search path); libhiprtc.so is taken from
    /// the same directory.
    #[arg(long, env = "HIP_REMOTE_HIP_LIBRARY")]
    hip_library: Option<std::path::PathBuf>,
    /// Serve only these devices, numbered from 0 in this order (`0,2`), as
    /// CUDA_VISIBLE_DEVICES does; GPU backends otherwise read HIP_VISIBLE_DEVICES (the CUDA
    /// driver applies CUDA_VISIBLE_DEVICES underneath). The host backend: ordinals below
    /// --host-devices.
    #[arg(long)]
    devices: Option<String>,
    /// The selection `--devices` / `HIP_VISIBLE_DEVICES` resolve to (set after parsing).
    #[arg(skip)]
    selection: Option<hip_worker::devices::DeviceSelection>,
    /// Emulated devices (host backend).
    #[arg(long, default_value_t = 1)]
    host_devices: u32,
    /// Memory per emulated device in MiB (host backend; default min(RAM/2, 16 GiB)).
    #[arg(long)]
    host_memory_mib: Option<u64>,
    /// Run session processes' GPU work through CUDA MPS: the worker starts its own MPS control
    /// daemon (private pipe and log directories), gives session processes its directories and
    /// stops it at exit; the worker does not start where MPS cannot (cuda backend only; AMD
    /// GPUs run several processes' queues concurrently without it). See docs/ISOLATION.md.
    #[arg(long)]
    mps: bool,
    /// Let clients load host modules and compile them with hiprtc (host backend). A host
    /// module is client code: each session then runs in a process of its own, confined
    /// (another user, Landlock, seccomp; docs/HOST_MODULES.md). Without it, kernels are
    /// refused with hipErrorNotSupported.
    #[arg(long)]
    allow_host_code: bool,
    /// Test aid: serve the host backend's sessions (without host code) in one shared session
    /// process, as `--isolation shared` serves a GPU backend's, so its fault handling can be
    /// tested without a GPU. Not for production: host code always runs in a process per session.
    #[arg(long, hide = true, conflicts_with = "allow_host_code")]
    shared_process: bool,
    /// Threads running every stream's queued work (host backend; default 2 per core): the
    /// worker's stream threads stay bounded however many streams clients create.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
    stream_threads: Option<u64>,
    /// User that session processes run as when the worker runs as root (GPU backends with
    /// --isolation process, and the host backend with --allow-host-code, run each session in
    /// a process of its own, confined; see docs/ISOLATION.md).
    #[arg(long, default_value = "nobody")]
    host_code_user: String,
    /// Largest file a session process (and the compiler it runs) may write, in MiB: scratch
    /// files, compiled modules and, on the host backend, the memory files that hold device
    /// memory, so one allocation can be no larger (with --allow-host-code). Default: 1024, or
    /// the memory per device when larger; at least 2 (a granule of device memory). A write
    /// beyond it fails, naming this flag.
    #[arg(long, value_parser = clap::value_parser!(u64).range((hip_worker::sandbox::confine::MIN_MAX_FILE_BYTES >> 20)..=(1 << 40)))]
    session_max_file_mib: Option<u64>,
    /// Where compiled hiprtc programs (and hipcc fat binaries' device source) are kept between
    /// sessions, one directory per tenant; `none` keeps them in memory only. Default:
    /// $XDG_CACHE_HOME/hip-remote/rtc, else ~/.cache/hip-remote/rtc (/var/cache/hip-remote/rtc
    /// for root).
    #[arg(long)]
    rtc_cache_dir: Option<String>,
    /// Memory for compiled hiprtc programs, MiB (shared by the sessions of the process).
    #[arg(long, default_value_t = (hip_worker::session::rtc_cache::DEFAULT_RTC_CACHE_BYTES >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(0..=1 << 16))]
    rtc_cache_mib: u64,
    /// Most bytes of device-to-host replies one session may have queued or in flight, MiB:
    /// a client that never reads its replies holds no more; copies past it fail with
    /// hipErrorOutOfMemory.
    #[arg(long, default_value_t = (hip_worker::session::DEFAULT_MAX_QUEUED_REPLY_BYTES >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_queued_reply_mib: u64,
    /// Most streams one session may hold; more are refused with hipErrorOutOfMemory.
    #[arg(long, default_value_t = hip_worker::session::MAX_STREAMS_PER_SESSION, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_session_streams: usize,
    /// Most events one session may hold; more are refused with hipErrorOutOfMemory.
    #[arg(long, default_value_t = hip_worker::session::MAX_EVENTS_PER_SESSION, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_session_events: usize,
    /// Most modules one session may have loaded; more are refused with hipErrorOutOfMemory.
    #[arg(long, default_value_t = hip_worker::session::MAX_MODULES_PER_SESSION, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_session_modules: usize,
    /// Most memory one session may hold, MiB: device allocations, buffered asynchronous
    /// uploads and device-to-host replies not yet sent, in one account (default: the
    /// device's capacity); past it, allocations and copies fail with hipErrorOutOfMemory.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_session_memory_mib: Option<u64>,
    /// Longest a kernel may run, milliseconds (default: no limit). A kernel running longer
    /// ends its session with hipErrorLaunchTimeOut: in a session process the process ends;
    /// in shared mode the device is reset, ending every session on it (docs/ISOLATION.md).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=hip_worker::watchdog::MAX_KERNEL_MS_LIMIT))]
    max_kernel_ms: Option<u64>,
    /// Most bytes of one session's asynchronous uploads received but not yet run by their
    /// stream, MiB; uploads past it fail with hipErrorOutOfMemory.
    #[arg(long, default_value_t = (hip_worker::session::DEFAULT_MAX_PENDING_BYTES >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_pending_mib: u64,
    /// Most stripe connections one session may open for its large copies (striped TCP
    /// bulk, docs/TRANSPORTS.md); 0 refuses striping. At most 16.
    #[arg(long, default_value_t = hip_worker::stripes::DEFAULT_MAX_STRIPES,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=hip_worker::stripes::MAX_STRIPES as u64))]
    max_stripes: usize,
    /// Seconds a session whose connection broke is kept for its client to resume it (the
    /// client reconnects, and nothing runs twice; docs/CLIENT.md, "Resume"); 0 frees it at
    /// once. Not offered to sessions in session processes.
    #[arg(long, default_value_t = hip_worker::resume::DEFAULT_RESUME_GRACE.as_secs(),
          value_parser = clap::value_parser!(u64).range(0..=hip_worker::resume::MAX_RESUME_GRACE.as_secs()))]
    resume_grace_s: u64,
    /// Workers (HOST:PORT, comma-separated or the flag repeated) this worker may connect to,
    /// to take the bytes of a copy between devices of two workers of a client's device list
    /// from the source worker (docs/CLIENT.md, "Copies between workers"). A name stands for
    /// every address it resolves to at each copy (a headless Service's pods). None by
    /// default: the client names the address, so only these are dialled. Serving such copies
    /// as the source needs no flag. Sessions in session processes ask the worker, which
    /// checks this list and connects for them.
    /// A worker reached over TLS is named `tls://HOST:PORT`: its certificate must be signed
    /// by a CA of --dial-workers-ca and name HOST.
    #[arg(long, value_name = "HOST:PORT", value_delimiter = ',')]
    dial_workers: Vec<String>,
    /// The CA certificates (PEM) that sign the certificates of the workers --dial-workers
    /// names as `tls://HOST:PORT`; needed for such entries.
    #[arg(long, value_name = "PEM")]
    dial_workers_ca: Option<std::path::PathBuf>,
    /// The certificate (PEM chain) this worker shows to TLS source workers that require
    /// client certificates (--tls-client-ca there); needs --dial-workers-key.
    #[arg(long, value_name = "PEM", requires_all = ["dial_workers_key", "dial_workers_ca"])]
    dial_workers_cert: Option<std::path::PathBuf>,
    /// The private key of --dial-workers-cert (PEM).
    #[arg(long, value_name = "PEM", requires = "dial_workers_cert")]
    dial_workers_key: Option<std::path::PathBuf>,
    /// Most streams of all sessions together; more are refused with hipErrorOutOfMemory.
    #[arg(long, default_value_t = hip_worker::session::MAX_WORKER_STREAMS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_worker_streams: usize,
    /// Token a client must prove it holds (HIP_REMOTE_TOKEN on the client); tenant `default`.
    /// It never crosses the wire: clients answer a challenge (HMAC-SHA256).
    #[arg(long, env = "HIP_REMOTE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// File of `tenant:token` lines (blank lines and `#` comments ignored), one token per
    /// tenant; re-read on SIGHUP. A removed tenant is refused at its next HELLO; sessions it
    /// already opened run on until they end.
    #[arg(long, env = "HIP_REMOTE_TOKEN_FILE")]
    token_file: Option<std::path::PathBuf>,
    /// Serve on a non-loopback address without any token (anyone who reaches the port can
    /// run code on this machine).
    #[arg(long)]
    insecure: bool,
    /// Serve TLS on the TCP listener with this certificate chain (PEM); clients connect to
    /// `tls://HOST:PORT`. Needs --tls-key. (No environment variable: HIP_REMOTE_TLS_CERT and
    /// HIP_REMOTE_TLS_KEY are the client's certificate.)
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<std::path::PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,
    /// Require client certificates signed by this CA (PEM); needs --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_client_ca: Option<std::path::PathBuf>,
    /// Milliseconds a connection may take to authenticate (a TLS handshake included) before
    /// it is closed.
    #[arg(long, default_value_t = hip_worker::config::PREAUTH_DEADLINE.as_millis() as u64)]
    preauth_timeout_ms: u64,
    /// Most concurrent connections; more get an error frame and are closed.
    #[arg(long, default_value_t = hip_worker::config::MAX_CONNECTIONS)]
    max_connections: usize,
    /// Most concurrent connections from one IP address.
    #[arg(long, default_value_t = hip_worker::config::MAX_CONNECTIONS_PER_ADDRESS)]
    max_connections_per_address: usize,
    /// Serve `GET /metrics` (Prometheus) and `GET /healthz` over plain HTTP on ADDR:PORT, or
    /// on 127.0.0.1:PORT given a bare port (keep it on loopback or an operator network: it
    /// has no authentication).
    #[arg(long, env = "HIP_REMOTE_METRICS", value_name = "ADDR:PORT")]
    metrics: Option<String>,
    /// Check GPUDirect RDMA readiness and exit: allocate on the cuda backend, export the
    /// allocation as a dmabuf (the handle ibv_reg_dmabuf_mr registers) and report it.
    #[arg(long, hide = true)]
    probe_dmabuf: bool,
    /// More logging (-v debug, -vv trace).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Log filter (tracing syntax, e.g. `info`, `hip_worker=debug`).
    #[arg(long, env = "HIP_REMOTE_LOG")]
    log_level: Option<String>,
}

/// Installs the log; a bad `TF_DEBUG` or log filter is refused. Returns the filter.
fn init_logging(cli: &Cli) -> Result<String, String> {
    let seed_debug = transport_core::config::flag(&transport_core::config::env_lookup, "TF_DEBUG").map_err(|e| e.to_string())?.unwrap_or(false);
    let filter = cli.log_level.clone().unwrap_or_else(|| {
        match (cli.verbose, seed_debug) {
            (0, false) => "info",
            (0, true) | (1, _) => "debug",
            _ => "trace",
        }
        .to_string()
    });
    hip_worker::logging::init(&filter, "--log-level / -v / TF_DEBUG")?;
    Ok(filter)
}

fn host_config(cli: &Cli) -> HostConfig {
    // Emulated devices are alike: serving a selection of them is serving that many.
    let devices = cli.selection.as_ref().map_or(cli.host_devices.max(1), |s| s.ordinals.len() as u32);
    let mut config = HostConfig { devices, allow_host_code: cli.allow_host_code, ..HostConfig::default() };
    if let Some(mib) = cli.host_memory_mib {
        config.memory_per_device = mib.saturating_mul(1 << 20);
    }
    if let Some(threads) = cli.stream_threads {
        config.stream_threads = threads as usize;
    }
    config
}

/// Resolves `--devices` / `HIP_VISIBLE_DEVICES` into `cli.selection`, checked against
/// `--host-devices` for the host backend (GPU backends check against their driver).
fn select_devices(cli: &mut Cli) -> Result<(), String> {
    let gpu = cli.backend != BackendKind::Host;
    let selection = hip_worker::devices::select(cli.devices.as_deref(), gpu, &transport_core::config::env_lookup)?;
    if let (Some(selection), BackendKind::Host) = (&selection, cli.backend) {
        selection.check(cli.host_devices.max(1), "--host-devices")?;
    }
    if let Some(selection) = &selection {
        tracing::info!(ordinals = ?selection.ordinals, source = selection.source, "serving only these devices, numbered from 0 in this order");
    }
    cli.selection = selection;
    Ok(())
}

/// Where sessions run.
enum Serving {
    /// In the worker, on this backend.
    InWorker(Arc<dyn Backend>),
    /// Each in a session process building `spec`; `devices`: a GPU backend's devices, read
    /// for the worker's view (empty for the host backend). `shared`: all in one shared
    /// session process at a time (`--isolation shared`), replaced after a fault.
    InProcesses { spec: BackendSpec, devices: Vec<DeviceProperties>, shared: bool },
}

/// The backend of the flags (for `auto`: the first that loads and has a device), and where
/// its sessions run.
fn make_backend(cli: &Cli) -> Result<Serving, String> {
    let host = || match (cli.allow_host_code, cli.shared_process) {
        // Host code is client code: it runs in session processes whatever --isolation says.
        (true, _) => Serving::InProcesses { spec: BackendSpec::Host(host_config(cli)), devices: Vec::new(), shared: false },
        (false, true) => Serving::InProcesses { spec: BackendSpec::Host(host_config(cli)), devices: Vec::new(), shared: true },
        (false, false) => Serving::InWorker(Arc::new(HostBackend::new(host_config(cli)))),
    };
    match cli.backend {
        BackendKind::Host => Ok(host()),
        BackendKind::Cuda => cuda(cli).map_err(|e| format!("the cuda backend is unavailable: {e}")),
        BackendKind::Hip => hip(cli).map_err(|e| format!("the hip backend is unavailable: {e}")),
        BackendKind::Auto => {
            let cuda_skipped = match cuda(cli) {
                Ok(serving) => return Ok(serving),
                Err(why) => why,
            };
            tracing::info!("backend auto: cuda skipped ({cuda_skipped})");
            match hip(cli) {
                Ok(serving) => Ok(serving),
                Err(why) => {
                    tracing::info!("backend auto: hip skipped ({why}); using host emulation");
                    Ok(host())
                }
            }
        }
    }
}

#[cfg(feature = "hip")]
fn hip(cli: &Cli) -> Result<Serving, String> {
    use hip_worker::backend::hip::{hip_library_path, HipBackend};
    use hip_worker::backend::DeviceBackend;
    let library = hip_library_path(cli.hip_library.as_deref());
    let backend = HipBackend::new(&library, cli.selection.as_ref()).map_err(|e| e.to_string())?;
    if backend.is_hip_remote_client() {
        tracing::info!(
            library = %library.display(),
            "the HIP library is hip-remote's client (a chained worker), whose upstream worker isolates sessions and owns the \
             contexts; serving them in this worker"
        );
        return Ok(Serving::InWorker(Arc::new(backend)));
    }
    // The runtime stays loaded here for the device list; the sessions' work runs elsewhere.
    let count = backend.device_count().map_err(|e| e.to_string())?;
    let devices = (0..count).map(|dev| backend.device_properties(dev)).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
    Ok(Serving::InProcesses {
        spec: BackendSpec::Hip { library, selection: cli.selection.clone() },
        devices,
        shared: cli.isolation == Isolation::Shared,
    })
}

#[cfg(not(feature = "hip"))]
fn hip(_cli: &Cli) -> Result<Serving, String> {
    Err("this worker was built without the `hip` feature".into())
}

#[cfg(feature = "cuda")]
fn probe_dmabuf() -> std::process::ExitCode {
    use hip_worker::backend::cuda::CudaBackend;
    use hip_worker::backend::{MemoryBackend, TransportHooks};
    let run = || -> Result<(), String> {
        let backend = CudaBackend::new().map_err(|e| e.to_string())?;
        let supported = backend.dmabuf_supported(0).map_err(|e| e.to_string())?;
        println!("device 0: CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = {supported}");
        let len: u64 = 64 << 20;
        let ptr = backend.malloc(0, len).map_err(|e| e.to_string())?;
        let fd = backend.export_dmabuf(ptr, len).map_err(|e| e.to_string())?;
        // SAFETY: `fd` is a file descriptor we own; lseek only reads its size.
        let size = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
        println!("allocation {ptr} ({} MiB) exported as dmabuf fd {fd}, size {size} bytes", len >> 20);
        println!("this fd is what the RDMA transport passes to ibv_reg_dmabuf_mr for zero-copy GPU transfers");
        // SAFETY: closing the fd we own.
        unsafe { libc::close(fd) };
        backend.free(ptr).map_err(|e| e.to_string())?;
        if size != len as i64 {
            return Err(format!("dmabuf size {size} != allocation size {len}"));
        }
        // What the RDMA session does for every allocation (GPUDirect): the page-aligned cover
        // of an odd-sized one, through the backend traits.
        let odd: u64 = (1 << 20) + 123;
        let ptr = backend.malloc(0, odd).map_err(|e| e.to_string())?;
        let (fd, offset) = TransportHooks::export_dmabuf_fd(&backend, ptr, odd).map_err(|e| e.to_string())?;
        use std::os::fd::AsRawFd;
        // SAFETY: lseek on an fd we own (closed when `fd` drops).
        let size = unsafe { libc::lseek(fd.as_raw_fd(), 0, libc::SEEK_END) };
        println!("allocation {ptr} ({odd} bytes) exported through TransportHooks::export_dmabuf_fd: offset {offset}, dmabuf size {size} bytes");
        drop(fd);
        backend.free(ptr).map_err(|e| e.to_string())?;
        if size < (odd + offset) as i64 {
            return Err(format!("dmabuf size {size} does not cover offset {offset} + {odd} bytes"));
        }
        probe_reserved_staging(&backend)
    };
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hip-worker: dmabuf probe failed: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Without GPUDirect, RDMA copies land in the backend's reserved staging buffers, which the
/// session announces to the transport once: they must be stable, and the staged copy paths
/// must hand out exactly those buffers.
#[cfg(feature = "cuda")]
fn probe_reserved_staging(backend: &hip_worker::backend::cuda::CudaBackend) -> Result<(), String> {
    use hip_worker::backend::cuda::{STAGING_BYTES, STAGING_RESERVED};
    use hip_worker::backend::{DevicePtr, MemoryBackend, TransportHooks};
    let ranges = TransportHooks::staging_buffers(backend);
    println!("reserved staging buffers (registered once per RDMA connection): {ranges:x?}");
    if ranges.len() != STAGING_RESERVED || TransportHooks::staging_buffers(backend) != ranges {
        return Err(format!("expected {STAGING_RESERVED} stable reserved staging buffers, got {ranges:x?}"));
    }
    let len = 3 * STAGING_BYTES + 77;
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    let dev = backend.malloc(0, len as u64).map_err(|e| e.to_string())?;
    // Each chunk's device address, as the session copies them.
    let chunks = || data.chunks(STAGING_BYTES).enumerate().map(|(i, c)| (DevicePtr(dev.0 + (i * STAGING_BYTES) as u64), c));
    // The host buffer each staged chunk went through.
    let mut staged_at = Vec::new();
    for (at, chunk) in chunks() {
        MemoryBackend::with_device_bytes_mut(backend, None, at, chunk.len() as u64, &mut |bytes| {
            staged_at.push(bytes.as_ptr() as usize);
            bytes.copy_from_slice(chunk);
        })
        .map_err(|e| e.to_string())?;
    }
    MemoryBackend::finish_device_writes(backend, None, dev).map_err(|e| e.to_string())?;
    let mut back = Vec::with_capacity(len);
    for (at, chunk) in chunks() {
        MemoryBackend::with_device_bytes(backend, None, at, chunk.len() as u64, &mut |bytes| {
            staged_at.push(bytes.as_ptr() as usize);
            back.extend_from_slice(bytes);
        })
        .map_err(|e| e.to_string())?;
    }
    backend.free(dev).map_err(|e| e.to_string())?;
    let staged = staged_at.len();
    let outside = staged_at.iter().filter(|&&p| !ranges.iter().any(|&(a, l)| p >= a && p < a + l)).count();
    println!("{staged} staged chunks, {outside} outside the reserved buffers; round trip {}", if back == data { "intact" } else { "CORRUPT" });
    if back != data || outside != 0 {
        return Err("staged copies did not go through the reserved buffers intact".into());
    }
    Ok(())
}

#[cfg(not(feature = "cuda"))]
fn probe_dmabuf() -> std::process::ExitCode {
    eprintln!("hip-worker: built without the cuda feature");
    std::process::ExitCode::FAILURE
}

#[cfg(feature = "cuda")]
fn cuda(cli: &Cli) -> Result<Serving, String> {
    use hip_worker::backend::cuda::CudaBackend;
    let selection = cli.selection.as_ref();
    // Read without a context: the worker holds none; each session process (or the shared
    // one) makes its own.
    let shared = cli.isolation == Isolation::Shared;
    CudaBackend::probe(selection)
        .map(|devices| Serving::InProcesses { spec: BackendSpec::Cuda { selection: selection.cloned() }, devices, shared })
        .map_err(|e| e.to_string())
}

#[cfg(not(feature = "cuda"))]
fn cuda(_cli: &Cli) -> Result<Serving, String> {
    Err("this worker was built without the `cuda` feature".into())
}

/// Session processes for `spec`, and the backend the worker itself reports from: it serves
/// no session, it shows the devices and what every session process holds.
fn session_processes(
    cli: &Cli,
    spec: BackendSpec,
    devices: Vec<DeviceProperties>,
    log_filter: &str,
    spin: Duration,
    mps: Option<&hip_worker::mps::MpsDaemon>,
    shared: bool,
) -> Result<(Arc<dyn Backend>, Arc<SessionProcess>), String> {
    let count = match &spec {
        BackendSpec::Host(config) => config.devices,
        _ => devices.len() as u32,
    };
    // A shared session process takes a row of the usage table for itself and one per session
    // (its device time); processes alive at once are at most the sessions plus the current one.
    let rows = match shared {
        true => cli.max_connections.max(1).saturating_mul(2).saturating_add(1),
        false => cli.max_connections.max(1),
    };
    let mut process = SessionProcess::new(spec, count, &cli.host_code_user, log_filter, rows).map_err(|e| e.to_string())?;
    process.spin = spin;
    process.child_env = mps.map(hip_worker::mps::MpsDaemon::child_env).unwrap_or_default();
    if shared {
        process.shared = Some(hip_worker::sandbox::shared::SharedProcesses::default());
        // The host test aid's fault trigger reaches only its shared process.
        let test_fault = std::env::var_os(hip_worker::backend::TEST_STICKY_FAULT_ENV);
        if let (BackendSpec::Host(_), Some(size)) = (&process.backend, test_fault) {
            process.child_env.push((hip_worker::backend::TEST_STICKY_FAULT_ENV.into(), size));
        }
    }
    if let Some(mib) = cli.session_max_file_mib {
        process.max_file_bytes = mib << 20;
        if let BackendSpec::Host(host) = &process.backend {
            if process.max_file_bytes < host.memory_per_device {
                tracing::warn!(
                    "--session-max-file-mib {mib} is below the memory per device: an allocation larger than {mib} MiB fails with hipErrorOutOfMemory"
                );
            }
        }
    }
    let view: Arc<dyn Backend> = match &process.backend {
        BackendSpec::Host(config) => {
            let host = HostBackend::new(*config);
            host.share_usage(&process.usage, 0);
            Arc::new(host)
        }
        gpu => Arc::new(HostBackend::device_view(gpu.name(), devices, &process.usage)),
    };
    Ok((view, Arc::new(process)))
}

/// Whether `addr` (`host:port`) only listens on loopback; a name that does not resolve to
/// loopback addresses only counts as public.
fn is_loopback(addr: &str) -> bool {
    use std::net::ToSocketAddrs;
    match addr.to_socket_addrs() {
        Ok(addrs) => {
            let addrs: Vec<_> = addrs.collect();
            !addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback())
        }
        Err(_) => false,
    }
}

/// The TLS settings of the flags, when TLS is on.
fn tls_config(cli: &Cli) -> Result<Option<Arc<hip_worker::tls::ServerConfig>>, String> {
    match (&cli.tls_cert, &cli.tls_key) {
        (Some(cert), Some(key)) => hip_worker::tls::server_config(cert, key, cli.tls_client_ca.as_deref()).map(Some).map_err(|e| format!("TLS: {e}")),
        _ => Ok(None),
    }
}

/// The TCP listener, plain or TLS.
enum TcpWorker {
    Plain(Worker),
    Tls(hip_worker::tls::TlsWorker),
}

impl TcpWorker {
    fn start(addr: &str, backend: Arc<dyn Backend>, config: WorkerConfig, tls: Option<Arc<hip_worker::tls::ServerConfig>>) -> std::io::Result<Self> {
        Ok(match tls {
            Some(tls) => Self::Tls(hip_worker::tls::TlsWorker::start_tls(addr, backend, config, tls)?),
            None => Self::Plain(Worker::start(addr, backend, config)?),
        })
    }

    /// Where clients connect: `HOST:PORT`, or `tls://HOST:PORT`.
    fn address(&self) -> String {
        match self {
            Self::Plain(w) => w.local_addr().to_string(),
            Self::Tls(w) => format!("tls://{}", w.local_addr()),
        }
    }

    /// The bound TCP port.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn port(&self) -> u16 {
        match self {
            Self::Plain(w) => w.local_addr().port(),
            Self::Tls(w) => w.local_addr().port(),
        }
    }

    fn shutdown(self) {
        match self {
            Self::Plain(w) => w.shutdown(),
            Self::Tls(w) => w.shutdown(),
        }
    }
}

fn main() -> std::process::ExitCode {
    // A session process (started by a worker, never by hand): its own arguments.
    if std::env::args().nth(1).as_deref() == Some(hip_worker::sandbox::CHILD_ARG) {
        return hip_worker::sandbox::child::main(std::env::args().skip(2));
    }
    let mut cli = Cli::parse();
    // Bad settings stop the worker before it serves anyone, naming the variable.
    let settings = init_logging(&cli)
        .and_then(|filter| select_devices(&mut cli).map(|()| filter))
        .and_then(|filter| Ok((filter, hip_worker::config::accepted_tcp_config().map_err(|e| e.to_string())?)));
    let (log_filter, tcp) = match settings {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("hip-worker: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    if cli.probe_dmabuf {
        return probe_dmabuf();
    }
    let listen = cli.listen.clone().unwrap_or_else(|| format!("127.0.0.1:{}", cli.port.unwrap_or(DEFAULT_PORT)));
    let serving = match make_backend(&cli) {
        Ok(serving) => serving,
        Err(e) => {
            eprintln!("hip-worker: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let backend_name = match &serving {
        Serving::InWorker(backend) => backend.name(),
        Serving::InProcesses { spec, .. } => spec.name(),
    };
    let mps = match start_mps(&cli, backend_name) {
        Ok(mps) => mps,
        Err(e) => {
            eprintln!("hip-worker: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let (backend, session_process) = match serving {
        Serving::InWorker(backend) => {
            if backend.name() == "host" {
                tracing::info!("host backend without --allow-host-code: no client code runs, sessions are served in the worker (--isolation applies to GPU backends)");
            } else if cli.isolation == Isolation::Shared {
                tracing::warn!(
                    backend = backend.name(),
                    "--isolation shared: every session of a device shares one context; a kernel fault that poisons it reaches them all"
                );
            }
            (backend, None)
        }
        Serving::InProcesses { spec, devices, shared } => {
            let host = matches!(spec, BackendSpec::Host(_)) && !shared;
            match session_processes(&cli, spec, devices, &log_filter, tcp.spin, mps.as_ref(), shared) {
                Ok((view, process)) if shared => {
                    tracing::warn!(
                        backend = view.name(),
                        user = ?process.run_as,
                        "--isolation shared: every session runs in one confined session process, on one context per device; a kernel \
                         fault that poisons it reaches every session holding work on the device, and new sessions go to a new process"
                    );
                    (view, Some(process))
                }
                Ok((view, process)) if host => {
                    tracing::info!(user = ?process.run_as, "host code allowed: each session runs in a confined process of its own");
                    (view, Some(process))
                }
                Ok((view, process)) => {
                    tracing::info!(
                        backend = view.name(),
                        user = ?process.run_as,
                        "--isolation process: each session runs in a confined process of its own, with its own GPU context; the worker \
                         holds none (it keeps the driver loaded for device queries)"
                    );
                    (view, Some(process))
                }
                Err(e) if host => {
                    eprintln!("hip-worker: --allow-host-code needs session processes, which cannot be set up: {e}");
                    return std::process::ExitCode::from(2);
                }
                Err(e) => {
                    eprintln!("hip-worker: GPU sessions run in session processes, which cannot be set up: {e}");
                    return std::process::ExitCode::from(2);
                }
            }
        }
    };
    if mps.is_some() && session_process.is_none() {
        tracing::warn!("--mps: sessions share the worker's own context here, so no session process uses the MPS daemon");
    }
    if cli.device != 0 {
        tracing::warn!(device = cli.device, "--device applies to GPU backends; the host backend exposes all emulated devices");
    }
    let tokens = match TokenStore::new(cli.token.as_deref(), cli.token_file.as_deref()) {
        Ok(tokens) => Arc::new(tokens),
        Err(e) => {
            eprintln!("hip-worker: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let tls = match tls_config(&cli) {
        Ok(tls) => tls,
        Err(e) => {
            eprintln!("hip-worker: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    // Required client certificates authenticate the TLS listener's clients (not RDMA's).
    let tcp_authenticated = cli.tls_client_ca.is_some();
    let public = [(!tcp_authenticated).then_some(&listen), cli.listen_rdma.as_ref()].into_iter().flatten().find(|addr| !is_loopback(addr));
    if let (Some(addr), true, false) = (public, tokens.is_empty(), cli.insecure) {
        eprintln!(
            "hip-worker: refusing to listen on {addr}, which is not a loopback address, without authentication: anyone who reaches \
             the port could run code on this machine. Give --token or --token-file (clients set HIP_REMOTE_TOKEN), listen on \
             127.0.0.1, or pass --insecure to accept the risk."
        );
        return std::process::ExitCode::from(2);
    }
    if tokens.is_empty() {
        tracing::warn!("no token configured: clients are not authenticated");
    } else {
        tracing::info!(tenants = ?tokens.tenant_names(), "clients must authenticate");
    }
    let dial_trust = match &cli.dial_workers_ca {
        Some(ca) => {
            let shown = cli.dial_workers_cert.as_deref().zip(cli.dial_workers_key.as_deref());
            match transport_tcp::tls::TlsClient::new(Some(ca), shown, None) {
                Ok(trust) => Some(trust),
                Err(e) => {
                    eprintln!("hip-worker: --dial-workers-ca/--dial-workers-cert: {e}");
                    return std::process::ExitCode::from(2);
                }
            }
        }
        None => None,
    };
    let dial_policy = match hip_worker::transfer::DialPolicy::with_tls(cli.dial_workers.iter().cloned(), dial_trust) {
        Ok(policy) => policy,
        Err(e) => {
            eprintln!("hip-worker: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    if dial_policy.may_dial() {
        tracing::info!(workers = ?cli.dial_workers, "sessions may take copies from these workers (--dial-workers)");
    }
    #[allow(unused_mut)] // set when an RDMA listener runs
    let mut config = WorkerConfig {
        session: hip_worker::session::SessionConfig {
            worker_name: format!("hip-worker {}, {} backend", hip_remote_build_info::VERSION, backend.name()),
            tokens: (!tokens.is_empty() || cli.token_file.is_some()).then(|| tokens.clone()),
            rdma_endpoint: None,
            same_host: Arc::new(hip_worker::session::SameHost { machine: same_host_machine(), ..Default::default() }),
            metrics: Arc::default(),
            max_queued_reply_bytes: (cli.max_queued_reply_mib << 20) as usize,
            limits: hip_worker::session::SessionLimits {
                max_streams: cli.max_session_streams,
                max_events: cli.max_session_events,
                max_modules: cli.max_session_modules,
                max_memory: cli.max_session_memory_mib.map(|mib| mib.saturating_mul(1 << 20)),
                max_pending_bytes: (cli.max_pending_mib << 20) as usize,
                max_worker_streams: cli.max_worker_streams,
                worker_streams: Arc::default(),
            },
            ipc: Arc::new(hip_worker::ipc::LocalBroker::default()),
            rtc_cache: Arc::new(hip_worker::session::rtc_cache::RtcCache::new((cli.rtc_cache_mib << 20) as usize)),
            rtc_cache_dir: rtc_cache_root(cli.rtc_cache_dir.as_deref()).map(hip_worker::session::RtcCacheDir::Root),
            device_faults: Arc::default(),
            kernel_watchdog: cli.max_kernel_ms.map(std::time::Duration::from_millis),
            content: Arc::default(),
            // Sessions in session processes end with their connection.
            resume: (cli.resume_grace_s > 0 && session_process.is_none())
                .then(|| hip_worker::resume::ResumeHub::new(Duration::from_secs(cli.resume_grace_s))),
            // Session processes have hubs of their own; the worker's policy checks their dials.
            transfers: Some(hip_worker::transfer::TransferHub::direct(dial_policy)),
        },
        tcp,
        limits: ConnectionLimits {
            max_connections: cli.max_connections.max(1),
            max_per_address: cli.max_connections_per_address.max(1),
            preauth_deadline: Duration::from_millis(cli.preauth_timeout_ms.max(1)),
        },
        session_process,
        stripes: hip_worker::stripes::StripeConfig { max_stripes: cli.max_stripes },
    };
    // Kernels of sessions served in this process (one context per device): the watchdog
    // resets the device of a kernel past the limit. Session processes watch their own.
    if let (Some(limit), None) = (config.session.kernel_watchdog, &config.session_process) {
        match hip_worker::watchdog::start_shared(backend.clone(), config.session.device_faults.clone(), config.session.metrics.clone(), limit) {
            Ok(true) => tracing::info!(limit_ms = limit.as_millis() as u64, "kernel watchdog on: a kernel past the limit resets its device"),
            Ok(false) => tracing::info!("--max-kernel-ms: the {} backend runs no kernels in the worker's process", backend.name()),
            Err(e) => {
                eprintln!("hip-worker: cannot start the kernel watchdog: {e}");
                return std::process::ExitCode::from(2);
            }
        }
    }
    #[cfg(feature = "rdma")]
    let rdma_worker = match &cli.listen_rdma {
        Some(addr) => match hip_worker::rdma::RdmaWorker::start(addr, backend.clone(), config.clone()) {
            Ok(w) => Some(w),
            Err(e) => {
                eprintln!("hip-worker: cannot listen for RDMA on {addr}: {e}");
                return std::process::ExitCode::from(1);
            }
        },
        None => None,
    };
    // TCP clients learn the RDMA listener in WELCOME (HIP_REMOTE_PREFER_RDMA=1 moves them).
    #[cfg(feature = "rdma")]
    if let Some(w) = &rdma_worker {
        config.session.rdma_endpoint = Some(w.local_addr().to_string());
    }
    #[cfg(not(feature = "rdma"))]
    if cli.listen_rdma.is_some() {
        eprintln!("hip-worker: --listen-rdma needs a worker built with `--features rdma`");
        return std::process::ExitCode::from(2);
    }
    let metrics_server = match cli.metrics.as_deref().map(hip_worker::http::metrics_addr).transpose() {
        Ok(None) => None,
        Ok(Some(addr)) => match hip_worker::http::MetricsServer::start(addr, backend.clone(), config.session.metrics.clone()) {
            Ok(server) => Some(server),
            Err(e) => {
                eprintln!("hip-worker: cannot serve metrics on {addr}: {e}");
                return std::process::ExitCode::from(1);
            }
        },
        Err(e) => {
            eprintln!("hip-worker: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    // The same-host listener shares the TCP listener's port number in its default path, so
    // it starts once that port is bound; TCP sessions learn its path only from then on.
    let tcp_backend = backend.clone();
    let tcp_config = config.clone();
    let worker = match TcpWorker::start(&listen, tcp_backend, tcp_config, tls) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("hip-worker: cannot listen on {listen}: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    // Ready line for scripts and tests that start the worker on port 0 (with `tls://` when
    // clients must use TLS: the line's address is what HIP_REMOTE_WORKER takes).
    println!("hip-worker listening on {}", worker.address());
    if let Some(server) = &metrics_server {
        println!("hip-worker metrics on http://{}/metrics", server.local_addr());
    }
    // Client certificates authenticate TLS clients only: without a token, a same-host
    // client would skip them.
    let shm_flag = if cli.tls_client_ca.is_some() && tokens.is_empty() {
        if cli.shm_socket.as_deref().is_some_and(|s| s != "none") {
            eprintln!("hip-worker: --shm-socket ignored: clients are authenticated by TLS certificates only, which the same-host transport does not carry (give --token too)");
        }
        Some("none")
    } else {
        cli.shm_socket.as_deref()
    };
    #[cfg(target_os = "linux")]
    let shm_worker = start_shm(shm_flag, worker.port(), backend, config);
    #[cfg(not(target_os = "linux"))]
    if shm_flag.is_some_and(|s| s != "none") {
        eprintln!("hip-worker: --shm-socket: the same-host transport needs Linux");
    }
    #[cfg(feature = "rdma")]
    if let Some(w) = &rdma_worker {
        println!("hip-worker listening on rdma://{}", w.local_addr());
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(sig, stop.clone()) {
            tracing::warn!(%e, "cannot install signal handler");
        }
    }
    let reload = Arc::new(AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGHUP, reload.clone()) {
        tracing::warn!(%e, "cannot install the SIGHUP handler; the token file will not be reloaded");
    }
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        if reload.swap(false, Ordering::SeqCst) && cli.token_file.is_some() {
            match tokens.reload() {
                Ok(n) => tracing::info!(tenants = n, "token file reloaded; removed tenants are refused from their next HELLO"),
                Err(e) => tracing::error!("token file not reloaded, the old tokens stay: {e}"),
            }
        }
    }
    tracing::info!("shutting down: no new connections, finishing requests in flight");
    #[cfg(feature = "rdma")]
    if let Some(w) = rdma_worker {
        w.shutdown();
    }
    worker.shutdown();
    #[cfg(target_os = "linux")]
    if let Some(w) = shm_worker {
        w.shutdown();
    }
    drop(metrics_server);
    drop(mps);
    tracing::info!("hip-worker stopped");
    std::process::ExitCode::SUCCESS
}

/// The MPS daemon `--mps` asks for, or why it cannot run.
fn start_mps(cli: &Cli, backend: &str) -> Result<Option<hip_worker::mps::MpsDaemon>, String> {
    if !cli.mps {
        return Ok(None);
    }
    match backend {
        "cuda" => {}
        "hip" => {
            return Err("--mps is CUDA's Multi-Process Service: AMD GPUs run the queues of several processes concurrently \
                        without a daemon, so the hip backend needs nothing of the kind (drop --mps)"
                .into())
        }
        other => return Err(format!("--mps needs the cuda backend (this worker runs the {other} backend)")),
    }
    let owner =
        if running_as_root() { Some(hip_worker::sandbox::confine::lookup_user(&cli.host_code_user).map_err(|e| e.to_string())?) } else { None };
    let daemon = hip_worker::mps::MpsDaemon::start(owner)?;
    Ok(Some(daemon))
}

/// This machine's identity for the same-host offer (Linux).
fn same_host_machine() -> Option<Vec<u8>> {
    #[cfg(target_os = "linux")]
    return transport_shm::machine_identity();
    #[cfg(not(target_os = "linux"))]
    None
}

/// Starts the same-host listener at `flag`'s path (default: derived from `tcp_port`; `none`:
/// off). A socket that cannot be bound only costs the same-host transport: TCP goes on.
#[cfg(target_os = "linux")]
fn start_shm(
    flag: Option<&str>,
    tcp_port: u16,
    backend: Arc<dyn hip_worker::backend::Backend>,
    config: WorkerConfig,
) -> Option<hip_worker::shm::ShmWorker> {
    let path = match flag {
        Some("none") | Some("") => return None,
        Some(path) => std::path::PathBuf::from(path),
        None => hip_worker::shm::default_socket_path(tcp_port),
    };
    let same_host = config.session.same_host.clone();
    match hip_worker::shm::ShmWorker::start_shm(&path, backend, config) {
        Ok(w) => {
            // TCP clients on this machine are told about it from now on.
            let _ = same_host.socket.set(path.display().to_string());
            println!("hip-worker listening on shm://{}", path.display());
            Some(w)
        }
        Err(e) => {
            eprintln!("hip-worker: no same-host transport: cannot listen on {}: {e}", path.display());
            None
        }
    }
}

/// The compile cache's directory root: `--rtc-cache-dir`, else the user's cache directory.
fn rtc_cache_root(flag: Option<&str>) -> Option<std::path::PathBuf> {
    match flag {
        Some("none") | Some("") => None,
        Some(dir) => Some(dir.into()),
        None if running_as_root() => Some("/var/cache/hip-remote/rtc".into()),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))
            .map(|c| c.join("hip-remote/rtc")),
    }
}

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
