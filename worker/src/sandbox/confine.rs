//! What a session process gives up before it serves a byte of its client: every inherited
//! descriptor but its link and stderr, its user (when started as root), most resources,
//! the file system outside a few read-only system directories and its own scratch
//! directory (Landlock), new sockets and the system calls that reach other processes or the
//! kernel's administration (seccomp). Each layer the kernel cannot enforce is logged by name.
//! A GPU session process ([`GpuAccess`]) keeps what its driver needs besides: its vendor's
//! device files (and their groups), `/proc` and `/sys` to read, and Unix sockets.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// Directories a session process may read and execute from: the system's libraries and the
/// C/C++ toolchain the host hiprtc runs. Nothing under `/etc` but the loader's cache: a
/// token file there stays out of reach.
pub const READ_ONLY_PATHS: &[&str] =
    &["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/opt", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"];
/// Device files a session process may read and write (the compiler's `/dev/null`).
pub const DEVICE_PATHS: &[&str] = &["/dev/null", "/dev/zero", "/dev/urandom"];
/// What the NVIDIA driver opens, read, write and ioctl: its control and unified-memory
/// devices and the MIG capability files (a directory). The numbered GPUs, `/dev/nvidia0`
/// and up, are found at confinement ([`NVIDIA_GPU_PREFIX`]).
pub const NVIDIA_DEVICE_PATHS: &[&str] = &["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-caps"];
/// `/dev/nvidia` followed by digits names one NVIDIA GPU.
pub const NVIDIA_GPU_PREFIX: &str = "nvidia";
/// What the ROCm runtime opens, read, write and ioctl: the compute driver and the render
/// nodes (a directory).
pub const AMD_DEVICE_PATHS: &[&str] = &["/dev/kfd", "/dev/dri"];
/// What GPU drivers read besides their libraries: `/proc` (the driver's parameters in
/// `/proc/driver/nvidia`, the process's own maps, `/proc/devices`) and `/sys` (PCI
/// topology, the KFD topology). Other processes' `/proc` entries stay closed: Landlock
/// refuses ptrace-mode access to processes outside the domain.
pub const GPU_READ_ONLY_PATHS: &[&str] = &["/proc", "/sys"];

/// Most processes and threads of the session user, all its session processes together
/// (the kernel counts per user; threads count): room for every session's stream and kernel
/// threads and the compiler's pipeline, not for a fork bomb. Only set for a dedicated user.
const MAX_PROCESSES: u64 = 8192;
/// Default bound on the largest file a session process (and the compiler it runs) may write:
/// scratch files, compiled modules, compile cache entries. The memory files that hold the
/// host backend's device memory count against the same limit (the kernel's RLIMIT_FSIZE
/// applies to them too), so the limit a session process gets is never below its device
/// memory ([`default_max_file_bytes`]).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1 << 30;
/// Smallest file-size limit: one granule of device memory (client-placed allocations are
/// backed a granule or more at a time), below which no allocation fits.
pub const MIN_MAX_FILE_BYTES: u64 = crate::backend::host::RECOMMENDED_GRANULARITY;
/// The worker flag that sets a session process's file-size limit, in MiB.
pub const MAX_FILE_FLAG: &str = "--session-max-file-mib";
/// Least bound on open descriptors. The host backend keeps one per unit of client-placed
/// `hipMalloc` memory (a memory file of at least a granule, docs/ALLOCATION.md), so the
/// bound a session process gets grows with its device memory ([`max_open_files`]).
const MIN_OPEN_FILES: u64 = 4096;
/// Descriptors a session process needs besides its memory files: libraries, its link and
/// channels, the compiler's pipes, loaded modules.
const OPEN_FILES_HEADROOM: u64 = 1024;

/// Why Landlock is not enforced when the kernel cannot (logged; tests skip on it).
pub const KERNEL_LACKS_LANDLOCK: &str = "the kernel has no Landlock";
/// Why seccomp is not enforced when the kernel cannot (logged; tests skip on it).
pub const KERNEL_LACKS_SECCOMP: &str = "the kernel has no seccomp";

/// Whose GPU driver a session process must reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuVendor {
    /// The CUDA driver: [`NVIDIA_DEVICE_PATHS`] and the numbered GPUs.
    Nvidia,
    /// The ROCm runtime: [`AMD_DEVICE_PATHS`].
    Amd,
}

