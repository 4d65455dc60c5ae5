//! The process-wide connection: opened lazily on first use, shared by all threads.
//!
//! A worker that cannot be reached, or an environment that is refused (a bad `HIP_REMOTE_*`
//! value), is reported once on stderr with the reason and every call then fails fast with
//! `hipErrorNotInitialized` (no hang, no abort).

use crate::abi::HipError;
use crate::config::ClientConfig;
use crate::conn::Conn;
use crate::visible::Visibility;
use client_core::published::Published;
use client_core::CallError;
use proto_core::field::List;
use proto_core::limits::MAX_CLIENT_DEVICES;
use proto_core::{wire, Calls};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use transport_core::MemoryRegistry;

/// Pinned host memory (`hipHostMalloc`) as the transport sees it. Kept outside the
/// connection's lock so `hipHostMalloc`/`hipHostFree` never wait for a copy in progress.
enum HostMemory {
    /// No connection yet: the ranges `(address → bytes)` to announce when one opens (RDMA
    /// registers each once and reuses it for every copy).
    Pending(BTreeMap<usize, usize>),
    /// The open connection's registry.
    Registry(Arc<dyn MemoryRegistry>),
    /// The transport keeps no registry, or the connection failed: nothing to announce.
    Unregistered,
}

static HOST_MEMORY: Mutex<HostMemory> = Mutex::new(HostMemory::Pending(BTreeMap::new()));

fn host_memory() -> std::sync::MutexGuard<'static, HostMemory> {
    HOST_MEMORY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Announces pinned host memory (`hipHostMalloc`) to the connection's transport (now, or when
/// the connection opens).
pub fn remember_host_memory(addr: usize, len: usize) {
    let registry = match &mut *host_memory() {
        HostMemory::Pending(ranges) => {
            ranges.insert(addr, len);
            return;
        }
        HostMemory::Registry(r) => r.clone(),
        HostMemory::Unregistered => return,
    };
    registry.remember(addr, len);
}

/// Withdraws pinned host memory from the transport before it is freed.
pub fn forget_host_memory(addr: usize) {
    let registry = match &mut *host_memory() {
        HostMemory::Pending(ranges) => {
            ranges.remove(&addr);
            return;
        }
        HostMemory::Registry(r) => r.clone(),
        HostMemory::Unregistered => return,
    };
    registry.forget(addr);
}

/// Hands the memory announced so far to the new connection's registry (if it has one).
fn open_host_memory(registry: Option<Arc<dyn MemoryRegistry>>) {
    let mut memory = host_memory();
    let pending = match std::mem::replace(&mut *memory, HostMemory::Unregistered) {
        HostMemory::Pending(ranges) => ranges,
        _ => BTreeMap::new(),
    };
    if let Some(registry) = registry {
        // Under the lock, so a concurrent forget cannot overtake the announcement.
        for (addr, len) in pending {
            registry.remember(addr, len);
        }
        *memory = HostMemory::Registry(registry);
    }
}

enum State {
    Unopened,
    Open(Box<Conn>),
    Failed(CallError),
}

/// One worker of the device list: its address and its connection.
struct Slot {
    /// The configuration with `worker` set to this worker's address.
    config: ClientConfig,
    state: Mutex<State>,
    /// The state its session publishes (device properties and flags, known device memory,
    /// running captures...), read without the connection's lock: made with the slot, handed
    /// to the session when the connection opens.
    published: Arc<Published>,
}

impl Slot {
    fn new(config: ClientConfig, state: State) -> Self {
        Self { config, state: Mutex::new(state), published: Published::new_shared() }
    }
}

/// The client's device list over several workers, as the application numbers it (after
/// the visibility variables, [`crate::visible`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceList {
    /// The worker (index in `HIP_REMOTE_WORKER`) of each client ordinal.
    pub workers: Vec<usize>,
    /// Each worker's handle namespace: the smallest client ordinal of its devices (0 for a
    /// worker whose devices are all hidden: nothing is ever routed to it).
    pub namespaces: Vec<u32>,
}

