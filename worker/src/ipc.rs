//! The worker's IPC registry: which memory and events sessions exported (`hipIpcGetMemHandle`,
//! `hipIpcGetEventHandle`), under which token, for which tenant.
//!
//! A token is 128 random bits drawn when something is exported; a session may open it only if
//! it belongs to the exporter's tenant (another tenant's token answers as a made-up one does,
//! so a guess learns nothing). An export lasts until the exporter frees the memory, destroys
//! the event or ends; what importers opened stays valid after that (see
//! [`crate::backend::IpcBackend`]).
//!
//! Sessions of the worker's own process use the [`LocalBroker`] directly. A session process
//! ([`crate::sandbox`]) cannot: its [`ChildBroker`] asks the worker over a socket of its own
//! (descriptor [`crate::sandbox::IPC_FD`]), passing memory files with `SCM_RIGHTS`, and the
//! worker answers from its registry with the tenant *it* authenticated for that process
//! ([`serve_channel`]), so a compromised session process cannot claim another tenant.
//!
//! GPU session processes share memory as native processes do: the exporter's driver writes
//! its IPC handle (`cuIpcGetMemHandle`, 64 bytes), which rides the channel as bytes
//! ([`IpcShare::Driver`]) into the registry, and the importing process's driver opens it; a
//! virtual-memory mapping's physical memory, and an interprocess event's shared page, travel
//! as file descriptors. Clients never see
//! a driver handle: only the tokens, so a forged or replayed handle from a client can name
//! nothing but a token of its own tenant's.

use crate::backend::{DriverIpcHandle, IpcEventShare, IpcReach, IpcShare, DRIVER_IPC_HANDLE_BYTES};
use crate::session::Failure;
use proto_core::Status;
use std::any::Any;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};

/// A 128-bit export token.
pub type Token = [u8; 16];

/// Most exports alive in one worker at once (each holds a memory file or keeps memory alive).
pub const MAX_IPC_EXPORTS: usize = 1 << 16;

/// Most exports one session process may hold in the worker's registry at once, so one
/// session cannot fill [`MAX_IPC_EXPORTS`] for everyone.
pub const MAX_IPC_EXPORTS_PER_PROCESS: usize = 1 << 12;

/// What an export shares.
#[derive(Clone)]
pub enum Shared {
    /// An allocation of `size` bytes on `device`.
    Memory {
        share: IpcShare,
        size: u64,
        device: u32,
        /// Keeps the exporter's memory alive while the export or an importer holds it (GPU
        /// backends, whose shares are the exporter's own pointer).
        keep: Option<Arc<dyn Any + Send + Sync>>,
    },
    /// An interprocess event of `device`.
    Event { share: IpcEventShare, device: u32, keep: Option<Arc<dyn Any + Send + Sync>> },
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Memory { share, size, device, .. } => {
                f.debug_struct("Memory").field("share", share).field("size", size).field("device", device).finish()
            }
            Self::Event { share, device, .. } => f.debug_struct("Event").field("share", share).field("device", device).finish(),
        }
    }
}

/// The registry as a session sees it.
pub trait IpcBroker: Send + Sync + std::fmt::Debug {
    /// Registers an export of `tenant`'s; answers its fresh token.
    fn export(&self, tenant: Option<&str>, what: Shared) -> Result<Token, Failure>;
    /// What `token` names, if `tenant` exported it and it is still exported.
    fn open(&self, tenant: Option<&str>, token: Token) -> Result<Shared, Failure>;
    /// Ends an export.
    fn revoke(&self, token: Token);
    /// Whom the registry's shares reach: the sessions of this process, or session processes
    /// (what a backend exports must work there).
    fn reach(&self) -> IpcReach;
}

/// The answer to a token nobody may open: made up, revoked, or another tenant's (ROCm answers
/// a handle it cannot attach with `hipErrorInvalidDevicePointer`, an event handle with
/// `hipErrorInvalidValue`).
fn unknown_token(event: bool) -> Failure {
    let status = if event { Status::INVALID_VALUE } else { Status::INVALID_DEVICE_POINTER };
    Failure::new(status, "no exported memory or event of this tenant has this handle (made up, closed, or freed)")
}

/// The registry of the worker's process.
#[derive(Debug, Default)]
pub struct LocalBroker {
    exports: Mutex<HashMap<Token, (Option<String>, Shared)>>,
}