/// What a GPU session process keeps beyond a host one's rights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuAccess {
    /// Whose device files.
    pub vendor: GpuVendor,
    /// Library directories outside [`READ_ONLY_PATHS`] (read-only).
    pub library_dirs: Vec<PathBuf>,
    /// Directories the driver's client side writes in (the MPS daemon's pipe and log
    /// directories, [`MPS_DIRECTORY_VARIABLES`]).
    pub writable_dirs: Vec<PathBuf>,
}

/// Variables naming the CUDA MPS daemon's directories, which an MPS client must reach.
pub const MPS_DIRECTORY_VARIABLES: &[&str] = &["CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"];

impl GpuAccess {
    /// The MPS daemon's directories this process's environment names (absolute, existing).
    pub fn mps_directories() -> Vec<PathBuf> {
        MPS_DIRECTORY_VARIABLES.iter().filter_map(std::env::var_os).map(PathBuf::from).filter(|p| p.is_absolute() && p.exists()).collect()
    }
}

impl GpuAccess {
    /// The device files and directories of the vendor that exist here.
    pub fn device_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = match self.vendor {
            GpuVendor::Nvidia => NVIDIA_DEVICE_PATHS.iter().map(PathBuf::from).collect(),
            GpuVendor::Amd => AMD_DEVICE_PATHS.iter().map(PathBuf::from).collect(),
        };
        if self.vendor == GpuVendor::Nvidia {
            paths.extend(numbered_nvidia_gpus(Path::new("/dev")));
        }
        paths.retain(|p| p.exists());
        paths
    }

    /// The groups owning the device files (`/dev/kfd` and the render nodes belong to
    /// `render`/`video`, mode 0660): a session process switching user keeps these as its
    /// only supplementary groups. The root group is never kept.
    pub fn device_groups(&self) -> Vec<u32> {
        use std::os::unix::fs::MetadataExt;
        let mut files = Vec::new();
        for path in self.device_paths() {
            match std::fs::read_dir(&path) {
                Ok(dir) => files.extend(dir.flatten().map(|e| e.path())),
                Err(_) => files.push(path),
            }
        }
        let mut groups: Vec<u32> = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.gid()).filter(|&g| g != 0).collect();
        groups.sort_unstable();
        groups.dedup();
        groups
    }
}

/// The NVIDIA GPUs' device files in `dev`: `nvidia` followed by digits only.
fn numbered_nvidia_gpus(dev: &Path) -> Vec<PathBuf> {
    let numbered = |name: &str| name.strip_prefix(NVIDIA_GPU_PREFIX).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let mut gpus: Vec<PathBuf> =
        std::fs::read_dir(dev).into_iter().flatten().flatten().filter(|e| e.file_name().to_str().is_some_and(numbered)).map(|e| e.path()).collect();
    gpus.sort();
    gpus
}

/// What was enforced, for the log and for tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Enforced {
    /// The user and group the process runs as, when it switched from root.
    pub switched_user: Option<(u32, u32)>,
    /// Supplementary groups kept for the GPU's device files, when it switched from root.
    pub device_groups: Vec<u32>,
    /// Landlock: `"full"`, `"partial"` or why not.
    pub landlock: String,
    /// seccomp: `"on"` or why not.
    pub seccomp: String,
}

/// Closes every descriptor from `first` up: the process keeps stdin (its link), stdout,
/// stderr and what the worker passed below `first`. Whatever a library leaked into the
/// worker's children goes here.
pub fn close_inherited_fds(first: i32) -> io::Result<()> {
    // SAFETY: close_range only closes descriptors; nothing in this process uses any from
    // `first` up yet (it runs first in the session process's `main`).
    let rc = unsafe { libc::syscall(libc::SYS_close_range, first as u32, u32::MAX, 0u32) };
    if rc == 0 {
        return Ok(());
    }
    // Kernels before 5.9: close them one by one.
    for entry in std::fs::read_dir("/proc/self/fd")?.flatten() {
        if let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()).filter(|&fd| fd >= first) {
            // SAFETY: see above; a descriptor that is already gone (the directory's own) fails harmlessly.
            unsafe { libc::close(fd) };
        }
    }
    Ok(())
}