struct Remote {
    config: ClientConfig,
    /// The workers of `HIP_REMOTE_WORKER`, in the list's order (one for the single form).
    slots: Vec<Slot>,
    /// The visibility variables (`HIP_VISIBLE_DEVICES`...), read when the first connection
    /// opens (a program may set them in `main` after the library's load-time work, as
    /// hip-tests' children do).
    visibility: OnceLock<Visibility>,
    /// Each worker's devices in the list: learnt once, when the first call needs a worker of
    /// a list of several (every worker is opened then, in order; numbering never shifts).
    list: OnceLock<Result<DeviceList, CallError>>,
    /// The whole list's device count, once a call learnt it (fixed for the process).
    device_count: OnceLock<u32>,
}

static REMOTE: OnceLock<Remote> = OnceLock::new();

impl Remote {
    fn visibility(&self) -> &Visibility {
        self.visibility.get_or_init(Visibility::from_env)
    }
}

fn remote() -> &'static Remote {
    REMOTE.get_or_init(|| {
        let refused = |message: String, config: ClientConfig| {
            let error = CallError::new(HipError::NOT_INITIALIZED, message);
            eprintln!("hip-remote: {}", error.message);
            open_host_memory(None);
            Remote {
                slots: vec![Slot::new(config.clone(), State::Failed(error))],
                config,
                visibility: OnceLock::new(),
                list: OnceLock::new(),
                device_count: OnceLock::new(),
            }
        };
        let config = match ClientConfig::from_env() {
            Ok(config) => config,
            Err(e) => return refused(format!("environment refused: {e}; no HIP call will run"), ClientConfig::defaults()),
        };
        match config.resolve_workers(&crate::config::system_resolver) {
            Ok(addresses) => {
                let slots = addresses.into_iter().map(|worker| Slot::new(ClientConfig { worker, ..config.clone() }, State::Unopened)).collect();
                Remote { config, slots, visibility: OnceLock::new(), list: OnceLock::new(), device_count: OnceLock::new() }
            }
            Err(e) => refused(format!("HIP_REMOTE_WORKER: {e}; no HIP call will run"), config),
        }
    })
}

thread_local! {
    static IN_CALLBACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the calling thread as the one that runs stream callbacks ([`crate::callbacks`]):
/// HIP calls from it are refused.
pub(crate) fn mark_callback_thread() {
    IN_CALLBACK.with(|c| c.set(true));
}

/// Whether the calling thread is running a stream callback (HIP calls are refused there).
pub fn in_callback() -> bool {
    // `try_with`: a thread-exit destructor may ask after this thread's slot is gone.
    IN_CALLBACK.try_with(|c| c.get()).unwrap_or(false)
}

/// The client configuration.
pub fn config() -> &'static ClientConfig {
    &remote().config
}