impl LocalBroker {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Token, (Option<String>, Shared)>> {
        self.exports.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl IpcBroker for LocalBroker {
    fn export(&self, tenant: Option<&str>, what: Shared) -> Result<Token, Failure> {
        let mut exports = self.lock();
        if exports.len() >= MAX_IPC_EXPORTS {
            return Err(Failure::new(Status::OUT_OF_MEMORY, format!("the worker holds its most IPC exports ({MAX_IPC_EXPORTS})")));
        }
        let mut token = Token::default();
        getrandom::fill(&mut token).map_err(|e| Failure::new(Status::UNKNOWN, format!("no randomness for an IPC token: {e}")))?;
        exports.insert(token, (tenant.map(str::to_owned), what));
        Ok(token)
    }

    fn open(&self, tenant: Option<&str>, token: Token) -> Result<Shared, Failure> {
        match self.lock().get(&token) {
            Some((owner, what)) if owner.as_deref() == tenant => Ok(what.clone()),
            _ => Err(unknown_token(false)),
        }
    }

    fn revoke(&self, token: Token) {
        self.lock().remove(&token);
    }

    fn reach(&self) -> IpcReach {
        IpcReach::ThisProcess
    }
}

// ---- the channel between a session process and the worker ------------------------------------

/// Channel operations (first byte of a request).
mod op {
    pub const EXPORT_MEMORY: u8 = 1;
    pub const EXPORT_EVENT: u8 = 2;
    pub const OPEN: u8 = 3;
    pub const REVOKE: u8 = 4;
    /// An export of a driver's IPC memory handle (bytes in the record, no descriptor).
    pub const EXPORT_MEMORY_HANDLE: u8 = 5;
}

/// Kinds in an OPEN answer.
mod kind {
    pub const MEMORY: u8 = 1;
    pub const EVENT: u8 = 2;
    pub const MEMORY_HANDLE: u8 = 3;
}

/// One record of the channel, both ways: `[op or kind u8][pad 3][status i32][token 16]
/// [size u64][len u64][device u32][pad 4][driver handle 64]`; a memory file rides along as
/// `SCM_RIGHTS`.
const RECORD_LEN: usize = 48 + DRIVER_IPC_HANDLE_BYTES;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    op: u8,
    status: i32,
    token: Token,
    /// Bytes of the allocation.
    size: u64,
    /// Bytes of its memory file.
    len: u64,
    device: u32,
    /// A driver's IPC handle (the `*_HANDLE` operations and kinds; zero otherwise).
    handle: [u8; DRIVER_IPC_HANDLE_BYTES],
}

impl Default for Record {
    fn default() -> Self {
        Self { op: 0, status: 0, token: Token::default(), size: 0, len: 0, device: 0, handle: [0; DRIVER_IPC_HANDLE_BYTES] }
    }
}

impl Record {
    fn encode(&self) -> [u8; RECORD_LEN] {
        let mut out = [0u8; RECORD_LEN];
        out[0] = self.op;
        out[4..8].copy_from_slice(&self.status.to_le_bytes());
        out[8..24].copy_from_slice(&self.token);
        out[24..32].copy_from_slice(&self.size.to_le_bytes());
        out[32..40].copy_from_slice(&self.len.to_le_bytes());
        out[40..44].copy_from_slice(&self.device.to_le_bytes());
        out[48..].copy_from_slice(&self.handle);
        out
    }

