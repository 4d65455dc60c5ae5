//! Ipc family: memory and events shared between sessions of one worker (`hipIpc*`).
//!
//! Exports go into the worker's registry ([`crate::ipc`]) under a random token, for the
//! session's tenant; opening one maps the memory (or event) into this session, where it is
//! an entry of the session's own tables like any other, so every later use is checked as
//! usual. Where a backend shares the exporter's own pointer or event (GPU backends), the
//! exporter's `hipFree`/`hipEventDestroy` only drops its hold: the memory or event goes when
//! the last importer closes it, never while another session can still reach it.
//!
//! Sessions in processes of their own (`--isolation process`) share through their drivers:
//! the backend exports for [`IpcReach::OtherProcesses`](crate::backend::IpcReach) (a driver IPC
//! handle, or a memory or physical-memory file), the registry carries it to the importing
//! process, whose backend opens it; closing unmaps it there, and the process's end closes
//! whatever it still had open.

use super::tables::AllocInfo;
use super::{CallCx, Failure, Session};
use crate::backend::{Backend, DevicePtr, EventHandle, IpcEventShare, IpcShare};
use crate::ipc::{Shared, Token};
use proto_core::opcode::IpcHandler;
use proto_core::{wire, Status};
use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

/// Most allocations one session may have open from other sessions at once (each is a driver
/// mapping or a memory file's descriptor and mapping).
pub const MAX_IPC_IMPORTS_PER_SESSION: usize = 1024;

/// Frees the exporter's memory when the last holder (exporter, registry, importers) lets go.
struct DeferredFree {
    backend: Arc<dyn Backend>,
    ptr: DevicePtr,
}

impl Drop for DeferredFree {
    fn drop(&mut self) {
        if let Err(e) = self.backend.free(self.ptr) {
            tracing::warn!(ptr = %self.ptr, %e, "freeing shared memory after its last IPC holder failed");
        }
    }
}

/// Destroys the exporter's event when the last holder lets go.
struct DeferredEventDestroy {
    backend: Arc<dyn Backend>,
    event: EventHandle,
}

impl Drop for DeferredEventDestroy {
    fn drop(&mut self) {
        if let Err(e) = self.backend.event_destroy(self.event) {
            tracing::warn!(%e, "destroying a shared event after its last IPC holder failed");
        }
    }
}

type Keep = Option<Arc<dyn Any + Send + Sync>>;

/// One export of this session.
struct Export {
    token: Token,
    /// The session's own hold on memory or an event other sessions may share (GPU backends).
    keep: Keep,
}

/// One opened allocation of another session.
struct Import {
    /// The export it opened.
    token: Token,
    /// The backend mapped it (memory files, driver handles): unmapped on close.
    mapped: bool,
    _keep: Keep,
}

/// What the session shares and has opened.
#[derive(Default)]
pub(super) struct IpcState {
    /// Exported allocations, by base address.
    exports: HashMap<u64, Export>,
    /// Opened allocations, by base address.
    imports: HashMap<u64, Import>,
    /// Exported events, by session handle.
    event_exports: HashMap<u64, Export>,
    /// Opened events, by session handle: `Some` holds another session's event (not to be
    /// destroyed by this one).
    imported_events: HashMap<u64, Keep>,
    /// Events created with `hipEventInterprocess` (the only ones that can be exported).
    interprocess_events: std::collections::HashSet<u64>,
}

impl std::fmt::Debug for IpcState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpcState")
            .field("exports", &self.exports.len())
            .field("imports", &self.imports.len())
            .field("event_exports", &self.event_exports.len())
            .field("imported_events", &self.imported_events.len())
            .finish()
    }
}

fn token_of(token0: u64, token1: u64) -> Token {
    let mut token = Token::default();
    token[..8].copy_from_slice(&token0.to_le_bytes());
    token[8..].copy_from_slice(&token1.to_le_bytes());
    token
}

fn token_words(token: &Token) -> (u64, u64) {
    let word = |half: &[u8]| u64::from_le_bytes(half.try_into().expect("8 bytes"));
    (word(&token[..8]), word(&token[8..]))
}

impl Session {
    fn tenant(&self) -> Option<&str> {
        self.client().1
    }