thread_local! {
    /// The calling thread's current device (`hipSetDevice`): calls go to its worker.
    static THREAD_DEVICE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// A device that calls go to instead, while [`on_device`] runs (a call about another
    /// device than the current one: its properties, a stream or pointer of its own).
    static ROUTE: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
    /// The device of the first stream or event handle the running C call named
    /// ([`note_handle`]); cleared by [`CallRoute`] at each boundary.
    static HANDLE_ROUTE: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

/// Scope of one C call's routing ([`crate::boundary`]): a handle noted by the call routes
/// only that call; a nested export starts afresh and gives the outer one its route back.
pub struct CallRoute(Option<u32>);

impl CallRoute {
    pub fn begin() -> Self {
        // `try_with`: an export may run from another thread-local's destructor, outside the
        // boundary's panic catcher.
        Self(HANDLE_ROUTE.try_with(|h| h.replace(None)).ok().flatten())
    }
}

impl Drop for CallRoute {
    fn drop(&mut self) {
        let outer = self.0;
        // `try_with`: a call from a thread-exit destructor may outlive the slot.
        let _ = HANDLE_ROUTE.try_with(|h| h.set(outer));
    }
}

/// The device whose worker issued handle `id` in a device list of several workers: a
/// per-thread default stream names its device, a tagged handle its worker's device base
/// (bits 40..48, `SessionDeviceBase`; this library's module, function and link-state handles
/// carry it the same way, [`handle_namespace`]). `None` for what carries no owner (the null
/// stream, a host address).
pub fn device_of_handle(id: u64) -> Option<u32> {
    use client_core::client_handles::NAMESPACE_SHIFT;
    use wire::{CLIENT_HANDLE_TAG_MASK, PER_THREAD_STREAM_TAG, PER_THREAD_STREAM_TAG_MASK};
    if id & PER_THREAD_STREAM_TAG_MASK == PER_THREAD_STREAM_TAG {
        return Some((id & 0xff) as u32);
    }
    if id & CLIENT_HANDLE_TAG_MASK == 0 {
        return None;
    }
    Some(((id >> NAMESPACE_SHIFT) & 0xff) as u32)
}

/// Notes a handle the running C call names: the call's requests go to the handle's worker
/// (the first one noted wins; [`on_device`] still overrides). Free with a single worker.
pub fn note_handle(id: u64) {
    if worker_count() == 1 {
        return;
    }
    if let Some(device) = device_of_handle(id) {
        let _ = HANDLE_ROUTE.try_with(|h| {
            if h.get().is_none() {
                h.set(Some(device));
            }
        });
    }
}

/// Runs `f` with its calls going to the worker that issued handle `id` (a module, function
/// or other worker handle), whatever the current device; as is with a single worker or a
/// handle that names no worker.
pub fn on_handle<R>(id: u64, f: impl FnOnce() -> R) -> R {
    match device_of_handle(id).filter(|_| worker_count() > 1) {
        Some(device) => on_device(device, f),
        None => f(),
    }
}

/// The namespace (bits 40..48) of the handles this library issues for objects of worker
/// `index` of the list (modules, functions, link states): the worker's first device, as the
/// worker's own handles carry it after `SessionDeviceBase`, so [`device_of_handle`] finds the
/// session that keeps them. 0 with a single worker.
pub fn handle_namespace(index: usize) -> Result<u64, CallError> {
    if worker_count() == 1 {
        return Ok(0);
    }
    let space = device_list()?
        .namespaces
        .get(index)
        .copied()
        .ok_or_else(|| CallError::new(HipError::INVALID_DEVICE, format!("no worker {index} in the device list")))?;
    Ok(u64::from(space) << client_core::client_handles::NAMESPACE_SHIFT)
}

/// The session of the worker this thread's calls go to now, and the namespace of the
/// handles this library issues there ([`handle_namespace`]).
pub fn routed_published() -> Result<(&'static Published, u64), CallError> {
    let index = routed_worker()?;
    Ok((published(index), handle_namespace(index)?))
}

/// Whether devices `a` and `b` are served by the same worker.
pub fn same_worker(a: u32, b: u32) -> Result<bool, CallError> {
    Ok(worker_of_device(a)? == worker_of_device(b)?)
}

/// The calling thread's current device; `state::devices` keeps it here so calls reach its
/// worker.
pub fn thread_device() -> u32 {
    THREAD_DEVICE.with(|d| d.get())
}

/// Sets the calling thread's current device (already validated).
pub fn set_thread_device(device: u32) {
    THREAD_DEVICE.with(|d| d.set(device));
}

/// Runs `f` with its calls going to `device`'s worker (the device is the client's ordinal;
/// already validated or refused by the worker). Nests; the previous route comes back after.
pub fn on_device<R>(device: u32, f: impl FnOnce() -> R) -> R {
    let previous = ROUTE.with(|r| r.replace(Some(device)));
    let out = f();
    ROUTE.with(|r| r.set(previous));
    out
}

/// How many workers `HIP_REMOTE_WORKER` names (resolved).
pub fn worker_count() -> usize {
    remote().slots.len()
}

/// Every worker's devices in the device list, opening every connection the first time. A
/// worker that cannot be reached then fails the whole list (later ones would be renumbered).
pub fn device_list() -> Result<&'static DeviceList, CallError> {
    let r = remote();
    r.list.get_or_init(|| learn_device_list(r)).as_ref().map_err(Clone::clone)
}

