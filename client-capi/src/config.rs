//! Client configuration from the environment.
//!
//! - `HIP_REMOTE_WORKER=host:port` (also the seed's `TF_WORKER_HOST` / `TF_WORKER_PORT`);
//!   default `127.0.0.1:18515`.
//! - `HIP_REMOTE_WORKER=tls://host:port` or `HIP_REMOTE_TLS=1`: TLS (rustls). The worker's
//!   certificate is checked against `HIP_REMOTE_TLS_CA` (a PEM file of CA certificates) or
//!   else the system's store, for the address's host name or `HIP_REMOTE_TLS_SERVER_NAME`;
//!   `HIP_REMOTE_TLS_CERT` and `HIP_REMOTE_TLS_KEY` (PEM) give a client certificate for
//!   workers that require one (`--tls-client-ca`).
//! - `HIP_REMOTE_WORKER=a:port,b:port` (each entry any of the forms above and below):
//!   several workers as one device list, numbered in the list's order, each worker's devices
//!   in its own order (`docs/CLIENT.md`, "Several workers"). At most [`MAX_WORKERS`].
//! - `HIP_REMOTE_WORKER=dns:///name:port`: every address `name` resolves to (a headless
//!   Service's A and AAAA records) is one worker of the list, in [`sort_addresses`]' order:
//!   IPv4 before IPv6, then by address.
//! - `HIP_REMOTE_TOKEN`: authentication token for workers started with `--token`.
//! - `HIP_REMOTE_CONNECT_TIMEOUT`, `HIP_REMOTE_IO_TIMEOUT`: seconds; the I/O timeout is the
//!   deadline of a whole call's reply (see `transport_core::config`).
//! - `HIP_REMOTE_HEARTBEAT`, `HIP_REMOTE_LIVENESS_TIMEOUT`: seconds; while a reply is awaited,
//!   silence of one heartbeat sends a PING, silence of the liveness timeout gives the worker
//!   up (frozen or unreachable).
//! - `HIP_REMOTE_DEBUG=1` (or the seed's `TF_DEBUG=1`): explain every failed call on stderr.
//! - `HIP_REMOTE_PREFER_RDMA=1`: connect over TCP, then move to the RDMA listener the worker
//!   advertises in WELCOME (staying on TCP, with a note on stderr, if that fails). RDMA is
//!   not encrypted, so a TLS client stays on TLS unless `HIP_REMOTE_RDMA_WITHOUT_TLS=1` says
//!   that leaving encryption for the fabric is intended.
//! - `HIP_REMOTE_WORKER=shm:///path/to/socket`: a worker on this machine, through shared
//!   memory (Linux; the worker's `--shm-socket`). `HIP_REMOTE_SHM=auto` (the default): a
//!   client that reached the worker over plain TCP moves to its shared-memory transport when
//!   both run on the same machine; `off` stays on TCP.
//! - `HIP_REMOTE_SYNC_SPIN_US`: how long a call that waits for device work (a synchronize)
//!   polls for its reply before it blocks, µs (at most 10 000; default 10 000 on a machine of
//!   4 cores or more, else 0: the transport's usual spin). A GPU runtime's synchronize spins by default too; `hipSetDeviceFlags` with
//!   `hipDeviceScheduleBlockingSync` turns it off for that device.
//! - `HIP_REMOTE_POSTED_LOOKUPS=auto|on|off` (default auto): `hipModuleGetFunction` without a
//!   round trip where the module's image shows the kernel (code objects, PTX, cubins,
//!   hiprtc output), and `hipErrorNotFound` at once where it shows the name missing; where
//!   the image does not tell, the lookup waits. `on` posts those too (a missing kernel is
//!   then reported at its first launch); `off`: every lookup waits for the worker.
//! - `HIP_REMOTE_CLIENT_ALLOC=on|off` (default on): operations without a round trip where
//!   the worker offers them (`CLIENT_ALLOCATION`): streams and events created with handles
//!   the library picks, small synchronous host-to-device copies that return once sent
//!   (`docs/ALLOCATION.md`); off keeps every one of them a waiting call.
//! - `HIP_REMOTE_CONTENT_STORE=auto|on|off` (default auto): name host-to-device copies of
//!   at least 1 MiB by their hash first, so a worker that holds the bytes for this tenant
//!   (an earlier run's upload) copies them itself (`proto_core::content`); auto: on unless
//!   the worker's address is a loopback one (there the hash costs more than the bytes).
//! - `HIP_REMOTE_COMPRESSION=auto|on|off` (default auto): large host-to-device copies may
//!   go compressed where the library predicts that faster (measured link, a sample's ratio
//!   and compression speed; `client_core::compression`); auto: not to a loopback address.
//! - `HIP_REMOTE_COMPUTE_CAPABILITY=isa|worker|MAJOR.MINOR` (default isa): what
//!   `hipDeviceProp_t.major`/`minor` and the compute-capability attributes report. `isa`: as
//!   ROCm, the version of the device's gfx instruction set — the worker's figures for an AMD
//!   GPU, 0.0 for a device with no gfx ISA (an NVIDIA GPU, the host backend), so code written
//!   for AMD GPUs that reads major/minor as a gfx version takes its family-neutral paths, as
//!   our device code is compiled; `worker`: the worker's figures for every device (CUDA's
//!   compute capability on the cuda backend, for programs that compare it with CUDA's);
//!   `MAJOR.MINOR`: those numbers for every device ([`ComputeCapability`]).
//! - `HIP_REMOTE_LOG=FILTER` (tracing syntax, e.g. `transport_rdma=debug`): the library's own
//!   log on stderr.
//!
//! A bad value of any of them (not a number, out of range, not a boolean) is refused: the
//! library says so once on stderr, naming the variable and what it accepts, and every HIP
//! call then fails with `hipErrorNotInitialized`, as when no worker can be reached
//! ([`crate::remote`]); running on with a default the user did not choose would hide the
//! mistake.