    fn decode(bytes: &[u8; RECORD_LEN]) -> Self {
        let word = |r: std::ops::Range<usize>| -> [u8; 4] { bytes[r].try_into().expect("4 bytes") };
        Self {
            op: bytes[0],
            status: i32::from_le_bytes(word(4..8)),
            token: bytes[8..24].try_into().expect("16 bytes"),
            size: u64::from_le_bytes(bytes[24..32].try_into().expect("8 bytes")),
            len: u64::from_le_bytes(bytes[32..40].try_into().expect("8 bytes")),
            device: u32::from_le_bytes(word(40..44)),
            handle: bytes[48..].try_into().expect("a driver handle"),
        }
    }
}

/// A connected `SOCK_SEQPACKET` pair (message boundaries kept, descriptors passed with them).
pub fn channel_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors; the result is checked.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are fresh descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Sends one record, with `fd` attached if given.
fn send(sock: &OwnedFd, record: &Record, fd: Option<&OwnedFd>) -> std::io::Result<()> {
    let bytes = record.encode();
    let mut iov = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: bytes.len() };
    // Room for one descriptor, aligned as cmsghdr needs.
    let mut control = [0u64; 4];
    // SAFETY: an all-zero msghdr is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if let Some(fd) = fd {
        // SAFETY: CMSG_SPACE only computes a size.
        let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        // SAFETY: the control buffer is large enough for one descriptor's cmsg (checked by
        // the size of `control`), so CMSG_FIRSTHDR is non-null and the writes stay inside it.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
            libc::CMSG_DATA(cmsg).cast::<RawFd>().write_unaligned(fd.as_raw_fd());
        }
    }
    loop {
        // SAFETY: `msg` points at live buffers for the duration of the call.
        let n = unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
        if n >= 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Receives one record and the descriptor attached to it; `None` at the end of the channel.
fn recv(sock: &OwnedFd) -> std::io::Result<Option<(Record, Option<OwnedFd>)>> {
    let mut bytes = [0u8; RECORD_LEN];
    let mut iov = libc::iovec { iov_base: bytes.as_mut_ptr().cast(), iov_len: bytes.len() };
    let mut control = [0u64; 4];
    // SAFETY: an all-zero msghdr is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    let n = loop {
        // SAFETY: `msg` points at live, writable buffers; descriptors received are closed on
        // exec.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break n as usize;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    let mut received = None;
    // SAFETY: the kernel filled `msg_control` with well-formed cmsgs within `msg_controllen`;
    // each SCM_RIGHTS payload holds descriptors now owned by this process.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<RawFd>();
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                for i in 0..count {
                    let fd = OwnedFd::from_raw_fd(data.add(i).read_unaligned());
                    // One descriptor is expected; any extra is closed by dropping it.
                    if received.is_none() {
                        received = Some(fd);
                    }
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    if n == 0 {
        return Ok(None);
    }
    if n != RECORD_LEN || msg.msg_flags & (libc::MSG_TRUNC | libc::MSG_CTRUNC) != 0 {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "malformed IPC channel record"));
    }
    Ok(Some((Record::decode(&bytes), received)))
}

/// The registry as a session process sees it: every request goes to the worker.
#[derive(Debug)]
pub struct ChildBroker {
    sock: Mutex<OwnedFd>,
}

impl ChildBroker {
    /// Talks to the worker over `sock` (this process's end of [`channel_pair`]).
    pub fn new(sock: OwnedFd) -> Self {
        Self { sock: Mutex::new(sock) }
    }

    fn ask(&self, request: Record, fd: Option<&OwnedFd>) -> Result<(Record, Option<OwnedFd>), Failure> {
        let lost = |e: std::io::Error| Failure::new(Status::UNKNOWN, format!("the worker's IPC registry is unreachable: {e}"));
        let sock = self.sock.lock().unwrap_or_else(|p| p.into_inner());
        send(&sock, &request, fd).map_err(lost)?;
        let (reply, fd) = recv(&sock).map_err(lost)?.ok_or_else(|| lost(std::io::ErrorKind::UnexpectedEof.into()))?;
        if reply.status != 0 {
            return Err(Failure::new(Status(reply.status), "refused by the worker's IPC registry"));
        }
        Ok((reply, fd))
    }
}

impl IpcBroker for ChildBroker {
    fn export(&self, _tenant: Option<&str>, what: Shared) -> Result<Token, Failure> {
        let request = |op, size, len, device| Record { op, size, len, device, ..Record::default() };
        let (request, fd) = match &what {
            Shared::Memory { share: IpcShare::Fd { fd, len }, size, device, .. } => (request(op::EXPORT_MEMORY, *size, *len, *device), Some(&**fd)),
            Shared::Event { share: IpcEventShare::Fd(fd), device, .. } => (request(op::EXPORT_EVENT, 0, 0, *device), Some(&**fd)),
            Shared::Memory { share: IpcShare::Driver(handle), size, device, .. } => {
                (Record { handle: handle.0, ..request(op::EXPORT_MEMORY_HANDLE, *size, 0, *device) }, None)
            }
            // The exporter's own pointer or event means nothing in another process; backends
            // export for `IpcReach::OtherProcesses` here, so this is a backend's mistake.
            Shared::Memory { share: IpcShare::Pointer(_), .. } | Shared::Event { share: IpcEventShare::Handle(_), .. } => {
                return Err(Failure::new(Status::UNKNOWN, "the backend shared a pointer of its own process with session processes"));
            }
        };
        let (reply, _) = self.ask(request, fd)?;
        Ok(reply.token)
    }