    /// `hipFree`/`hipFreeAsync` of `ptr`: ends its export. True when the memory is shared as
    /// the exporter's own pointer: then dropping the session's hold frees it, once no
    /// importer holds it, and the caller must not free it itself.
    pub(super) fn ipc_on_free(&mut self, ptr: u64) -> bool {
        let Some(export) = self.ipc.exports.remove(&ptr) else { return false };
        self.config.ipc.revoke(export.token);
        export.keep.is_some()
    }

    /// Notes a new event of the session; those created with `hipEventInterprocess` may be
    /// exported.
    pub(super) fn ipc_on_event_create(&mut self, event: u64, flags: u32) {
        if flags & crate::backend::event_flags::INTERPROCESS != 0 {
            self.ipc.interprocess_events.insert(event);
        }
    }

    /// `hipEventDestroy` of a session handle: ends its export or lets go of an opened event.
    /// True when the backend event is not this session's to destroy.
    pub(super) fn ipc_on_event_destroy(&mut self, event: u64) -> bool {
        self.ipc.interprocess_events.remove(&event);
        if let Some(export) = self.ipc.event_exports.remove(&event) {
            self.config.ipc.revoke(export.token);
            return export.keep.is_some();
        }
        self.ipc.imported_events.remove(&event).is_some_and(|keep| keep.is_some())
    }

    /// Whether `ptr` is the base of an allocation the session exported.
    pub(super) fn is_ipc_export(&self, ptr: u64) -> bool {
        self.ipc.exports.contains_key(&ptr)
    }

    /// Whether `token` is one of this session's own exports (memory or events): opening it
    /// here is refused as ROCm refuses a process's own handle (`hipErrorInvalidContext`),
    /// before any driver sees it.
    fn is_own_export(&self, token: &Token) -> bool {
        self.ipc.exports.values().chain(self.ipc.event_exports.values()).any(|export| export.token == *token)
    }

    /// Whether `ptr` is the base of memory opened from another session.
    pub(super) fn is_ipc_import(&self, ptr: u64) -> bool {
        self.ipc.imports.contains_key(&ptr)
    }

    /// Closes what the session opened and ends what it exported on `device` (every device:
    /// `None`), before its tables are released: opened memory is unmapped, not freed, and
    /// shared memory and events go with their last holder.
    pub(super) fn ipc_release(&mut self, device: Option<u32>) {
        let on_device = |d: u32| device.is_none_or(|want| want == d);
        let bases: Vec<u64> = self.ipc.imports.keys().copied().filter(|b| self.allocations.get(*b).is_some_and(|a| on_device(a.device))).collect();
        for base in bases {
            if let Err(e) = self.close_import(base) {
                tracing::warn!(session = self.id, base, ?e, "closing IPC memory during cleanup failed");
            }
        }
        let exported: Vec<u64> = self.ipc.exports.keys().copied().filter(|b| self.allocations.get(*b).is_some_and(|a| on_device(a.device))).collect();
        for base in exported {
            if self.ipc_on_free(base) {
                // Freed with its last holder, not by the release that follows.
                self.allocations.remove(base);
                self.forget_allocation(base);
            }
        }
        let shared_events: Vec<u64> = self
            .ipc
            .event_exports
            .keys()
            .chain(self.ipc.imported_events.keys())
            .copied()
            .filter(|h| self.events.get(*h).is_ok_and(|(_, d)| on_device(*d)))
            .collect();
        for event in shared_events {
            if self.ipc_on_event_destroy(event) {
                // Another session's, or destroyed with its last holder: not by the release.
                let _ = self.events.remove(event);
            }
        }
    }

    fn close_import(&mut self, base: u64) -> Result<(), Failure> {
        let import = self
            .ipc
            .imports
            .remove(&base)
            .ok_or_else(|| Failure::new(Status::INVALID_VALUE, format!("{base:#x} is not memory opened with hipIpcOpenMemHandle")))?;
        self.allocations.remove(base);
        self.forget_allocation(base);
        if import.mapped {
            self.backend.ipc_close_memory(DevicePtr(base))?;
        }
        Ok(())
    }
}