/// The file-size limit of session processes with `memory_per_device` bytes of device memory:
/// [`DEFAULT_MAX_FILE_BYTES`], or the device memory when larger (one allocation's memory
/// file may be that large; a smaller limit would kill the process with SIGXFSZ, or with it
/// ignored fail the allocation, however little the session writes to disk).
pub fn default_max_file_bytes(memory_per_device: u64) -> u64 {
    DEFAULT_MAX_FILE_BYTES.max(memory_per_device)
}

/// The open-descriptor bound of a session process with `devices` devices of
/// `memory_per_device` bytes: one memory file per granule of all of it, with headroom, and
/// never below [`MIN_OPEN_FILES`] (the kernel's hard limit still caps it).
pub fn max_open_files(memory_per_device: u64, devices: u32) -> u64 {
    let granules = memory_per_device.div_ceil(MIN_MAX_FILE_BYTES).saturating_mul(u64::from(devices.max(1)));
    MIN_OPEN_FILES.max(granules.saturating_add(OPEN_FILES_HEADROOM))
}

/// The file limits a session process sets on itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimits {
    /// Largest file it may write (RLIMIT_FSIZE), bytes.
    pub max_file_bytes: u64,
    /// Most descriptors it may hold open (RLIMIT_NOFILE).
    pub max_open_files: u64,
}

/// This process's file-size limit (RLIMIT_FSIZE) in bytes; `None` when there is none.
pub fn file_size_limit() -> Option<u64> {
    let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut current) } != 0 || current.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some(current.rlim_cur)
}

/// The file-size limit in words for an error message: its value and the flag that raises it.
pub fn file_limit_text(limit: Option<u64>) -> String {
    match limit {
        Some(bytes) => format!("the session's file-size limit ({}, RLIMIT_FSIZE; the worker's {MAX_FILE_FLAG} raises it)", mib_text(bytes)),
        None => "the file-size limit (RLIMIT_FSIZE)".into(),
    }
}

fn mib_text(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// `e`, explained when a session process's limit caused it: `EFBIG` (a write or a size
/// beyond the file-size limit: the limit and the flag that raises it) or `EMFILE` (the
/// open-descriptor limit).
pub fn explain_limit(e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(libc::EFBIG) => io::Error::new(e.kind(), format!("{e}: beyond {}", file_limit_text(file_size_limit()))),
        Some(libc::EMFILE) => {
            let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            // SAFETY: getrlimit writes the struct we pass.
            let limit = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut current) } == 0 { current.rlim_cur.to_string() } else { "?".into() };
            io::Error::new(
                e.kind(),
                format!("{e}: the session's open-descriptor limit ({limit}, RLIMIT_NOFILE; one per granule of device memory with headroom: free allocations)"),
            )
        }
        _ => e,
    }
}

/// Lowers `resource` to `value`, or keeps it where it is when it is lower already (raising a
/// hard limit needs privileges the process may not have; small machines start lower).
fn set_rlimit(resource: libc::__rlimit_resource_t, value: u64, what: &str) -> io::Result<()> {
    let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct we pass.
    if unsafe { libc::getrlimit(resource, &mut current) } != 0 {
        return Err(step_failed(what));
    }
    let value = value.min(current.rlim_max);
    let limit = libc::rlimit { rlim_cur: value, rlim_max: value };
    // SAFETY: setrlimit reads the struct we pass.
    if unsafe { libc::setrlimit(resource, &limit) } != 0 {
        return Err(step_failed(what));
    }
    Ok(())
}