    fn open(&self, _tenant: Option<&str>, token: Token) -> Result<Shared, Failure> {
        let (reply, fd) = self.ask(Record { op: op::OPEN, token, ..Record::default() }, None)?;
        let fd = || fd.map(Arc::new).ok_or_else(|| Failure::new(Status::UNKNOWN, "the worker's IPC answer lacks its memory file"));
        let (size, device, handle) = (reply.size, reply.device, DriverIpcHandle(reply.handle));
        match reply.op {
            kind::MEMORY => Ok(Shared::Memory { share: IpcShare::Fd { fd: fd()?, len: reply.len }, size, device, keep: None }),
            kind::EVENT => Ok(Shared::Event { share: IpcEventShare::Fd(fd()?), device, keep: None }),
            kind::MEMORY_HANDLE => Ok(Shared::Memory { share: IpcShare::Driver(handle), size, device, keep: None }),
            other => Err(Failure::new(Status::UNKNOWN, format!("the worker's IPC answer has kind {other}"))),
        }
    }

    fn revoke(&self, token: Token) {
        if let Err(e) = self.ask(Record { op: op::REVOKE, token, ..Record::default() }, None) {
            tracing::warn!(?e, "revoking an IPC export failed");
        }
    }

    fn reach(&self) -> IpcReach {
        IpcReach::OtherProcesses
    }
}

/// The worker's side of a session process's channel: answers its requests from `broker` as
/// `tenant` (the tenant the worker authenticated), until the process closes it; then revokes
/// what it exported.
pub fn serve_channel(sock: OwnedFd, broker: &dyn IpcBroker, tenant: Option<&str>) {
    let mut exported: Vec<Token> = Vec::new();
    loop {
        let (request, fd) = match recv(&sock) {
            Ok(Some(received)) => received,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!(%e, "IPC channel of a session process failed");
                break;
            }
        };
        let answer = answer(broker, tenant, request, fd, &mut exported);
        let (reply, fd) = match answer {
            Ok(answered) => answered,
            Err(Failure::Status(status, message)) => {
                tracing::debug!(%message, "IPC request of a session process refused");
                (Record { status: status.0, ..Record::default() }, None)
            }
            Err(Failure::ReplyDeferred) => (Record { status: Status::UNKNOWN.0, ..Record::default() }, None),
        };
        if let Err(e) = send(&sock, &reply, fd.as_deref()) {
            tracing::warn!(%e, "IPC channel of a session process failed");
            break;
        }
    }
    for token in exported {
        broker.revoke(token);
    }
}