impl IpcHandler for Session {
    fn ipc_get_mem_handle(&mut self, _cx: &mut CallCx, req: wire::IpcGetMemHandle) -> Result<wire::IpcMemExported, Failure> {
        let not_exportable = |why: &str| Failure::new(Status::INVALID_VALUE, format!("hipIpcGetMemHandle({:#x}): {why}", req.ptr));
        let (base, info) =
            self.allocations.resolve(req.ptr, 1, "hipIpcGetMemHandle").map_err(|_| not_exportable("not in an allocation of this session"))?;
        if info.module.is_some() || self.is_ipc_import(base) {
            return Err(not_exportable("only the session's own allocations can be exported"));
        }
        // A client-placed allocation is shared as its whole unit (docs/ALLOCATION.md).
        let client_unit = self.client_unit(base);
        let (share_base, share_size) = client_unit.unwrap_or((base, info.size));
        let token = match self.ipc.exports.get(&base) {
            Some(export) => export.token,
            None => {
                let share = self.backend.ipc_export_memory(DevicePtr(share_base), share_size, self.config.ipc.reach())?;
                let keep: Keep = match share {
                    _ if client_unit.is_some() => self.client_export(base),
                    IpcShare::Pointer(ptr) => Some(Arc::new(DeferredFree { backend: Arc::clone(&self.backend), ptr })),
                    // Another process's driver maps it: what its mapping holds after the
                    // exporter's free is the driver's business (docs/ISOLATION.md, "IPC").
                    IpcShare::Driver(_) => None,
                    IpcShare::Fd { .. } => {
                        // The pages under the address changed: a transport that registered
                        // them (RDMA) registers the new ones.
                        self.forget_allocation(base);
                        self.remember_allocation(base, info.size);
                        None
                    }
                };
                let what = Shared::Memory { share, size: share_size, device: info.device, keep: keep.clone() };
                let token = self.config.ipc.export(self.tenant(), what)?;
                self.ipc.exports.insert(base, Export { token, keep });
                token
            }
        };
        let (token0, token1) = token_words(&token);
        Ok(wire::IpcMemExported { token0, token1, size: share_size, offset: req.ptr - share_base, device: self.client_device(info.device) })
    }

    fn ipc_open_mem_handle(&mut self, _cx: &mut CallCx, req: wire::IpcOpenMemHandle) -> Result<wire::IpcMemOpened, Failure> {
        self.device(req.device)?;
        if self.allocations.len() >= super::MAX_ALLOCATIONS_PER_SESSION {
            return Err(Failure::new(Status::OUT_OF_MEMORY, "the session holds its most allocations"));
        }
        if self.ipc.imports.len() >= MAX_IPC_IMPORTS_PER_SESSION {
            return Err(Failure::new(
                Status::OUT_OF_MEMORY,
                format!("the session has its most IPC memory open ({MAX_IPC_IMPORTS_PER_SESSION}): close some with hipIpcCloseMemHandle"),
            ));
        }
        let token = token_of(req.token0, req.token1);
        if self.is_own_export(&token) {
            return Err(Failure::new(Status::INVALID_CONTEXT, "the handle is this process's own: use the exported pointer"));
        }
        let Shared::Memory { share, size, device, keep } = self.config.ipc.open(self.tenant(), token)? else {
            return Err(Failure::new(Status::INVALID_DEVICE_POINTER, "the handle names an event, not memory"));
        };
        if req.offset >= size {
            return Err(Failure::new(Status::INVALID_VALUE, format!("offset {} lies outside the {size}-byte allocation", req.offset)));
        }
        if matches!(share, IpcShare::Driver(_)) && self.ipc.imports.values().any(|import| import.token == token) {
            // A driver maps a handle once per process (a second open would share, or refuse,
            // the first one's mapping).
            return Err(Failure::new(
                Status::INVALID_CONTEXT,
                "this memory is open in this session already: use the pointer hipIpcOpenMemHandle answered",
            ));
        }
        let (base, mapped) = match &share {
            IpcShare::Fd { .. } | IpcShare::Driver(_) => (self.backend.ipc_import_memory(&share, size, device)?.0, true),
            IpcShare::Pointer(ptr) => (ptr.0, false),
        };
        if self.allocations.get(base).is_some() {
            // The exporter itself (a GPU backend's shared pointer) or a second open.
            if mapped && !self.ipc.imports.contains_key(&base) {
                let _ = self.backend.ipc_close_memory(DevicePtr(base));
            }
            return Err(Failure::new(Status::INVALID_CONTEXT, "this session already has this memory"));
        }
        self.allocations.insert(base, AllocInfo { size, device, module: None });
        self.remember_allocation(base, size);
        self.ipc.imports.insert(base, Import { token, mapped, _keep: keep });
        Ok(wire::IpcMemOpened { base, size, device: self.client_device(device) })
    }