use std::time::Duration;
use transport_core::config::{self as env, EnvError, Liveness, Lookup, MAX_SPIN};

/// How long a call that waits for device work polls for its reply before blocking, on a
/// machine with at least [`SPIN_WAIT_MIN_CORES`] cores: the wake-up of a blocked reader costs
/// tens of µs on a virtual machine, a visible share of a few-millisecond step
/// (`docs/BENCHMARKS.md`, graphs).
pub const DEFAULT_DEVICE_WAIT_SPIN: Duration = MAX_SPIN;
/// Fewer cores than this and a waiting client does not spin longer than usual by default
/// (it would take a core from the worker or the rest of the program), as CUDA's automatic
/// scheduling spins only while threads do not outnumber cores.
pub const SPIN_WAIT_MIN_CORES: usize = 4;

fn default_device_wait_spin() -> Duration {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores >= SPIN_WAIT_MIN_CORES {
        DEFAULT_DEVICE_WAIT_SPIN
    } else {
        Duration::ZERO
    }
}

/// Why `shm://` is refused off Linux, and what to use instead (the same-host transport passes
/// memfd descriptors over a Unix socket: Linux only).
pub const SHM_NEEDS_LINUX: &str = "HOST:PORT (TCP) or tls://HOST:PORT; shm:// (same-host shared memory) needs Linux, \
     on both the client and the worker";

#[cfg(feature = "tls")]
use transport_tcp::tls::TlsClient;
use transport_tcp::TcpConfig;

/// Without the `tls` feature there are no TLS settings (the configuration's `tls` is always
/// `None`).
#[cfg(not(feature = "tls"))]
#[derive(Debug, Clone)]
pub enum TlsClient {}

/// Default worker port (the seed prototype's).
pub const DEFAULT_PORT: u16 = 18515;

/// Stripes asked for by default (`HIP_REMOTE_STRIPES`; 0 or 1: no striping). To be measured
/// on the H100 by the lead (8 loopback streams reached 27 GB/s there, one 3.8 GB/s).
pub const DEFAULT_STRIPES: u32 = 8;
/// Most stripes a client asks for (the worker's own bound is the same).
pub const MAX_STRIPES: u32 = 16;
/// Smallest copy that is striped (`HIP_REMOTE_STRIPE_MIN_BYTES`); smaller ones take the main
/// connection, where one round trip costs less than waking the stripes. To be measured on the
/// H100 by the lead.
pub const DEFAULT_STRIPE_MIN_BYTES: usize = 8 << 20;

/// Most workers one `HIP_REMOTE_WORKER` list may name (after `dns:///` names are resolved).
pub const MAX_WORKERS: usize = 64;
/// Longest `HIP_REMOTE_WORKER` value read, bytes.
pub const MAX_WORKER_LIST_LEN: usize = 16 << 10;

/// Which `hipModuleGetFunction` lookups are posted without waiting for the worker
/// (`HIP_REMOTE_POSTED_LOOKUPS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostedLookups {
    /// Those of kernels the module's image shows (the client reads its kernel names); a name
    /// the image shows missing answers `hipErrorNotFound` at once, as HIP does; the rest wait.
    Auto,
    /// Every lookup, also where the image does not tell: a kernel the module lacks is then
    /// reported at its first launch instead of by the lookup.
    On,
    /// None: every lookup waits for the worker's answer.
    Off,
}

/// Largest major or minor number `HIP_REMOTE_COMPUTE_CAPABILITY` accepts.
pub const MAX_COMPUTE_CAPABILITY_PART: u32 = 1000;

/// What `hipDeviceProp_t.major`/`minor` report (`HIP_REMOTE_COMPUTE_CAPABILITY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputeCapability {
    /// As ROCm (`clr` reports the gfx ISA's version): the worker's figures for a device whose
    /// `gcnArchName` is a gfx target, 0.0 for one with no gfx ISA. Code written for AMD GPUs
    /// reads major/minor as that version when `gcnArchName` is no gfx target (ggml: 9.0 would
    /// mean GCN, wave 64), while hipcc compiles device code for such devices with no gfx
    /// family's macros: both sides then take the same family-neutral paths.
    IsaVersion,
    /// The worker's figures for every device (CUDA's compute capability on the cuda backend).
    Worker,
    /// These numbers for every device.
    Fixed {
        /// `hipDeviceProp_t.major`.
        major: u32,
        /// `hipDeviceProp_t.minor`.
        minor: u32,
    },
}