/// The last OS error, naming the step of [`confine`] that failed.
fn step_failed(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Drops every right the session does not need. `run_as`: user and group to switch to when
/// running as root; `scratch`: the one directory the process may write, with `cache` (its
/// tenant's compile cache) when given; `limits`: its file-size and open-descriptor limits;
/// `gpu`: what a GPU process's driver must reach.
pub fn confine(
    run_as: Option<(u32, u32)>,
    scratch: &Path,
    cache: Option<&Path>,
    limits: FileLimits,
    gpu: Option<&GpuAccess>,
) -> io::Result<Enforced> {
    let mut enforced = Enforced::default();
    set_rlimit(libc::RLIMIT_CORE, 0, "RLIMIT_CORE")?;
    set_rlimit(libc::RLIMIT_FSIZE, limits.max_file_bytes, "RLIMIT_FSIZE")?;
    // A write beyond the limit fails with EFBIG (and the call that made it reports the limit)
    // instead of killing the session; the compiler inherits the ignored signal.
    // SAFETY: setting a signal's disposition to "ignore" installs no handler.
    if unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) } == libc::SIG_ERR {
        return Err(step_failed("ignoring SIGXFSZ"));
    }
    set_rlimit(libc::RLIMIT_NOFILE, limits.max_open_files, "RLIMIT_NOFILE")?;
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } == 0 {
        let (uid, gid) = run_as.ok_or_else(|| io::Error::other("running as root without a user to switch to (--host-code-user)"))?;
        // Set while still root: the session user's processes and threads, all sessions'.
        set_rlimit(libc::RLIMIT_NPROC, MAX_PROCESSES, "RLIMIT_NPROC")?;
        // Only the device files' groups survive the switch (none for a host process).
        let groups = gpu.map(GpuAccess::device_groups).unwrap_or_default();
        // SAFETY: plain system calls on integers and a slice of `groups.len()` gids; each
        // result is checked, and a failure stops the session before any client code runs.
        unsafe {
            if libc::setgroups(groups.len(), groups.as_ptr()) != 0 {
                return Err(step_failed(&format!("setgroups({groups:?})")));
            }
            if libc::setgid(gid) != 0 {
                return Err(step_failed(&format!("setgid({gid})")));
            }
            if libc::setuid(uid) != 0 {
                return Err(step_failed(&format!("setuid({uid})")));
            }
        }
        // SAFETY: as above.
        if unsafe { libc::setuid(0) } == 0 {
            return Err(io::Error::other("could switch back to root after dropping it"));
        }
        enforced.switched_user = Some((uid, gid));
        // Changing user made the process non-dumpable, which hands its /proc entries to root:
        // the GPU driver could then not name its threads (`/proc/PID/task/TID/comm`) and CUDA's
        // cuInit fails with CUDA_ERROR_OPERATING_SYSTEM. Other processes still cannot reach it:
        // ptrace and process_vm_* are refused below, Landlock refuses ptrace access (and with it
        // /proc/PID/mem, maps, environ) across domains, and RLIMIT_CORE is 0.
        // SAFETY: prctl with integer arguments; the result is checked.
        if gpu.is_some() && unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) } != 0 {
            return Err(step_failed("PR_SET_DUMPABLE"));
        }
        enforced.device_groups = groups;
    }
    // SAFETY: prctl with integer arguments; checked.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(step_failed("PR_SET_NO_NEW_PRIVS"));
    }
    enforced.landlock = match restrict_paths(scratch, cache, gpu) {
        Ok(status) => status,
        Err(e) => format!("not enforced: {e}"),
    };
    enforced.seccomp = match filter_syscalls(gpu.is_some()) {
        Ok(()) => "on".into(),
        Err(e) => format!("not enforced: {e}"),
    };
    Ok(enforced)
}