    fn ipc_close_mem_handle(&mut self, _cx: &mut CallCx, req: wire::IpcMemRef) -> Result<wire::Empty, Failure> {
        if !self.is_ipc_import(req.base) {
            return Err(Failure::new(Status::INVALID_VALUE, format!("{:#x} is not memory opened with hipIpcOpenMemHandle", req.base)));
        }
        // As ROCm: work the session queued that may use it finishes first.
        let _ = self.synchronize_session(None);
        self.close_import(req.base)?;
        Ok(wire::Empty {})
    }

    fn ipc_get_event_handle(&mut self, _cx: &mut CallCx, req: wire::EventRef) -> Result<wire::IpcEventExported, Failure> {
        let (handle, device) =
            *self.events.get(req.event).map_err(|_| Failure::new(Status::INVALID_VALUE, "hipIpcGetEventHandle: not an event of this session"))?;
        if !self.ipc.interprocess_events.contains(&req.event) {
            // ROCm's answer for an event created without hipEventInterprocess.
            return Err(Failure::new(Status::INVALID_CONFIGURATION, "hipIpcGetEventHandle: the event was not created with hipEventInterprocess"));
        }
        let token = match self.ipc.event_exports.get(&req.event) {
            Some(export) => export.token,
            None => {
                let share = self.backend.ipc_export_event(handle, self.config.ipc.reach())?;
                let keep: Keep = match share {
                    IpcEventShare::Handle(event) => Some(Arc::new(DeferredEventDestroy { backend: Arc::clone(&self.backend), event })),
                    IpcEventShare::Fd(_) => None,
                };
                let token = self.config.ipc.export(self.tenant(), Shared::Event { share, device, keep: keep.clone() })?;
                self.ipc.event_exports.insert(req.event, Export { token, keep });
                token
            }
        };
        let (token0, token1) = token_words(&token);
        Ok(wire::IpcEventExported { token0, token1 })
    }

    fn ipc_open_event_handle(&mut self, _cx: &mut CallCx, req: wire::IpcOpenEventHandle) -> Result<wire::EventCreated, Failure> {
        self.events.check_capacity()?;
        let refused = |f: Failure| match f {
            Failure::Status(Status::INVALID_DEVICE_POINTER, m) => Failure::Status(Status::INVALID_VALUE, m),
            other => other,
        };
        let token = token_of(req.token0, req.token1);
        if self.is_own_export(&token) {
            return Err(Failure::new(Status::INVALID_CONTEXT, "the handle is this process's own event: use the event itself"));
        }
        let Shared::Event { share, device, keep } = self.config.ipc.open(self.tenant(), token).map_err(refused)? else {
            return Err(Failure::new(Status::INVALID_VALUE, "the handle names memory, not an event"));
        };
        let handle = self.backend.ipc_import_event(&share, device)?;
        if self.events.values().any(|(h, _)| *h == handle) {
            return Err(Failure::new(Status::INVALID_CONTEXT, "this session already has this event"));
        }
        let event = self.events.insert((handle, device));
        self.ipc.imported_events.insert(event, keep);
        self.ipc.interprocess_events.insert(event);
        Ok(wire::EventCreated { event })
    }
}

#[cfg(test)]
mod tests {
    use super::super::SessionConfig;
    use super::*;
    use crate::backend::{HostBackend, HostConfig, MemoryBackend};
    use proto_core::opcode::{EventHandler, MemoryHandler, StreamHandler};