impl ComputeCapability {
    /// The `(major, minor)` to report for a device whose worker says `worker` and whose
    /// `gcnArchName` is `arch_name`.
    pub fn presented(self, arch_name: &str, worker: (u32, u32)) -> (u32, u32) {
        match self {
            Self::IsaVersion if arch_name.starts_with("gfx") => worker,
            Self::IsaVersion => (0, 0),
            Self::Worker => worker,
            Self::Fixed { major, minor } => (major, minor),
        }
    }

    fn parse(text: &str) -> Result<Self, EnvError> {
        let refused = || EnvError {
            name: "HIP_REMOTE_COMPUTE_CAPABILITY".into(),
            value: text.chars().take(64).collect(),
            expected: format!("isa, worker or MAJOR.MINOR (each at most {MAX_COMPUTE_CAPABILITY_PART})"),
        };
        match text {
            "isa" => return Ok(Self::IsaVersion),
            "worker" => return Ok(Self::Worker),
            _ => {}
        }
        let (major, minor) = text.split_once('.').ok_or_else(refused)?;
        let part = |s: &str| s.parse::<u32>().ok().filter(|n| *n <= MAX_COMPUTE_CAPABILITY_PART).ok_or_else(refused);
        Ok(Self::Fixed { major: part(major)?, minor: part(minor)? })
    }
}

/// Where and how to reach the worker.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `host:port` (the first entry of a list; a `dns:///` entry until it is resolved).
    pub worker: String,
    /// Every entry of `HIP_REMOTE_WORKER`, as `worker` is written (`dns:///` entries are
    /// resolved by [`ClientConfig::resolve_workers`]).
    pub workers: Vec<String>,
    /// Token presented in HELLO.
    pub token: Option<String>,
    /// Socket settings.
    pub tcp: TcpConfig,
    /// TLS settings, when the worker is reached over TLS (`tls://` or `HIP_REMOTE_TLS=1`).
    pub tls: Option<TlsClient>,
    /// Print the reason of every failed call.
    pub debug: bool,
    /// Move to the worker's RDMA listener when WELCOME advertises one
    /// (`HIP_REMOTE_PREFER_RDMA=1`; needs a library built with the `rdma` feature).
    pub prefer_rdma: bool,
    /// RDMA was asked for but TLS keeps the client where it is (RDMA is not encrypted and
    /// `HIP_REMOTE_RDMA_WITHOUT_TLS=1` was not given): said once on stderr when offered.
    pub rdma_kept_off_by_tls: bool,
    /// Move to the worker's shared-memory transport when the worker runs on this machine
    /// (`HIP_REMOTE_SHM=auto`, the default; `off` stays on TCP). Linux only.
    pub same_host: bool,
    /// How long a call waiting for device work polls for its reply before it blocks.
    pub device_wait_spin: Duration,
    /// How a frozen or unreachable worker is noticed while a reply is awaited.
    pub liveness: Liveness,
    /// Create streams and events and send small `hipMemcpy` uploads without waiting, where
    /// the worker offers it (`HIP_REMOTE_CLIENT_ALLOC`, default on).
    pub client_alloc: bool,
    /// Which `hipModuleGetFunction` lookups go without waiting (`HIP_REMOTE_POSTED_LOOKUPS`).
    pub posted_lookups: PostedLookups,
    /// Name large uploads by hash first (`HIP_REMOTE_CONTENT_STORE`): `Some(on)`, or `None`
    /// for auto (on unless the worker's address is a loopback one).
    pub content_store: Option<bool>,
    /// Let the compression policy send large uploads compressed (`HIP_REMOTE_COMPRESSION`):
    /// `Some(on)`, or `None` for auto (on unless the worker's address is a loopback one).
    pub compression: Option<bool>,
    /// Resume the session over a new connection when the connection breaks, where the
    /// worker offers it (`HIP_REMOTE_RESUME`, default on; TCP and TLS connections).
    pub resume: bool,
    /// What `hipDeviceProp_t.major`/`minor` report (`HIP_REMOTE_COMPUTE_CAPABILITY`).
    pub compute_capability: ComputeCapability,
    /// Stripe connections to ask for (`HIP_REMOTE_STRIPES`; 0 or 1: none).
    pub stripes: u32,
    /// Smallest copy sent over the stripes (`HIP_REMOTE_STRIPE_MIN_BYTES`).
    pub stripe_min_bytes: usize,
    /// RDMA settings (`rdma://` workers).
    #[cfg(feature = "rdma")]
    pub rdma: transport_rdma::RdmaConfig,
}

impl ClientConfig {
    /// Reads the environment; a bad value is refused.
    pub fn from_env() -> Result<Self, EnvError> {
        Self::from_lookup(&env::env_lookup)
    }

    /// Every default: what the library keeps when the environment was refused (nothing is
    /// connected then; only the defaults' harmless fields, such as `debug`, are read).
    pub fn defaults() -> Self {
        let worker = format!("127.0.0.1:{DEFAULT_PORT}");
        Self {
            workers: vec![worker.clone()],
            worker,
            token: None,
            tcp: TcpConfig::default(),
            tls: None,
            debug: false,
            prefer_rdma: false,
            rdma_kept_off_by_tls: false,
            same_host: true,
            device_wait_spin: default_device_wait_spin(),
            liveness: Liveness::default(),
            client_alloc: true,
            posted_lookups: PostedLookups::Auto,
            content_store: None,
            compression: None,
            resume: true,
            compute_capability: ComputeCapability::IsaVersion,
            stripes: DEFAULT_STRIPES,
            stripe_min_bytes: DEFAULT_STRIPE_MIN_BYTES,
            #[cfg(feature = "rdma")]
            rdma: transport_rdma::RdmaConfig::default(),
        }
    }