/// Landlock: read and execute under [`READ_ONLY_PATHS`], read and write [`DEVICE_PATHS`],
/// everything in `scratch`, nothing else; no TCP bind or connect (ABI 4+); no signals to
/// or abstract sockets of processes outside the sandbox (ABI 6+). A GPU process also reads
/// [`GPU_READ_ONLY_PATHS`] and its library directories, and reads, writes and ioctls its
/// vendor's device files (ioctl on devices is a right from ABI 5). Best effort: what the
/// kernel's ABI lacks is left out and reported.
fn restrict_paths(scratch: &Path, cache: Option<&Path>, gpu: Option<&GpuAccess>) -> Result<String, landlock::RulesetError> {
    use landlock::{path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI};
    let abi = ABI::V6;
    let existing = |paths: &[&str]| paths.iter().map(PathBuf::from).filter(|p| p.exists()).collect::<Vec<_>>();
    let gpu_writable = gpu.map(|gpu| gpu.writable_dirs.clone()).unwrap_or_default();
    // The CUDA driver names the threads it starts (`/proc/PID/task/TID/comm`) and fails
    // cuInit with CUDA_ERROR_OPERATING_SYSTEM when it cannot: a GPU process may write its
    // own /proc entries (its own only: the rule is this process's directory).
    let own_proc = gpu.map(|_| vec![PathBuf::from(format!("/proc/{}", std::process::id()))]).unwrap_or_default();
    let (gpu_read, gpu_devices) = match gpu {
        Some(gpu) => {
            let mut read = existing(GPU_READ_ONLY_PATHS);
            read.extend(gpu.library_dirs.iter().filter(|d| d.exists()).cloned());
            let devices = gpu.device_paths();
            tracing::debug!(?read, ?devices, "Landlock: the GPU driver's paths");
            if devices.is_empty() {
                tracing::warn!(vendor = ?gpu.vendor, "Landlock: none of the GPU's device files exists here; the driver will find none");
            }
            (read, devices)
        }
        None => (Vec::new(), Vec::new()),
    };
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))?
        .handle_access(AccessNet::from_all(abi))?
        .scope(Scope::from_all(abi))?
        .create()?
        .add_rules(path_beneath_rules(existing(READ_ONLY_PATHS), AccessFs::from_read(abi)))?
        .add_rules(path_beneath_rules(existing(DEVICE_PATHS), AccessFs::ReadFile | AccessFs::WriteFile))?
        .add_rules(path_beneath_rules([scratch], AccessFs::from_all(abi)))?
        .add_rules(path_beneath_rules(cache, AccessFs::from_all(abi)))?
        .add_rules(path_beneath_rules(gpu_read, AccessFs::from_read(abi)))?
        .add_rules(path_beneath_rules(gpu_devices, AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev))?
        .add_rules(path_beneath_rules(gpu_writable, AccessFs::from_all(abi)))?
        .add_rules(path_beneath_rules(own_proc, AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate))?
        .restrict_self()?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => "full".into(),
        RulesetStatus::PartiallyEnforced => "partial (the kernel's Landlock ABI lacks some rights)".into(),
        RulesetStatus::NotEnforced => format!("not enforced: {KERNEL_LACKS_LANDLOCK}"),
    })
}

/// System calls a session process never needs and host code must not have: they reach
/// other processes (ptrace, process_vm_*), the kernel's administration (mount, bpf, modules,
/// kexec, keys), new namespaces, or ways around Landlock (open_by_handle_at).
const REFUSED_SYSCALLS: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_setns,
    libc::SYS_unshare,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_io_uring_setup,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_acct,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    // No new sockets of any family: the session talks only over its link (a GPU process:
    // Unix sockets only, see `filter_syscalls`).
    libc::SYS_socket,
];