fn answer(
    broker: &dyn IpcBroker,
    tenant: Option<&str>,
    request: Record,
    fd: Option<OwnedFd>,
    exported: &mut Vec<Token>,
) -> Result<(Record, Option<Arc<OwnedFd>>), Failure> {
    let missing_fd = || Failure::new(Status::INVALID_VALUE, "an export without its memory file");
    match request.op {
        op::EXPORT_MEMORY | op::EXPORT_EVENT | op::EXPORT_MEMORY_HANDLE => {
            if exported.len() >= MAX_IPC_EXPORTS_PER_PROCESS {
                return Err(Failure::new(
                    Status::OUT_OF_MEMORY,
                    format!("the session holds its most IPC exports ({MAX_IPC_EXPORTS_PER_PROCESS}): free exported memory first"),
                ));
            }
            let (size, device, handle) = (request.size, request.device, DriverIpcHandle(request.handle));
            let what = match request.op {
                op::EXPORT_MEMORY => {
                    Shared::Memory { share: IpcShare::Fd { fd: Arc::new(fd.ok_or_else(missing_fd)?), len: request.len }, size, device, keep: None }
                }
                op::EXPORT_EVENT => Shared::Event { share: IpcEventShare::Fd(Arc::new(fd.ok_or_else(missing_fd)?)), device, keep: None },
                // A descriptor sent along with a driver handle is dropped (closed) here.
                _ => Shared::Memory { share: IpcShare::Driver(handle), size, device, keep: None },
            };
            let token = broker.export(tenant, what)?;
            exported.push(token);
            Ok((Record { token, ..Record::default() }, None))
        }
        op::OPEN => match broker.open(tenant, request.token)? {
            Shared::Memory { share: IpcShare::Fd { fd, len }, size, device, .. } => {
                Ok((Record { op: kind::MEMORY, size, len, device, ..Record::default() }, Some(fd)))
            }
            Shared::Event { share: IpcEventShare::Fd(fd), device, .. } => Ok((Record { op: kind::EVENT, device, ..Record::default() }, Some(fd))),
            Shared::Memory { share: IpcShare::Driver(handle), size, device, .. } => {
                Ok((Record { op: kind::MEMORY_HANDLE, size, device, handle: handle.0, ..Record::default() }, None))
            }
            // A pointer of the worker's own process (a session it serves itself): nothing a
            // session process can use.
            Shared::Memory { share: IpcShare::Pointer(_), .. } | Shared::Event { share: IpcEventShare::Handle(_), .. } => Err(unknown_token(false)),
        },
        op::REVOKE => {
            // Only what this process exported.
            if let Some(at) = exported.iter().position(|t| *t == request.token) {
                broker.revoke(exported.swap_remove(at));
            }
            Ok((Record::default(), None))
        }
        other => Err(Failure::new(Status::INVALID_VALUE, format!("unknown IPC channel operation {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let mut handle = [0u8; DRIVER_IPC_HANDLE_BYTES];
        handle.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8 ^ 0xa5);
        let r = Record { op: 3, status: -5, token: [9; 16], size: 1 << 40, len: 1 << 41, device: 7, handle };
        assert_eq!(Record::decode(&r.encode()), r);
    }

    #[test]
    fn tokens_are_per_tenant_and_revocable() {
        let broker = LocalBroker::default();
        let what = Shared::Memory { share: IpcShare::Pointer(crate::backend::DevicePtr(0x1000)), size: 64, device: 0, keep: None };
        let token = broker.export(Some("a"), what).unwrap();
        assert!(broker.open(Some("a"), token).is_ok());
        assert!(broker.open(Some("b"), token).is_err());
        assert!(broker.open(None, token).is_err());
        assert!(broker.open(Some("a"), [0; 16]).is_err());
        broker.revoke(token);
        assert!(broker.open(Some("a"), token).is_err());
    }

    #[test]
    fn the_channel_passes_memory_files_and_answers_as_the_workers_tenant() {
        let broker = Arc::new(LocalBroker::default());
        let (ours, theirs) = channel_pair().unwrap();
        let served = Arc::clone(&broker);
        let worker = std::thread::spawn(move || serve_channel(ours, &*served, Some("tenant-a")));
        let child = ChildBroker::new(theirs);
        let file = Arc::new(crate::backend::host::test_memory_file(4096));
        let token =
            child.export(Some("forged"), Shared::Memory { share: IpcShare::Fd { fd: file, len: 4096 }, size: 4000, device: 1, keep: None }).unwrap();
        // Registered under the worker's idea of the tenant, not the one the child claimed.
        assert!(broker.open(Some("tenant-a"), token).is_ok());
        assert!(broker.open(Some("forged"), token).is_err());
        match child.open(None, token).unwrap() {
            Shared::Memory { share: IpcShare::Fd { len, .. }, size, device, .. } => assert_eq!((len, size, device), (4096, 4000, 1)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(child.open(None, [1; 16]), Err(Failure::Status(Status::INVALID_DEVICE_POINTER, _))));
        child.revoke(token);
        assert!(broker.open(Some("tenant-a"), token).is_err());
        drop(child);
        worker.join().unwrap();
    }

    /// A session process's channel served for `tenant` from `broker` on a thread of its own.
    fn session_process(broker: &Arc<LocalBroker>, tenant: &'static str) -> (ChildBroker, std::thread::JoinHandle<()>) {
        let (ours, theirs) = channel_pair().unwrap();
        let served = Arc::clone(broker);
        (ChildBroker::new(theirs), std::thread::spawn(move || serve_channel(ours, &*served, Some(tenant))))
    }

    fn status_of<T: std::fmt::Debug>(result: Result<T, Failure>) -> Status {
        match result {
            Err(Failure::Status(status, _)) => status,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn driver_handles_cross_the_channel_as_bytes_for_the_exporters_tenant_only() {
        let broker = Arc::new(LocalBroker::default());
        let (exporter, exporter_served) = session_process(&broker, "t");
        let (importer, _importer_served) = session_process(&broker, "t");
        let (stranger, _stranger_served) = session_process(&broker, "u");
        assert_eq!((exporter.reach(), broker.reach()), (IpcReach::OtherProcesses, IpcReach::ThisProcess));
        let memory_bytes = DriverIpcHandle(std::array::from_fn(|i| i as u8));
        let memory =
            exporter.export(Some("claimed"), Shared::Memory { share: IpcShare::Driver(memory_bytes), size: 6000, device: 1, keep: None }).unwrap();
        let page = Arc::new(crate::backend::host::test_memory_file(4096));
        let event = exporter.export(None, Shared::Event { share: IpcEventShare::Fd(page), device: 1, keep: None }).unwrap();
        assert_ne!(memory, event);
        // The worker registered them as its tenant of the exporter, whatever it claimed.
        assert!(matches!(broker.open(Some("t"), memory), Ok(Shared::Memory { share: IpcShare::Driver(h), size: 6000, .. }) if h == memory_bytes));
        assert!(broker.open(Some("claimed"), memory).is_err());
        // The importer gets the very bytes the exporter's driver wrote.
        match importer.open(None, memory).unwrap() {
            Shared::Memory { share: IpcShare::Driver(h), size, device, .. } => assert_eq!((h, size, device), (memory_bytes, 6000, 1)),
            other => panic!("{other:?}"),
        }
        match importer.open(None, event).unwrap() {
            Shared::Event { share: IpcEventShare::Fd(_), device, .. } => assert_eq!(device, 1),
            other => panic!("{other:?}"),
        }
        // Another tenant's process, a made-up token: nothing, as for an unknown handle.
        assert_eq!(status_of(stranger.open(None, memory)), Status::INVALID_DEVICE_POINTER);
        assert_eq!(status_of(stranger.open(None, event)), Status::INVALID_DEVICE_POINTER);
        let mut forged = memory;
        forged[0] ^= 1;
        assert_eq!(status_of(importer.open(None, forged)), Status::INVALID_DEVICE_POINTER);
        // Only the exporter's process can end its export.
        importer.revoke(memory);
        assert!(importer.open(None, memory).is_ok());
        // The exporter process ends: its exports go with it, and a later open is refused
        // (not left waiting).
        drop(exporter);
        exporter_served.join().unwrap();
        assert_eq!(status_of(importer.open(None, memory)), Status::INVALID_DEVICE_POINTER);
        assert_eq!(status_of(importer.open(None, event)), Status::INVALID_DEVICE_POINTER);
    }

    #[test]
    fn a_session_process_holds_a_bounded_number_of_exports_and_bad_requests_leave_it_served() {
        let broker = Arc::new(LocalBroker::default());
        let (ours, theirs) = channel_pair().unwrap();
        let served = Arc::clone(&broker);
        let worker = std::thread::spawn(move || serve_channel(ours, &*served, Some("t")));
        // Requests a compromised process might send: an export of a memory file without the
        // file, an unknown operation; each refused, the channel still answers.
        for op in [op::EXPORT_MEMORY, op::EXPORT_EVENT, 99] {
            send(&theirs, &Record { op, ..Record::default() }, None).unwrap();
            let (reply, fd) = recv(&theirs).unwrap().unwrap();
            assert_eq!((reply.status, fd.is_none()), (Status::INVALID_VALUE.0, true), "op {op}");
        }
        let child = ChildBroker::new(theirs);
        let what = || Shared::Memory { share: IpcShare::Driver(DriverIpcHandle([3; DRIVER_IPC_HANDLE_BYTES])), size: 64, device: 0, keep: None };
        let tokens: Vec<Token> = (0..MAX_IPC_EXPORTS_PER_PROCESS).map(|_| child.export(None, what()).unwrap()).collect();
        assert_eq!(status_of(child.export(None, what())), Status::OUT_OF_MEMORY);
        child.revoke(tokens[0]);
        assert!(child.export(None, what()).is_ok(), "a revoked export makes room");
        drop(child);
        worker.join().unwrap();
        assert!(tokens.iter().all(|t| broker.open(Some("t"), *t).is_err()), "the process's end revoked all it exported");
    }
}