fn learn_device_list(r: &'static Remote) -> Result<DeviceList, CallError> {
    let named = |index: usize, e: CallError| {
        CallError::new(e.code, format!("worker {index} of the device list ({}): {}", r.slots[index].config.worker, e.message))
    };
    // Every worker's devices, in the list's order, before any visibility.
    let mut bases = Vec::with_capacity(r.slots.len());
    let mut total = 0u32;
    for index in 0..r.slots.len() {
        let count = with_slot(r, index, |c| c.get_device_count(wire::Empty {}).map(|d| d.count)).map_err(|e| named(index, e))?;
        if count == 0 && r.slots.len() > 1 {
            return Err(named(index, CallError::new(HipError::NO_DEVICE, "it serves no device: leave it out of the list")));
        }
        if total.saturating_add(count) > MAX_CLIENT_DEVICES {
            return Err(named(
                index,
                CallError::new(
                    HipError::NOT_INITIALIZED,
                    format!("its {count} devices after {total} others exceed the {MAX_CLIENT_DEVICES} devices a client can number"),
                ),
            ));
        }
        bases.push((total, count));
        total += count;
    }
    let worker_of = |listed: u32| bases.iter().position(|&(base, count)| listed >= base && listed - base < count).unwrap_or(0);
    let visibility = r.visibility();
    let mut uuids = Vec::new();
    if visibility.names_uuids() {
        for (index, &(_, count)) in bases.iter().enumerate() {
            let theirs = with_slot(r, index, |c| device_uuids(c, count)).map_err(|e| named(index, e))?;
            uuids.extend(theirs);
        }
    }
    let shown = if visibility.is_set() { visibility.select(total, &uuids) } else { (0..total).collect() };
    let workers: Vec<usize> = shown.iter().map(|&listed| worker_of(listed)).collect();
    let mut namespaces = Vec::with_capacity(r.slots.len());
    for (index, &(base, _)) in bases.iter().enumerate() {
        let mine: Vec<(u32, u32)> = shown
            .iter()
            .enumerate()
            .filter(|&(_, &listed)| worker_of(listed) == index)
            .map(|(ordinal, &listed)| (ordinal as u32, listed - base))
            .collect();
        let space = if visibility.is_set() { mine.first().map_or(0, |&(ordinal, _)| ordinal) } else { base };
        namespaces.push(space);
        if r.slots.len() == 1 {
            // One worker: its session was shown its devices when it opened (`with_slot`).
            continue;
        }
        // Even at base 0: a worker too old for device lists is refused here, not later.
        with_slot(r, index, |c| {
            if visibility.is_set() {
                send_device_map(c, &mine)?;
            } else {
                c.session_device_base(wire::DeviceBase { base })?;
            }
            // Handles this library picks carry the namespace as the worker's do.
            c.client_handles().set_namespace(space as u8);
            // Its memory in windows of its own devices: never at another worker's address.
            c.use_range_windows();
            Ok(())
        })
        .map_err(|e| {
            named(
                index,
                CallError::new(
                    e.code,
                    format!("{} (a worker of a device list must know SessionDeviceBase and SessionDeviceMap: upgrade it)", e.message),
                ),
            )
        })?;
    }
    Ok(DeviceList { workers, namespaces })
}

/// Shows a worker's session only `mine`, `(client ordinal, worker device)` pairs.
fn send_device_map(c: &mut Conn, mine: &[(u32, u32)]) -> Result<(), CallError> {
    use zerocopy::byteorder::little_endian::U32;
    let ordinals: Vec<U32> = mine.iter().map(|&(ordinal, _)| U32::new(ordinal)).collect();
    let devices: Vec<U32> = mine.iter().map(|&(_, device)| U32::new(device)).collect();
    c.session_device_map(wire::DeviceMap { ordinals: List(&ordinals), devices: List(&devices) })?;
    Ok(())
}

/// The UUIDs of a worker's first `count` devices, in its own numbering (asked before its
/// session is placed in the list), for visibility entries that name devices by UUID.
fn device_uuids(c: &mut Conn, count: u32) -> Result<Vec<[u8; 16]>, CallError> {
    (0..count).map(|device| c.get_device_properties(wire::DeviceRef { device }).map(|p| p.uuid)).collect()
}

/// A single worker's session, just opened, shown the devices the visibility variables leave,
/// in their order: before any other request, so nothing ever sees the worker's numbering.
fn show_visible_devices(visibility: &Visibility, c: &mut Conn) -> Result<(), CallError> {
    let count = c.get_device_count(wire::Empty {})?.count.min(MAX_CLIENT_DEVICES);
    let uuids = if visibility.names_uuids() { device_uuids(c, count)? } else { Vec::new() };
    let shown = visibility.select(count, &uuids);
    let mine: Vec<(u32, u32)> = shown.iter().enumerate().map(|(ordinal, &device)| (ordinal as u32, device)).collect();
    send_device_map(c, &mine).map_err(|e| {
        CallError::new(e.code, format!("{}: the worker cannot apply the visibility variables (SessionDeviceMap): upgrade it", e.message))
    })
}

/// The device count learnt so far ([`keep_device_count`]).
pub fn known_device_count() -> Option<u32> {
    remote().device_count.get().copied()
}