    /// As [`from_env`](Self::from_env), reading variables through `lookup`.
    pub fn from_lookup(lookup: &Lookup<'_>) -> Result<Self, EnvError> {
        let var = |name: &str| env::text(lookup, name);
        let named = var("HIP_REMOTE_WORKER")?;
        let entries = match &named {
            Some(list) => worker_entries(list)?,
            None => Vec::new(),
        };
        let tls_entries = entries.iter().filter(|w| w.starts_with("tls://")).count();
        let tcp_entries = entries.iter().filter(|w| !w.starts_with("shm://") && !w.starts_with("rdma://")).count();
        if tls_entries > 0 && tls_entries != tcp_entries {
            return Err(EnvError {
                name: "HIP_REMOTE_WORKER".into(),
                value: named.unwrap_or_default(),
                expected: "every TCP entry tls:// or none (HIP_REMOTE_TLS=1 puts every one on TLS)".into(),
            });
        }
        let tls_scheme = tls_entries > 0;
        let tls = match (tls_scheme, env::flag(lookup, "HIP_REMOTE_TLS")?) {
            (true, Some(false)) => {
                return Err(EnvError {
                    name: "HIP_REMOTE_TLS".into(),
                    value: var("HIP_REMOTE_TLS")?.unwrap_or_default(),
                    expected: "1 or unset when HIP_REMOTE_WORKER is a tls:// address".into(),
                })
            }
            #[cfg(feature = "tls")]
            (true, _) | (false, Some(true)) => Some(TlsClient::from_lookup(lookup)?),
            #[cfg(not(feature = "tls"))]
            (true, _) | (false, Some(true)) => {
                return Err(EnvError {
                    name: if tls_scheme { "HIP_REMOTE_WORKER" } else { "HIP_REMOTE_TLS" }.into(),
                    value: if tls_scheme { named.unwrap_or_default() } else { "1".into() },
                    expected: "no TLS: this libamdhip64 was built without the `tls` feature".into(),
                })
            }
            (false, _) => None,
        };
        let workers: Vec<String> = if entries.is_empty() {
            let host = var("TF_WORKER_HOST")?.unwrap_or_else(|| "127.0.0.1".into());
            let port = env::uint(lookup, "TF_WORKER_PORT", 1..=u64::from(u16::MAX), "port numbers")?.unwrap_or(u64::from(DEFAULT_PORT));
            vec![format!("{host}:{port}")]
        } else {
            entries.iter().map(|w| w.trim_start_matches("tcp://").trim_start_matches("tls://").to_string()).collect()
        };
        let workers: Vec<String> = workers.into_iter().map(|w| if w.contains(':') { w } else { format!("{w}:{DEFAULT_PORT}") }).collect();
        let worker = workers[0].clone();
        // A resolved address is an IP: over TLS, the certificate is checked for the name
        // asked, when the list's TCP workers all come from that one name (another host of the
        // list keeps its own name; HIP_REMOTE_TLS_SERVER_NAME overrides both).
        #[cfg(feature = "tls")]
        let tls = {
            let tcp: Vec<&String> = workers.iter().filter(|w| !w.starts_with("shm://") && !w.starts_with("rdma://")).collect();
            let names: Vec<&str> = tcp.iter().filter_map(|w| w.strip_prefix(DNS_SCHEME)).map(|t| dns_target(t).map_or(t, |(name, _)| name)).collect();
            match tls {
                Some(mut tls)
                    if tls.server_name.is_none() && !names.is_empty() && names.len() == tcp.len() && names.iter().all(|n| *n == names[0]) =>
                {
                    tls.server_name = transport_tcp::tls::server_name_of(&format!("{}:0", names[0])).ok();
                    Some(tls)
                }
                tls => tls,
            }
        };
        #[cfg(not(target_os = "linux"))]
        if let Some(shm) = workers.iter().find(|w| w.starts_with("shm://")) {
            return Err(EnvError { name: "HIP_REMOTE_WORKER".into(), value: shm.clone(), expected: SHM_NEEDS_LINUX.into() });
        }
        if workers.iter().all(|w| w.starts_with("shm://")) && tls.is_some() {
            return Err(EnvError {
                name: "HIP_REMOTE_TLS".into(),
                value: "1".into(),
                expected: "unset when HIP_REMOTE_WORKER is a shm:// socket (shared memory never leaves this machine)".into(),
            });
        }
        let same_host = match var("HIP_REMOTE_SHM")?.as_deref() {
            None | Some("auto") => true,
            Some("off") => false,
            Some(other) => return Err(EnvError { name: "HIP_REMOTE_SHM".into(), value: other.into(), expected: "auto or off".into() }),
        };
        let content_store = match var("HIP_REMOTE_CONTENT_STORE")?.as_deref() {
            None | Some("auto") => None,
            Some("on" | "1") => Some(true),
            Some("off" | "0") => Some(false),
            Some(other) => return Err(EnvError { name: "HIP_REMOTE_CONTENT_STORE".into(), value: other.into(), expected: "auto, on or off".into() }),
        };
        let posted_lookups = match var("HIP_REMOTE_POSTED_LOOKUPS")?.as_deref() {
            None | Some("auto") => PostedLookups::Auto,
            Some("on" | "1") => PostedLookups::On,
            Some("off" | "0") => PostedLookups::Off,
            Some(other) => {
                return Err(EnvError { name: "HIP_REMOTE_POSTED_LOOKUPS".into(), value: other.into(), expected: "auto, on or off".into() })
            }
        };
        let compression = match var("HIP_REMOTE_COMPRESSION")?.as_deref() {
            None | Some("auto") => None,
            Some("on" | "1") => Some(true),
            Some("off" | "0") => Some(false),
            Some(other) => return Err(EnvError { name: "HIP_REMOTE_COMPRESSION".into(), value: other.into(), expected: "auto, on or off".into() }),
        };
        let debug = env::flag(lookup, "HIP_REMOTE_DEBUG")?.or(env::flag(lookup, "TF_DEBUG")?).unwrap_or(false);
        if let Some(filter) = var("HIP_REMOTE_LOG")? {
            // The library's own log (transports, connection) on stderr, e.g.
            // `HIP_REMOTE_LOG=transport_rdma=debug`; left alone if the host process installed
            // a subscriber already.
            let filter = tracing_subscriber::EnvFilter::try_new(&filter).map_err(|e| EnvError {
                name: "HIP_REMOTE_LOG".into(),
                value: filter.clone(),
                expected: format!("a tracing filter such as `info` or `transport_rdma=debug` ({e})"),
            })?;
            let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
        }
        let rdma_requested = env::flag(lookup, "HIP_REMOTE_PREFER_RDMA")?.unwrap_or(false);
        let rdma_without_tls = env::flag(lookup, "HIP_REMOTE_RDMA_WITHOUT_TLS")?.unwrap_or(false);
        let prefer_rdma = rdma_requested && (tls.is_none() || rdma_without_tls);
        let liveness = Liveness::from_lookup(lookup)?;
        // Reads stall at most the liveness timeout mid-frame; between frames the connection
        // watches heartbeats and the call's deadline itself.
        let tcp = TcpConfig { stall_timeout: Some(liveness.timeout), ..TcpConfig::from_lookup(lookup)? };
        Ok(Self {
            worker,
            workers,
            token: var("HIP_REMOTE_TOKEN")?,
            tcp,
            tls,
            debug,
            prefer_rdma,
            rdma_kept_off_by_tls: rdma_requested && !prefer_rdma,
            same_host,
            device_wait_spin: env::spin(lookup, "HIP_REMOTE_SYNC_SPIN_US")?.unwrap_or_else(default_device_wait_spin),
            liveness,
            client_alloc: env::flag(lookup, "HIP_REMOTE_CLIENT_ALLOC")?.unwrap_or(true),
            posted_lookups,
            content_store,
            compression,
            resume: env::flag(lookup, "HIP_REMOTE_RESUME")?.unwrap_or(true),
            compute_capability: var("HIP_REMOTE_COMPUTE_CAPABILITY")?
                .as_deref()
                .map_or(Ok(ComputeCapability::IsaVersion), ComputeCapability::parse)?,
            stripes: env::uint(lookup, "HIP_REMOTE_STRIPES", 0..=u64::from(MAX_STRIPES), "stripes")?.map_or(DEFAULT_STRIPES, |n| n as u32),
            stripe_min_bytes: env::uint(lookup, "HIP_REMOTE_STRIPE_MIN_BYTES", 1..=1 << 40, "bytes")?
                .map_or(DEFAULT_STRIPE_MIN_BYTES, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            #[cfg(feature = "rdma")]
            rdma: transport_rdma::RdmaConfig::from_lookup(lookup)?,
        })
    }
}

/// The scheme of an entry naming every address of a DNS name.
pub const DNS_SCHEME: &str = "dns:///";

/// Splits a `HIP_REMOTE_WORKER` list into its entries, refusing empty ones and overlong lists.
fn worker_entries(list: &str) -> Result<Vec<String>, EnvError> {
    let refused = |expected: String| EnvError { name: "HIP_REMOTE_WORKER".into(), value: list.chars().take(200).collect(), expected };
    if list.len() > MAX_WORKER_LIST_LEN {
        return Err(refused(format!("at most {MAX_WORKER_LIST_LEN} bytes")));
    }
    let entries: Vec<String> = list.split(',').map(|e| e.trim().to_string()).collect();
    if entries.iter().any(String::is_empty) {
        return Err(refused("host:port entries separated by commas, none empty".into()));
    }
    if entries.len() > MAX_WORKERS {
        return Err(refused(format!("at most {MAX_WORKERS} workers")));
    }
    for entry in &entries {
        if let Some(dns) = entry.strip_prefix(DNS_SCHEME) {
            dns_target(dns).map_err(refused)?;
        } else if entry.starts_with("dns:") {
            return Err(refused(format!("dns:///name:port (three slashes), not {entry}")));
        }
    }
    Ok(entries)
}

/// The name and port of a `dns:///name[:port]` entry (after the scheme).
fn dns_target(target: &str) -> Result<(&str, u16), String> {
    let (name, port) = match target.rsplit_once(':') {
        Some((name, port)) => (name, port.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(|| format!("a port number in dns:///{target}"))?),
        None => (target, DEFAULT_PORT),
    };
    if name.is_empty() || name.contains(['/', '[', ']']) {
        return Err(format!("dns:///name:port with a host name, not dns:///{target}"));
    }
    Ok((name, port))
}

/// Resolves `name` to every address it has (each A and AAAA record), as `dns:///` entries
/// are resolved in production: the system's resolver (`getaddrinfo`).
pub fn system_resolver(name: &str, port: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
    use std::net::ToSocketAddrs;
    Ok((name, port).to_socket_addrs()?.collect())
}

/// The order of a resolved name's workers, the device list's order: IPv4 addresses before
/// IPv6, each family by address (numerically), then by port; duplicates (one address per
/// socket type) once. Every client of a headless Service so numbers its devices alike.
pub fn sort_addresses(mut addresses: Vec<std::net::SocketAddr>) -> Vec<std::net::SocketAddr> {
    addresses.sort_by_key(|a| (a.is_ipv6(), a.ip(), a.port()));
    addresses.dedup();
    addresses
}

impl ClientConfig {
    /// The list's workers, `dns:///` entries replaced by every address their name resolves
    /// to (through `resolve`, in [`sort_addresses`]' order); refused past [`MAX_WORKERS`] or
    /// when a name resolves to nothing.
    pub fn resolve_workers(&self, resolve: &dyn Fn(&str, u16) -> std::io::Result<Vec<std::net::SocketAddr>>) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for entry in &self.workers {
            match entry.strip_prefix(DNS_SCHEME) {
                Some(target) => {
                    let (name, port) = dns_target(target)?;
                    let found = resolve(name, port).map_err(|e| format!("{entry} does not resolve: {e}"))?;
                    let found = sort_addresses(found);
                    if found.is_empty() {
                        return Err(format!("{entry} resolves to no address"));
                    }
                    out.extend(found.iter().map(|a| a.to_string()));
                }
                None => out.push(entry.clone()),
            }
            if out.len() > MAX_WORKERS {
                return Err(format!("{} workers after resolving {entry}: at most {MAX_WORKERS}", out.len()));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use std::time::Duration;

    fn from(vars: &[(&str, &str)]) -> Result<ClientConfig, EnvError> {
        ClientConfig::from_lookup(&|name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| Ok(v.to_string())))
    }

    #[test]
    fn defaults_and_overrides() {
        let c = from(&[]).unwrap();
        assert_eq!((c.worker.as_str(), c.debug, c.prefer_rdma), ("127.0.0.1:18515", false, false));
        assert_eq!(c.liveness, Liveness::default());
        assert_eq!(c.tcp.read_timeout(), Some(Duration::from_secs(30)));
        let c = from(&[("TF_WORKER_HOST", "gpu1"), ("TF_WORKER_PORT", "7000"), ("TF_DEBUG", "1"), ("HIP_REMOTE_LIVENESS_TIMEOUT", "8")]).unwrap();
        assert_eq!((c.worker.as_str(), c.debug), ("gpu1:7000", true));
        assert_eq!(c.tcp.read_timeout(), Some(Duration::from_secs(8)));
        assert_eq!(from(&[("HIP_REMOTE_WORKER", "tcp://h")]).unwrap().worker, "h:18515");
        assert!(from(&[("HIP_REMOTE_WORKER", "h:1")]).unwrap().tls.is_none());
    }

    #[test]
    fn a_list_names_several_workers_in_order() {
        let c = from(&[("HIP_REMOTE_WORKER", "tcp://a:1, b ,shm:///tmp/w.sock,dns:///svc:7000")]).unwrap();
        assert_eq!(c.workers, ["a:1", "b:18515", "shm:///tmp/w.sock", "dns:///svc:7000"]);
        assert_eq!(c.worker, "a:1");
        assert_eq!(from(&[("HIP_REMOTE_WORKER", "h:1")]).unwrap().workers, ["h:1"]);
        for bad in ["a:1,,b:2", "a:1,", "dns://svc:1", "dns:///svc:http", "dns:///:1", "dns:///svc:0"] {
            assert_eq!(from(&[("HIP_REMOTE_WORKER", bad)]).expect_err(bad).name, "HIP_REMOTE_WORKER", "{bad}");
        }
        let many = vec!["h:1"; MAX_WORKERS + 1].join(",");
        assert!(from(&[("HIP_REMOTE_WORKER", &many)]).is_err());
        assert_eq!(from(&[("HIP_REMOTE_WORKER", &many[4..])]).unwrap().workers.len(), MAX_WORKERS);
    }

    #[test]
    fn dns_names_expand_to_every_address_sorted() {
        use std::net::SocketAddr;
        let records = |name: &str, port: u16| -> std::io::Result<Vec<SocketAddr>> {
            match name {
                // In no particular order, one duplicate (as getaddrinfo gives per socket type).
                "gpus.svc" => Ok(["[::1]", "10.0.0.9", "10.0.0.10", "[fd00::2]", "10.0.0.9", "9.1.1.1"]
                    .iter()
                    .map(|ip| format!("{ip}:{port}").parse().unwrap())
                    .collect()),
                "empty.svc" => Ok(Vec::new()),
                _ => Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such name")),
            }
        };
        let c = from(&[("HIP_REMOTE_WORKER", "first:5,dns:///gpus.svc:7000")]).unwrap();
        assert_eq!(
            c.resolve_workers(&records).unwrap(),
            ["first:5", "9.1.1.1:7000", "10.0.0.9:7000", "10.0.0.10:7000", "[::1]:7000", "[fd00::2]:7000"]
        );
        assert_eq!(from(&[("HIP_REMOTE_WORKER", "dns:///gpus.svc")]).unwrap().resolve_workers(&records).unwrap()[0], "9.1.1.1:18515");
        let e = from(&[("HIP_REMOTE_WORKER", "dns:///empty.svc:1")]).unwrap().resolve_workers(&records).unwrap_err();
        assert!(e.contains("no address"), "{e}");
        let e = from(&[("HIP_REMOTE_WORKER", "dns:///nowhere.svc:1")]).unwrap().resolve_workers(&records).unwrap_err();
        assert!(e.contains("does not resolve"), "{e}");
        // The system resolver: localhost is at least the IPv4 loopback.
        let local = from(&[("HIP_REMOTE_WORKER", "dns:///localhost:7000")]).unwrap().resolve_workers(&system_resolver).unwrap();
        assert_eq!(local[0], "127.0.0.1:7000", "{local:?}");
    }

    #[cfg(feature = "tls")]
    #[test]
    fn tls_is_chosen_by_scheme_or_flag_and_its_files_are_checked() {
        for vars in [
            &[("HIP_REMOTE_WORKER", "tls://gpu1:7000"), ("HIP_REMOTE_TLS_CA", "/nonexistent.pem")][..],
            &[("HIP_REMOTE_TLS", "1"), ("HIP_REMOTE_TLS_CA", "/nonexistent.pem")],
        ] {
            let e = from(vars).expect_err("a CA that cannot be read");
            assert_eq!(e.name, "HIP_REMOTE_TLS_CA", "{e}");
        }
        let e = from(&[("HIP_REMOTE_WORKER", "tls://gpu1:7000"), ("HIP_REMOTE_TLS", "0")]).expect_err("contradiction");
        assert_eq!(e.name, "HIP_REMOTE_TLS");
        // The CA file is only read when TLS is on.
        assert!(from(&[("HIP_REMOTE_WORKER", "gpu1:7000"), ("HIP_REMOTE_TLS_CA", "/nonexistent.pem")]).unwrap().tls.is_none());
    }

    #[test]
    fn a_device_wait_spins_as_configured_and_by_core_count_otherwise() {
        assert_eq!(from(&[("HIP_REMOTE_SYNC_SPIN_US", "250")]).unwrap().device_wait_spin, Duration::from_micros(250));
        assert_eq!(from(&[("HIP_REMOTE_SYNC_SPIN_US", "0")]).unwrap().device_wait_spin, Duration::ZERO);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let expected = if cores >= SPIN_WAIT_MIN_CORES { DEFAULT_DEVICE_WAIT_SPIN } else { Duration::ZERO };
        assert_eq!(from(&[]).unwrap().device_wait_spin, expected);
    }

    #[test]
    fn stripes_are_configured_within_their_bounds() {
        let c = from(&[]).unwrap();
        assert_eq!((c.stripes, c.stripe_min_bytes), (DEFAULT_STRIPES, DEFAULT_STRIPE_MIN_BYTES));
        let c = from(&[("HIP_REMOTE_STRIPES", "0"), ("HIP_REMOTE_STRIPE_MIN_BYTES", "1048576")]).unwrap();
        assert_eq!((c.stripes, c.stripe_min_bytes), (0, 1 << 20));
        assert_eq!(from(&[("HIP_REMOTE_STRIPES", "17")]).expect_err("above 16").name, "HIP_REMOTE_STRIPES");
        assert_eq!(from(&[("HIP_REMOTE_STRIPE_MIN_BYTES", "0")]).expect_err("zero").name, "HIP_REMOTE_STRIPE_MIN_BYTES");
    }

    #[test]
    fn lookups_are_posted_where_the_image_shows_the_kernel_unless_told_otherwise() {
        assert_eq!(from(&[]).unwrap().posted_lookups, PostedLookups::Auto);
        for (value, want) in [
            ("auto", PostedLookups::Auto),
            ("on", PostedLookups::On),
            ("1", PostedLookups::On),
            ("off", PostedLookups::Off),
            ("0", PostedLookups::Off),
        ] {
            assert_eq!(from(&[("HIP_REMOTE_POSTED_LOOKUPS", value)]).unwrap().posted_lookups, want, "{value}");
        }
    }

    #[test]
    fn major_and_minor_are_the_gfx_isa_version_unless_told_otherwise() {
        let isa = from(&[]).unwrap().compute_capability;
        assert_eq!(isa, ComputeCapability::IsaVersion);
        // An AMD GPU keeps the worker's figures; an NVIDIA GPU and the host backend have no gfx ISA.
        assert_eq!(isa.presented("gfx90a:sramecc+:xnack-", (9, 0)), (9, 0));
        assert_eq!(isa.presented("sm_90", (9, 0)), (0, 0));
        assert_eq!(isa.presented("host", (1, 0)), (0, 0));
        let worker = from(&[("HIP_REMOTE_COMPUTE_CAPABILITY", "worker")]).unwrap().compute_capability;
        assert_eq!(worker.presented("sm_90", (9, 0)), (9, 0));
        let fixed = from(&[("HIP_REMOTE_COMPUTE_CAPABILITY", "8.6")]).unwrap().compute_capability;
        assert_eq!(fixed.presented("gfx1100", (11, 0)), (8, 6));
        for bad in ["9", "9.", "x.0", "1001.0", "9.0.1", "-1.0"] {
            assert_eq!(from(&[("HIP_REMOTE_COMPUTE_CAPABILITY", bad)]).expect_err(bad).name, "HIP_REMOTE_COMPUTE_CAPABILITY");
        }
    }

    #[test]
    fn rdma_is_preferred_only_where_it_loses_no_encryption() {
        let c = from(&[("HIP_REMOTE_PREFER_RDMA", "1")]).unwrap();
        assert!(c.prefer_rdma && !c.rdma_kept_off_by_tls);
    }

    #[cfg(feature = "tls")]
    #[test]
    fn a_dns_list_over_tls_checks_certificates_for_the_name() {
        let ca = std::env::temp_dir().join(format!("hip-remote-config-dns-ca-{}.pem", std::process::id()));
        let cert = rcgen::generate_simple_self_signed(vec!["svc".into()]).expect("a certificate");
        std::fs::write(&ca, cert.cert.pem()).expect("write the CA");
        let ca_path = ca.to_str().expect("a UTF-8 path");
        let name = |worker: &str| {
            let c = from(&[("HIP_REMOTE_WORKER", worker), ("HIP_REMOTE_TLS", "1"), ("HIP_REMOTE_TLS_CA", ca_path)]).unwrap();
            c.tls.expect("TLS").server_name.map(|n| format!("{n:?}"))
        };
        assert!(name("dns:///gpus.svc.cluster.local:18515").is_some_and(|n| n.contains("\"gpus.svc.cluster.local\"")));
        assert!(name("dns:///a:1,shm:///tmp/w.sock").is_some_and(|n| n.contains("\"a\"")), "shared memory has no certificate");
        assert_eq!(name("dns:///a:1,gpu9:1"), None, "gpu9 keeps its own name");
        assert_eq!(name("dns:///a:1,dns:///b:1"), None, "two names: each address is checked for itself");
        let _ = std::fs::remove_file(ca);
    }

    #[cfg(feature = "tls")]
    #[test]
    fn a_tls_client_stays_on_tls_unless_told_to_leave_it() {
        let ca = std::env::temp_dir().join(format!("hip-remote-config-ca-{}.pem", std::process::id()));
        let cert = rcgen::generate_simple_self_signed(vec!["gpu1".into()]).expect("a certificate");
        std::fs::write(&ca, cert.cert.pem()).expect("write the CA");
        let ca_path = ca.to_str().expect("a UTF-8 path");
        let base = [("HIP_REMOTE_WORKER", "tls://gpu1:7000"), ("HIP_REMOTE_TLS_CA", ca_path), ("HIP_REMOTE_PREFER_RDMA", "1")];
        let c = from(&base).unwrap();
        assert!(c.tls.is_some() && !c.prefer_rdma && c.rdma_kept_off_by_tls);
        let c = from(&[&base[..], &[("HIP_REMOTE_RDMA_WITHOUT_TLS", "1")]].concat()).unwrap();
        assert!(c.prefer_rdma && !c.rdma_kept_off_by_tls);
        let _ = std::fs::remove_file(ca);
    }

    #[test]
    fn every_bad_value_is_refused_by_name() {
        for (name, value) in [
            ("TF_WORKER_PORT", "http"),
            ("TF_WORKER_PORT", "0"),
            ("HIP_REMOTE_DEBUG", "verbose"),
            ("TF_DEBUG", "2"),
            ("HIP_REMOTE_PREFER_RDMA", "please"),
            ("HIP_REMOTE_RDMA_WITHOUT_TLS", "yes please"),
            ("HIP_REMOTE_SYNC_SPIN_US", "10001"),
            ("HIP_REMOTE_IO_TIMEOUT", "5min"),
            ("HIP_REMOTE_CONNECT_TIMEOUT", "-2"),
            ("HIP_REMOTE_TCP_SPIN_US", "20000"),
            ("HIP_REMOTE_HEARTBEAT", "0"),
            ("HIP_REMOTE_LIVENESS_TIMEOUT", "forever"),
            ("HIP_REMOTE_LOG", "[[["),
            ("HIP_REMOTE_TLS", "sometimes"),
            ("HIP_REMOTE_POSTED_LOOKUPS", "yes"),
        ] {
            let e = from(&[(name, value)]).expect_err(name);
            assert_eq!(e.name, name, "{e}");
            assert!(e.to_string().contains("expected"), "{e}");
        }
    }
}