/// seccomp: [`REFUSED_SYSCALLS`] and `clone` with `CLONE_NEWUSER` fail with `EPERM`;
/// `clone3` (whose flags a filter cannot read) fails with `ENOSYS`, so libc falls back to
/// `clone`. Inherited by the compiler the host hiprtc runs. A GPU process (`gpu`) may
/// create `AF_UNIX` sockets, no other family: the CUDA driver reaches an MPS server over one.
fn filter_syscalls(gpu: bool) -> Result<(), String> {
    // SAFETY: prctl with integer arguments; kernels built without seccomp answer EINVAL.
    if unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } < 0 {
        return Err(KERNEL_LACKS_SECCOMP.into());
    }
    use seccompiler::{SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule};
    let arch = std::env::consts::ARCH.try_into().map_err(|e| format!("{e}"))?;
    let mut refused: BTreeMap<i64, Vec<SeccompRule>> = REFUSED_SYSCALLS.iter().map(|&nr| (nr, Vec::new())).collect();
    let new_user_ns =
        SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(libc::CLONE_NEWUSER as u64), libc::CLONE_NEWUSER as u64)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(|e| e.to_string())?;
    refused.insert(libc::SYS_clone, vec![new_user_ns]);
    if gpu {
        let not_unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(|e| e.to_string())?;
        refused.insert(libc::SYS_socket, vec![not_unix]);
    }
    let eperm = SeccompFilter::new(refused, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch).map_err(|e| e.to_string())?;
    let enosys =
        SeccompFilter::new(BTreeMap::from([(libc::SYS_clone3, Vec::new())]), SeccompAction::Allow, SeccompAction::Errno(libc::ENOSYS as u32), arch)
            .map_err(|e| e.to_string())?;
    for filter in [eperm, enosys] {
        let program: seccompiler::BpfProgram = filter.try_into().map_err(|e: seccompiler::BackendError| e.to_string())?;
        seccompiler::apply_filter(&program).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The uid and gid of `user`, from the system's user database.
pub fn lookup_user(user: &str) -> io::Result<(u32, u32)> {
    let name = std::ffi::CString::new(user).map_err(|_| io::Error::other("user name contains a NUL byte"))?;
    // SAFETY: getpwnam reads a NUL-terminated string; the returned record (static storage)
    // is read at once, before any other call could overwrite it.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        return Err(io::Error::other(format!("no user named {user:?}")));
    }
    // SAFETY: non-null record from getpwnam, read immediately.
    Ok(unsafe { ((*entry).pw_uid, (*entry).pw_gid) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_numbered_nvidia_devices_count_as_gpus() {
        let dev = tempfile::tempdir().unwrap();
        for name in ["nvidia0", "nvidia12", "nvidiactl", "nvidia-uvm", "nvidia-caps", "nvidia", "nvidia1a", "nvme0"] {
            std::fs::write(dev.path().join(name), b"").unwrap();
        }
        assert_eq!(numbered_nvidia_gpus(dev.path()), vec![dev.path().join("nvidia0"), dev.path().join("nvidia12")]);
        assert!(numbered_nvidia_gpus(&dev.path().join("missing")).is_empty());
    }

    #[test]
    fn the_file_size_limit_is_never_below_the_device_memory() {
        assert_eq!(default_max_file_bytes(256 << 20), DEFAULT_MAX_FILE_BYTES);
        assert_eq!(default_max_file_bytes(16 << 30), 16 << 30);
        assert_eq!(
            file_limit_text(Some(2 << 20)),
            "the session's file-size limit (2 MiB, RLIMIT_FSIZE; the worker's --session-max-file-mib raises it)"
        );
        assert!(file_limit_text(Some((1 << 20) + 1)).contains("1048577 bytes"));
    }

    #[test]
    fn open_descriptors_cover_every_granule_of_device_memory() {
        assert_eq!(max_open_files(1 << 30, 1), MIN_OPEN_FILES);
        // 16 GiB in 2 MiB granules on each of two devices, and the headroom.
        assert_eq!(max_open_files(16 << 30, 2), 2 * 8192 + OPEN_FILES_HEADROOM);
    }

    #[test]
    fn limit_errors_name_the_limit() {
        let e = explain_limit(io::Error::from_raw_os_error(libc::EFBIG));
        assert!(e.to_string().contains("RLIMIT_FSIZE"), "{e}");
        let e = explain_limit(io::Error::from_raw_os_error(libc::EMFILE));
        assert!(e.to_string().contains("RLIMIT_NOFILE"), "{e}");
        let other = explain_limit(io::Error::from_raw_os_error(libc::ENOENT));
        assert!(!other.to_string().contains("RLIMIT"), "{other}");
    }
}