/// Keeps the list's device count `n` for the process (the first one kept wins); answers it.
pub fn keep_device_count(n: u32) -> u32 {
    *remote().device_count.get_or_init(|| n)
}

/// The total device count: the one worker's, or the sum over the list.
pub fn device_count() -> Result<u32, CallError> {
    if worker_count() == 1 {
        return with_conn(|c| c.get_device_count(wire::Empty {}).map(|d| d.count));
    }
    Ok(device_list()?.workers.len() as u32)
}

/// The worker serving `device` (the client's ordinal), by index in the list.
pub fn worker_of_device(device: u32) -> Result<usize, CallError> {
    if worker_count() == 1 {
        return Ok(0);
    }
    let workers = &device_list()?.workers;
    workers
        .get(device as usize)
        .copied()
        .ok_or_else(|| CallError::new(HipError::INVALID_DEVICE, format!("device {device} out of range (the device list has {})", workers.len())))
}

/// The worker this thread's calls go to now: that of [`on_device`]'s device, else of the
/// current device.
pub fn routed_worker() -> Result<usize, CallError> {
    if worker_count() == 1 {
        return Ok(0);
    }
    worker_of_device(routed_device())
}

/// The device this thread's calls go to now: [`on_device`]'s, else that of the handle the
/// running call named (a worker's first device for a handle it issued), else the current
/// device. What a request names as "the device of the null stream" when a stream handle
/// routes it to another worker (the worker checks it, and uses the stream's own device).
pub fn routed_device() -> u32 {
    ROUTE.with(|r| r.get()).or_else(|| HANDLE_ROUTE.with(|h| h.get())).unwrap_or_else(thread_device)
}

/// Runs `f` with the connection, opening it first if needed. A connection that failed in
/// the middle of an exchange is closed and stays failed: its session (and every allocation)
/// is gone on the worker, so silently reconnecting would hand out dangling pointers.
///
/// With several workers (`HIP_REMOTE_WORKER=a,b`), the connection is that of the worker
/// serving the current device, or the device [`on_device`] names; one worker's failure
/// fails only the calls that go to it.
///
/// A stream callback calling HIP fails with `hipErrorIllegalState`: the thread that waits for
/// the callback may hold the connection (CUDA and HIP forbid such calls too).
pub fn with_conn<R>(f: impl FnOnce(&mut Conn) -> Result<R, CallError>) -> Result<R, CallError> {
    if in_callback() {
        return Err(CallError::new(HipError::ILLEGAL_STATE, "a stream callback must not call HIP"));
    }
    let index = routed_worker()?;
    with_slot(remote(), index, f)
}

/// [`with_conn`] with the connection of worker `index` of the list.
pub fn with_worker<R>(index: usize, f: impl FnOnce(&mut Conn) -> Result<R, CallError>) -> Result<R, CallError> {
    if in_callback() {
        return Err(CallError::new(HipError::ILLEGAL_STATE, "a stream callback must not call HIP"));
    }
    with_slot(remote(), index, f)
}

/// [`with_conn`] if the connection of the worker this call goes to is open: `None` when it
/// is not (never opens one: for state that lives only as long as a session, such as managed
/// mirrors).
pub fn with_open_conn<R>(f: impl FnOnce(&mut Conn) -> R) -> Result<Option<R>, CallError> {
    if in_callback() {
        return Err(CallError::new(HipError::ILLEGAL_STATE, "a stream callback must not call HIP"));
    }
    Ok(with_open_worker(routed_worker()?, f))
}

/// Runs `f` with the connection of worker `index` if it is open (`None` otherwise, and on the
/// callback thread).
pub fn with_open_worker<R>(index: usize, f: impl FnOnce(&mut Conn) -> R) -> Option<R> {
    if in_callback() {
        return None;
    }
    let slot = remote().slots.get(index)?;
    match &mut *slot.state.lock().unwrap_or_else(|p| p.into_inner()) {
        State::Open(conn) => Some(f(conn)),
        _ => None,
    }
}

/// The configuration of worker `index` of the list (its `worker` is that worker's address).
pub fn worker_config(index: usize) -> &'static ClientConfig {
    let r = remote();
    &r.slots.get(index).unwrap_or(&r.slots[0]).config
}