    /// Two sessions of one worker process (no session processes): the in-process registry.
    fn two_sessions(tenants: [Option<&str>; 2]) -> (Session, Session, CallCx, Arc<HostBackend>) {
        let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 << 20, ..HostConfig::default() }));
        let config = Arc::new(SessionConfig::default());
        let mut sessions = tenants.map(|tenant| {
            let mut s = Session::new(backend.clone(), Arc::clone(&config));
            s.adopt_handshake(1, "test".into(), tenant.map(str::to_owned));
            s
        });
        let b = sessions[1].take();
        (std::mem::replace(&mut sessions[0], Session::new(backend.clone(), config)), b, CallCx::new(1, proto_core::Opcode::Ping, false, 0), backend)
    }

    impl Session {
        fn take(&mut self) -> Session {
            let config = Arc::clone(&self.config);
            std::mem::replace(self, Session::new(Arc::clone(&self.backend), config))
        }
    }

    fn status<T: std::fmt::Debug>(result: Result<T, Failure>) -> Status {
        match result {
            Err(Failure::Status(status, _)) => status,
            other => panic!("expected an error status, got {other:?}"),
        }
    }

    fn read(backend: &HostBackend, ptr: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0; len];
        backend.memcpy_dtoh_sync(None, DevicePtr(ptr), &mut out).unwrap();
        out
    }

    #[test]
    fn memory_is_shared_between_sessions_and_outlives_the_exporters_free() {
        let (mut a, mut b, mut io, backend) = two_sessions([Some("t"), Some("t")]);
        let ptr = a.malloc(&mut io, wire::Malloc { device: 0, size: 10_000, flags: 0 }).unwrap().ptr;
        backend.memcpy_htod_sync(None, DevicePtr(ptr + 100), &[7u8; 64]).unwrap();
        let exported = a.ipc_get_mem_handle(&mut io, wire::IpcGetMemHandle { ptr: ptr + 100 }).unwrap();
        assert_eq!((exported.size, exported.offset), (10_000, 100));
        let again = a.ipc_get_mem_handle(&mut io, wire::IpcGetMemHandle { ptr }).unwrap();
        assert_eq!((again.token0, again.token1), (exported.token0, exported.token1), "one allocation, one token");
        let open = wire::IpcOpenMemHandle { token0: exported.token0, token1: exported.token1, offset: exported.offset, device: 0 };
        let opened = b.ipc_open_mem_handle(&mut io, open.clone()).unwrap();
        assert_ne!(opened.base, ptr, "the importer maps the memory file at an address of its own");
        assert_eq!(read(&backend, opened.base + 100, 64), vec![7u8; 64]);
        // Writes of either side are the other's.
        backend.memcpy_htod_sync(None, DevicePtr(opened.base), &[9u8; 8]).unwrap();
        assert_eq!(read(&backend, ptr, 8), vec![9u8; 8]);
        // The importer cannot free it; only close it.
        assert_eq!(status(b.free(&mut io, wire::Free { ptr: opened.base })), Status::INVALID_VALUE);
        // The exporter frees: the importer's view stays, the token opens no more.
        a.free(&mut io, wire::Free { ptr }).unwrap();
        assert_eq!(read(&backend, opened.base + 100, 64), vec![7u8; 64]);
        assert_eq!(status(b.ipc_open_mem_handle(&mut io, open.clone())), Status::INVALID_DEVICE_POINTER);
        b.ipc_close_mem_handle(&mut io, wire::IpcMemRef { base: opened.base }).unwrap();
        assert_eq!(status(b.ipc_close_mem_handle(&mut io, wire::IpcMemRef { base: opened.base })), Status::INVALID_VALUE);
        assert!(backend.memcpy_dtoh_sync(None, DevicePtr(opened.base), &mut [0u8; 1]).is_err(), "closed: unmapped");
    }

    #[test]
    fn another_tenant_and_made_up_tokens_open_nothing() {
        let (mut a, mut b, mut io, _backend) = two_sessions([Some("t"), Some("u")]);
        let ptr = a.malloc(&mut io, wire::Malloc { device: 0, size: 4096, flags: 0 }).unwrap().ptr;
        let exported = a.ipc_get_mem_handle(&mut io, wire::IpcGetMemHandle { ptr }).unwrap();
        let open = wire::IpcOpenMemHandle { token0: exported.token0, token1: exported.token1, offset: 0, device: 0 };
        assert_eq!(status(b.ipc_open_mem_handle(&mut io, open.clone())), Status::INVALID_DEVICE_POINTER);
        let made_up = wire::IpcOpenMemHandle { token0: exported.token0 ^ 1, ..open.clone() };
        assert_eq!(status(a.ipc_open_mem_handle(&mut io, made_up)), Status::INVALID_DEVICE_POINTER);
        assert_eq!(status(a.ipc_get_mem_handle(&mut io, wire::IpcGetMemHandle { ptr: 0x10 })), Status::INVALID_VALUE);
        // The exporter's session ends: its export goes with it.
        let (config, backend) = (Arc::clone(&a.config), Arc::clone(&a.backend));
        let mut c = Session::new(backend, config);
        c.adopt_handshake(3, "test".into(), Some("t".into()));
        assert!(c.ipc_open_mem_handle(&mut io, open.clone()).is_ok(), "same tenant, live export");
        drop(a);
        assert_eq!(status(c.ipc_open_mem_handle(&mut io, open.clone())), Status::INVALID_DEVICE_POINTER);
    }

    #[test]
    fn interprocess_events_are_recorded_and_waited_on_by_either_session() {
        use crate::backend::event_flags::{DISABLE_TIMING, INTERPROCESS};
        let (mut a, mut b, mut io, _backend) = two_sessions([None, None]);
        let plain = a.event_create(&mut io, wire::EventCreate { device: 0, flags: DISABLE_TIMING }).unwrap().event;
        assert_eq!(status(a.ipc_get_event_handle(&mut io, wire::EventRef { event: plain })), Status::INVALID_CONFIGURATION);
        let event = a.event_create(&mut io, wire::EventCreate { device: 0, flags: INTERPROCESS | DISABLE_TIMING }).unwrap().event;
        let exported = a.ipc_get_event_handle(&mut io, wire::EventRef { event }).unwrap();
        let opened = b.ipc_open_event_handle(&mut io, wire::IpcOpenEventHandle { token0: exported.token0, token1: exported.token1 }).unwrap().event;
        assert!(b.event_query(&mut io, wire::EventRef { event: opened }).unwrap().complete, "never recorded: complete");
        // A stream of b's blocked behind a host function keeps b's record pending, which a sees.
        let (stream, go) = blocked_stream(&mut b, &mut io);
        b.event_record(&mut io, wire::EventRecord { event: opened, stream }).unwrap();
        assert!(!a.event_query(&mut io, wire::EventRef { event }).unwrap().complete);
        go.send(()).unwrap();
        a.event_synchronize(&mut io, wire::EventRef { event }).unwrap();
        assert!(a.event_query(&mut io, wire::EventRef { event }).unwrap().complete);
        // Destroying the opened event leaves the exporter's.
        b.event_destroy(&mut io, wire::EventRef { event: opened }).unwrap();
        a.event_record(&mut io, wire::EventRecord { event, stream: 0 }).unwrap();
        // The null stream queues the record behind whatever it holds (as HIP's does): wait
        // for it, then it reads complete.
        a.event_synchronize(&mut io, wire::EventRef { event }).unwrap();
        assert!(a.event_query(&mut io, wire::EventRef { event }).unwrap().complete);
        assert_eq!(status(b.ipc_open_event_handle(&mut io, wire::IpcOpenEventHandle { token0: 1, token1: 2 })), Status::INVALID_VALUE);
    }

    /// A session process: a backend of its own and a channel to the worker's registry,
    /// served as `tenant` on a thread (the worker's side).
    fn session_process(broker: &Arc<crate::ipc::LocalBroker>, tenant: &'static str) -> (Session, Arc<HostBackend>, std::thread::JoinHandle<()>) {
        let backend = Arc::new(HostBackend::new(HostConfig { devices: 1, memory_per_device: 64 << 20, ..HostConfig::default() }));
        let (ours, theirs) = crate::ipc::channel_pair().unwrap();
        let served = Arc::clone(broker);
        let worker = std::thread::spawn(move || crate::ipc::serve_channel(ours, &*served, Some(tenant)));
        let config = SessionConfig { ipc: Arc::new(crate::ipc::ChildBroker::new(theirs)), ..SessionConfig::default() };
        let mut session = Session::new(backend.clone(), Arc::new(config));
        session.adopt_handshake(1, "test".into(), Some(tenant.into()));
        (session, backend, worker)
    }

    /// A new stream of `session` held behind a host function until the sender sends.
    fn blocked_stream(session: &mut Session, io: &mut CallCx) -> (u64, std::sync::mpsc::Sender<()>) {
        let stream = session.stream_create(io, wire::StreamCreate { device: 0, flags: 0, priority: 0 }).unwrap().stream;
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let handle = session.streams.get(stream).unwrap().0;
        session
            .backend
            .launch_host_func(
                handle,
                Box::new(move || {
                    let _ = wait.recv();
                }),
            )
            .unwrap();
        (stream, go)
    }

    /// What the registry holds for a token.
    fn registered(broker: &crate::ipc::LocalBroker, tenant: &str, token0: u64, token1: u64) -> Shared {
        use crate::ipc::IpcBroker;
        broker.open(Some(tenant), token_of(token0, token1)).unwrap()
    }

    #[test]
    fn session_processes_share_memory_and_events_through_driver_handles() {
        use crate::backend::event_flags::{DISABLE_TIMING, INTERPROCESS};
        use crate::backend::host::stand_in_driver;
        // As a GPU session process: the backend exports driver handles for other processes.
        let _driver = stand_in_driver::activate();
        let broker = Arc::new(crate::ipc::LocalBroker::default());
        let (mut a, a_backend, a_served) = session_process(&broker, "t");
        let (mut b, b_backend, _b_served) = session_process(&broker, "t");
        let (mut stranger, _, _stranger_served) = session_process(&broker, "u");
        let mut io = CallCx::new(1, proto_core::Opcode::Ping, false, 0);

        let ptr = a.malloc(&mut io, wire::Malloc { device: 0, size: 10_000, flags: 0 }).unwrap().ptr;
        a_backend.memcpy_htod_sync(None, DevicePtr(ptr + 100), &[7u8; 64]).unwrap();
        let exported = a.ipc_get_mem_handle(&mut io, wire::IpcGetMemHandle { ptr: ptr + 100 }).unwrap();
        assert_eq!((exported.size, exported.offset), (10_000, 100), "the handle names the base allocation; the offset rides along");
        assert!(matches!(registered(&broker, "t", exported.token0, exported.token1), Shared::Memory { share: IpcShare::Driver(_), .. }));
        let open = wire::IpcOpenMemHandle { token0: exported.token0, token1: exported.token1, offset: exported.offset, device: 0 };
        // Its own handle: refused before any driver sees it, as ROCm refuses a process's own.
        assert_eq!(status(a.ipc_open_mem_handle(&mut io, open.clone())), Status::INVALID_CONTEXT);

        let opened = b.ipc_open_mem_handle(&mut io, open.clone()).unwrap();
        assert_eq!((opened.size, opened.device), (10_000, 0));
        assert_eq!(read(&b_backend, opened.base + 100, 64), vec![7u8; 64]);
        b_backend.memcpy_htod_sync(None, DevicePtr(opened.base), &[9u8; 8]).unwrap();
        assert_eq!(read(&a_backend, ptr, 8), vec![9u8; 8], "the importer's writes are the exporter's");
        // A driver maps a handle once per process: a second open is refused, the first stays.
        assert_eq!(status(b.ipc_open_mem_handle(&mut io, open.clone())), Status::INVALID_CONTEXT);
        assert_eq!(read(&b_backend, opened.base + 100, 64), vec![7u8; 64]);
        assert_eq!(status(b.free(&mut io, wire::Free { ptr: opened.base })), Status::INVALID_VALUE);
        // Another tenant's process opens nothing; a made-up token neither; and neither
        // reaches a driver (nor does a process's own handle, refused above).
        let driver_opens = stand_in_driver::opens();
        assert_eq!(status(stranger.ipc_open_mem_handle(&mut io, open.clone())), Status::INVALID_DEVICE_POINTER);
        let made_up = wire::IpcOpenMemHandle { token1: exported.token1 ^ 1 << 63, ..open.clone() };
        assert_eq!(status(b.ipc_open_mem_handle(&mut io, made_up)), Status::INVALID_DEVICE_POINTER);
        assert_eq!(status(a.ipc_open_mem_handle(&mut io, open.clone())), Status::INVALID_CONTEXT);
        assert_eq!(stand_in_driver::opens(), driver_opens, "refused before any driver");

        // Events: the wrong flags keep ROCm's error; the right ones travel as driver handles.
        let plain = a.event_create(&mut io, wire::EventCreate { device: 0, flags: DISABLE_TIMING }).unwrap().event;
        assert_eq!(status(a.ipc_get_event_handle(&mut io, wire::EventRef { event: plain })), Status::INVALID_CONFIGURATION);
        let event = a.event_create(&mut io, wire::EventCreate { device: 0, flags: INTERPROCESS | DISABLE_TIMING }).unwrap().event;
        let exported_event = a.ipc_get_event_handle(&mut io, wire::EventRef { event }).unwrap();
        assert!(matches!(registered(&broker, "t", exported_event.token0, exported_event.token1), Shared::Event { share: IpcEventShare::Fd(_), .. }));
        let open_event = wire::IpcOpenEventHandle { token0: exported_event.token0, token1: exported_event.token1 };
        assert_eq!(status(a.ipc_open_event_handle(&mut io, open_event.clone())), Status::INVALID_CONTEXT);
        assert_eq!(status(stranger.ipc_open_event_handle(&mut io, open_event.clone())), Status::INVALID_VALUE);
        let opened_event = b.ipc_open_event_handle(&mut io, open_event.clone()).unwrap().event;
        // b records behind a blocked stream of its own: a sees the record pending, then done.
        let (stream, go) = blocked_stream(&mut b, &mut io);
        b.event_record(&mut io, wire::EventRecord { event: opened_event, stream }).unwrap();
        assert!(!a.event_query(&mut io, wire::EventRef { event }).unwrap().complete);
        go.send(()).unwrap();
        a.event_synchronize(&mut io, wire::EventRef { event }).unwrap();
        b.event_destroy(&mut io, wire::EventRef { event: opened_event }).unwrap();
        assert!(a.event_query(&mut io, wire::EventRef { event }).unwrap().complete, "the exporter's event outlives the opened one");

        // Closed, it can be opened again; then the exporter's process ends: later opens are
        // refused with HIP's errors, and what b had open stays readable until b closes it.
        b.ipc_close_mem_handle(&mut io, wire::IpcMemRef { base: opened.base }).unwrap();
        let reopened = b.ipc_open_mem_handle(&mut io, open.clone()).unwrap();
        drop(a);
        a_served.join().unwrap();
        assert_eq!(read(&b_backend, reopened.base + 100, 64), vec![7u8; 64]);
        b.ipc_close_mem_handle(&mut io, wire::IpcMemRef { base: reopened.base }).unwrap();
        assert_eq!(status(b.ipc_open_mem_handle(&mut io, open)), Status::INVALID_DEVICE_POINTER);
        assert_eq!(status(b.ipc_open_event_handle(&mut io, open_event)), Status::INVALID_VALUE);
    }

    #[test]
    fn a_session_has_a_bounded_number_of_imports_open() {
        let (mut a, mut b, mut io, _backend) = two_sessions([None, None]);
        let ptr = a.malloc(&mut io, wire::Malloc { device: 0, size: 4096, flags: 0 }).unwrap().ptr;
        let exported = a.ipc_get_mem_handle(&mut io, wire::IpcGetMemHandle { ptr }).unwrap();
        let open = wire::IpcOpenMemHandle { token0: exported.token0, token1: exported.token1, offset: 0, device: 0 };
        // A memory file may be mapped again (a new view each time).
        let bases: Vec<u64> = (0..MAX_IPC_IMPORTS_PER_SESSION).map(|_| b.ipc_open_mem_handle(&mut io, open.clone()).unwrap().base).collect();
        assert_eq!(status(b.ipc_open_mem_handle(&mut io, open.clone())), Status::OUT_OF_MEMORY);
        b.ipc_close_mem_handle(&mut io, wire::IpcMemRef { base: bases[0] }).unwrap();
        assert!(b.ipc_open_mem_handle(&mut io, open).is_ok(), "a close makes room");
    }
}