fn with_slot<R>(r: &'static Remote, index: usize, f: impl FnOnce(&mut Conn) -> Result<R, CallError>) -> Result<R, CallError> {
    let Some(slot) = r.slots.get(index) else {
        return Err(CallError::new(HipError::INVALID_DEVICE, format!("no worker {index} in the device list")));
    };
    let mut state = slot.state.lock().unwrap_or_else(|p| p.into_inner());
    if let State::Unopened = *state {
        *state = match Conn::open(&slot.config) {
            Ok(mut conn) => match (r.slots.len() == 1 && r.visibility().is_set()).then(|| show_visible_devices(r.visibility(), &mut conn)) {
                Some(Err(e)) => {
                    eprintln!("hip-remote: {}", e.message);
                    open_host_memory(None);
                    State::Failed(CallError::new(HipError::NOT_INITIALIZED, e.message))
                }
                _ => {
                    conn.publish_to(slot.published.clone());
                    // Pinned host memory is announced to the first worker's transport only (an
                    // optimisation of RDMA registration; other workers copy as without one).
                    if index == 0 {
                        open_host_memory(conn.memory_registry());
                    }
                    State::Open(Box::new(conn))
                }
            },
            Err(e) => {
                eprintln!("hip-remote: {}", e.message);
                if index == 0 {
                    open_host_memory(None);
                }
                State::Failed(e)
            }
        };
    }
    match &mut *state {
        State::Open(conn) => {
            let result = f(conn);
            if let Some(notice) = conn.ended_by_worker() {
                // Whatever this call saw after it (the connection closing), the worker's
                // reason is what every call reports from now on, as HIP does after a fault.
                let notice = notice.clone();
                eprintln!("hip-remote: the worker ended the session: {}", notice.message);
                *state = State::Failed(notice.clone());
                return Err(notice);
            }
            if let Err(e) = &result {
                if e.is_lost() {
                    eprintln!("hip-remote: {}", e.message);
                    *state = State::Failed(e.clone());
                }
            }
            result
        }
        State::Failed(e) => Err(e.clone()),
        State::Unopened => unreachable!("opened above"),
    }
}

/// Whether a stream capture begun on any worker's session may still run: calls HIP
/// forbids during capture ask the worker only then. Takes no lock (the copy and callback
/// paths ask).
pub fn captures_active() -> bool {
    remote().slots.iter().any(|s| s.published.captures().any())
}

/// What the session of worker `index` publishes (device state, known memory), read without
/// its connection's lock, opened or not (empty until it opens; worker 0's for an index past
/// the list, which only a refused environment's single slot meets).
pub fn published(index: usize) -> &'static Published {
    let r = remote();
    &r.slots.get(index).unwrap_or(&r.slots[0]).published
}

/// What the session serving `device` publishes: [`published`] of [`worker_of_device`].
pub fn published_for_device(device: u32) -> Result<&'static Published, CallError> {
    Ok(published(worker_of_device(device)?))
}

/// What the session serving `device` publishes, if the device list is known already (never
/// opens a connection: for lookups, where an unknown list means nothing was recorded).
pub fn published_if_known(device: u32) -> Option<&'static Published> {
    let r = remote();
    if r.slots.len() == 1 {
        return Some(&r.slots[0].published);
    }
    let index = *r.list.get()?.as_ref().ok()?.workers.get(device as usize)?;
    Some(&r.slots[index].published)
}

/// What the session of the worker that issued handle `id` publishes (a graph's host copies):
/// with several workers, the worker its tag names, else the worker this call goes to.
pub fn published_for_handle(id: u64) -> &'static Published {
    if worker_count() == 1 {
        return published(0);
    }
    device_of_handle(id).and_then(published_if_known).unwrap_or_else(|| published(routed_worker().unwrap_or(0)))
}

/// What every worker's session publishes, in the list's order.
pub fn every_published() -> impl Iterator<Item = &'static Published> {
    remote().slots.iter().map(|s| &*s.published)
}

/// [`every_published`], or nothing when no call has read the configuration yet (for work at
/// exit, which must not start reading the environment and resolving workers then).
pub fn every_published_if_configured() -> impl Iterator<Item = &'static Published> {
    REMOTE.get().into_iter().flat_map(|r| r.slots.iter().map(|s| &*s.published))
}

/// Whether a connection has been opened (used by calls that must not connect, e.g. at exit).
pub fn is_open() -> bool {
    remote().slots.iter().any(|s| matches!(*s.state.lock().unwrap_or_else(|p| p.into_inner()), State::Open(_)))
}
