//! The handle tables (`hipModule_t`, `hipFunction_t`: ids, never dereferenced) and the
//! lookups that fill them: functions (batched), globals, attributes.

use super::*;
use crate::config::PostedLookups;
use crate::state::families::Family;
use client_core::published::FamilyTable;
use hip_code_object::kernel_names::{KernelNames, Presence};

// ------------------------------------------------------------------------------------------------
// Tables
// ------------------------------------------------------------------------------------------------

/// A loaded function.
#[derive(Debug)]
pub struct Function {
    /// The worker's handle.
    pub worker: u64,
    /// The client module handle it belongs to.
    pub module: u64,
    /// Its (mangled) name.
    pub name: String,
    /// Its parameter layout: read when first needed for a function looked up without a
    /// round trip ([`Function::layout`]).
    layout: OnceLock<ArgLayout>,
    /// The name the worker knows it by (an alias of `name` for modules built from source).
    worker_name: String,
    /// Cached `hipFuncGetAttributes` answer; `hipFuncSetAttribute` drops it.
    attributes: Mutex<Option<wire::FuncAttributes>>,
    /// Its name as a C string once `hipKernelGetName` asked (valid while the function is
    /// in its table: until its module or library is unloaded).
    pub(super) c_name: OnceLock<std::ffi::CString>,
}

impl Function {
    /// Its parameter layout, asked of the worker (one round trip) the first time it is needed
    /// when the lookup was posted.
    pub fn layout(&self) -> Result<&ArgLayout, CallError> {
        if let Some(layout) = self.layout.get() {
            return Ok(layout);
        }
        // Every layout of the module still unknown, in one round trip: a program launches
        // most of the kernels it looked up.
        let (worker, origin) = module_worker(self.module)?;
        let pending: Vec<Arc<Function>> = {
            let t = tables_of(self.module);
            let mut pending: Vec<Arc<Function>> =
                t.functions.values().filter(|f| f.module == self.module && f.layout.get().is_none()).cloned().collect();
            pending.truncate(LOOKUP_BATCH);
            pending
        };
        let reqs = pending.iter().map(|f| wire::SymbolLookup { module: worker, name: wire_name(&f.worker_name).into() });
        let replies = crate::remote::on_handle(worker, || {
            with_conn(|c| {
                c.call_batch::<calls::ModuleGetFunction, _>(reqs, |_, f| {
                    f.params.0.iter().map(|p| (p.offset.get(), p.size.get())).collect::<Vec<_>>()
                })
            })
        })?;
        for (f, reply) in pending.iter().zip(replies) {
            if let Ok(layout) = reply.and_then(ArgLayout::new) {
                let _ = f.layout.set(layout);
            }
        }
        if let Some(layout) = self.layout.get() {
            return Ok(layout);
        }
        // Not among the batch, or refused: asked alone, for its own error.
        let req = wire::SymbolLookup { module: worker, name: wire_name(&self.worker_name).into() };
        let params = crate::remote::on_handle(worker, || {
            with_conn(|c| c.module_get_function(req).map(|f| f.params.0.iter().map(|p| (p.offset.get(), p.size.get())).collect::<Vec<_>>()))
        })
        .map_err(|e| CallError::new(e.code, format!("{origin}: kernel {}: {}", self.name, e.message)))?;
        let layout = ArgLayout::new(params)?;
        Ok(self.layout.get_or_init(|| layout))
    }

    /// Whether the layout is known without asking the worker.
    pub fn layout_known(&self) -> bool {
        self.layout.get().is_some()
    }
}

pub(super) struct ModuleEntry {
    pub(super) worker: u64,
    pub(super) origin: String,
    /// The device it was loaded onto (the thread's current device then).
    pub(super) device: u32,
    pub(super) functions: HashMap<String, u64>,
    pub(super) globals: HashMap<String, (u64, u64)>,
    /// The worker's name of a kernel or variable registered under another name (a module
    /// compiled from device source names its symbols as the worker's compiler did).
    pub(super) aliases: HashMap<String, String>,
    /// Loaded as a `hipLibrary_t` (`hipLibraryLoad*`): its handle is also a library's.
    pub(super) library: bool,
    /// The kernels its image holds, where the client read them ([`get_functions`] answers
    /// a missing name itself and posts the lookup of a present one); `None`: ask the worker.
    pub(super) kernels: Option<Arc<KernelNames>>,
}

/// Tags of this library's own module and function handles. Lowercase ASCII pairs ("lm",
/// "lf"): the worker's tags are uppercase pairs, so no value is both.
pub(crate) const MODULE_HANDLE_TAG: u64 = 0x6c6d_0000_0000_0000;
pub(crate) const FUNCTION_HANDLE_TAG: u64 = 0x6c66_0000_0000_0000;
/// The bits a handle's tag occupies.
pub(crate) const LOCAL_HANDLE_TAG_MASK: u64 = 0xffff_0000_0000_0000;
/// Handles one session's table may issue: the counter stays below the namespace bits, which
/// name the worker ([`crate::remote::handle_namespace`]).
pub(crate) const MAX_LOCAL_HANDLES: u64 = 1 << client_core::client_handles::NAMESPACE_SHIFT;

/// A fresh handle `tag | namespace | counter` from `issued` (a session's counter, never
/// reused); `hipErrorOutOfMemory` once the counter is spent.
pub(crate) fn issue_handle(issued: &mut u64, tag: u64, namespace: u64, what: &str) -> Result<u64, CallError> {
    if *issued + 1 >= MAX_LOCAL_HANDLES {
        return Err(CallError::new(
            HipError::OUT_OF_MEMORY,
            format!("this session has issued the {MAX_LOCAL_HANDLES} {what} handles a session can number; start a new process"),
        ));
    }
    *issued += 1;
    Ok(tag | namespace | *issued)
}

/// The namespace bits of a handle this library issued (its worker's).
pub(crate) fn namespace_of(handle: u64) -> u64 {
    handle & (0xff << client_core::client_handles::NAMESPACE_SHIFT)
}

/// One session's module tables (kept in what the session publishes: see
/// `state::families`). A handle names its worker, so every lookup finds its session at once.
#[derive(Default)]
pub(super) struct Tables {
    pub(super) modules: HashMap<u64, ModuleEntry>,
    pub(super) functions: HashMap<u64, Arc<Function>>,
    /// The counter of the module and function handles issued in this session.
    issued: u64,
    /// Held while names are looked up in a module of this session (see [`get_functions`]).
    posted_lookups: Arc<Mutex<()>>,
}

impl Tables {
    /// A fresh handle carrying `tag` and `namespace` (the session's worker).
    pub(super) fn issue(&mut self, tag: u64, namespace: u64) -> Result<u64, CallError> {
        issue_handle(&mut self.issued, tag, namespace, "module and function")
    }
}

const MODULES: FamilyTable<Tables> = FamilyTable::new(Family::Modules.slot());

/// The module tables of the session that issued `handle` (a module, library, function or
/// kernel handle); those of the worker this call goes to for a handle naming none.
pub(super) fn tables_of(handle: u64) -> MutexGuard<'static, Tables> {
    crate::remote::published_for_handle(handle).family(&MODULES)
}

/// The module tables of `published`'s session.
pub(super) fn tables_in(published: &'static client_core::published::Published) -> MutexGuard<'static, Tables> {
    published.family(&MODULES)
}

/// The function behind a `hipFunction_t`.
pub fn function(handle: u64) -> Result<Arc<Function>, CallError> {
    let found = (handle & LOCAL_HANDLE_TAG_MASK == FUNCTION_HANDLE_TAG).then(|| tables_of(handle).functions.get(&handle).cloned()).flatten();
    found.ok_or_else(|| {
        CallError::new(
            HipError::INVALID_HANDLE,
            format!("{handle:#x} is not a hipFunction_t of this process (bad handle, or its module was unloaded)"),
        )
    })
}

pub(super) fn module_worker(module: u64) -> Result<(u64, String), CallError> {
    let found = (module & LOCAL_HANDLE_TAG_MASK == MODULE_HANDLE_TAG)
        .then(|| tables_of(module).modules.get(&module).map(|m| (m.worker, m.origin.clone())))
        .flatten();
    found.ok_or_else(|| {
        CallError::new(HipError::INVALID_HANDLE, format!("{module:#x} is not a hipModule_t of this process (bad handle, or already unloaded)"))
    })
}

/// A string argument as UTF-8 text.
///
/// # Safety
/// `ptr` must be null or a NUL-terminated string.
pub(crate) unsafe fn c_str<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, CallError> {
    if ptr.is_null() {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{what} is NULL")));
    }
    // SAFETY: non-null, NUL-terminated (caller contract).
    let s = unsafe { CStr::from_ptr(ptr) };
    s.to_str().map_err(|_| CallError::new(HipError::INVALID_VALUE, format!("{what} is not UTF-8")))
}

/// `s` cut to a wire name's length at a character boundary.
pub(super) fn wire_name(s: &str) -> &str {
    if s.len() <= MAX_NAME_LEN {
        return s;
    }
    let mut end = MAX_NAME_LEN;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

// ------------------------------------------------------------------------------------------------
// Functions and globals
// ------------------------------------------------------------------------------------------------

/// Most function lookups sent before their replies are read.
pub(super) const LOOKUP_BATCH: usize = 128;

/// Resolves `names` in `module`: cached ones at once, the rest pipelined (one round trip per
/// [`LOOKUP_BATCH`] names).
pub(crate) fn get_functions(module: u64, names: &[&str]) -> Result<Vec<Result<u64, CallError>>, CallError> {
    let (worker, origin) = module_worker(module)?;
    let mut out: Vec<Option<Result<u64, CallError>>> = {
        let t = tables_of(module);
        let Some(m) = t.modules.get(&module) else {
            return Err(CallError::new(HipError::INVALID_HANDLE, "module unloaded while its functions were looked up"));
        };
        names.iter().map(|n| m.functions.get(*n).map(|&h| Ok(h))).collect()
    };
    let mut missing: Vec<usize> = (0..names.len()).filter(|&i| out[i].is_none()).collect();
    // The names as the worker knows them, one per missing name.
    let mut aliased: Vec<String> = {
        let t = tables_of(module);
        let aliases = t.modules.get(&module).map(|m| &m.aliases);
        missing.iter().map(|&i| aliases.and_then(|a| a.get(names[i])).map_or(names[i], |w| w.as_str()).to_string()).collect()
    };
    if !missing.is_empty() {
        // In a module loaded without a round trip, lookups go the same way: the handle is
        // chosen here, the layout asked for at the first launch that passes arguments. One
        // thread at a time, and names another thread looked up meanwhile are taken as they
        // are: the worker gives a kernel one handle only, so a second posted lookup of the
        // same name would fail later, at an unrelated call.
        let posted_lookups = tables_of(module).posted_lookups.clone();
        let _one_at_a_time = posted_lookups.lock().unwrap_or_else(|e| e.into_inner());
        {
            let t = tables_of(module);
            if let Some(m) = t.modules.get(&module) {
                let mut k = 0;
                while k < missing.len() {
                    if let Some(&h) = m.functions.get(names[missing[k]]) {
                        out[missing[k]] = Some(Ok(h));
                        missing.remove(k);
                        aliased.remove(k);
                    } else {
                        k += 1;
                    }
                }
            }
        }
        // What the module's image shows: a name it lacks is answered here, as HIP answers it
        // at the lookup; one it holds is posted (with its layout where the image has it).
        let policy = crate::remote::config().posted_lookups;
        let kernels = tables_of(module).modules.get(&module).and_then(|m| m.kernels.clone());
        let mut waiting = (Vec::new(), Vec::new());
        for (i, worker_name) in missing.drain(..).zip(aliased.drain(..)) {
            let presence = kernels.as_ref().map_or(Presence::Unknown, |k| k.presence(&worker_name));
            if presence == Presence::Absent {
                out[i] = Some(Err(not_in_image(&origin, names[i], kernels.as_deref())));
                continue;
            }
            let post = match policy {
                PostedLookups::Auto => presence == Presence::Present,
                PostedLookups::On => true,
                PostedLookups::Off => false,
            };
            let posted = if post {
                crate::remote::on_handle(worker, || with_conn(|c| c.post_function_lookup(worker, wire_name(&worker_name))))?
            } else {
                None
            };
            let Some(worker_fn) = posted else {
                waiting.0.push(i);
                waiting.1.push(worker_name);
                continue;
            };
            // A layout the image records, when it is one a launch can pack; else asked at the
            // first launch with arguments.
            let layout = kernels
                .as_ref()
                .and_then(|k| k.params(&worker_name))
                .and_then(|params| ArgLayout::new(params.iter().copied()).ok())
                .map_or_else(OnceLock::new, OnceLock::from);
            let mut t = tables_of(module);
            let h = t.issue(FUNCTION_HANDLE_TAG, namespace_of(module))?;
            let Some(m) = t.modules.get_mut(&module) else {
                return Err(CallError::new(HipError::INVALID_HANDLE, "module unloaded while its functions were looked up"));
            };
            m.functions.insert(names[i].to_string(), h);
            let f = Function {
                worker: worker_fn,
                module,
                name: names[i].to_string(),
                layout,
                worker_name,
                attributes: Mutex::new(None),
                c_name: OnceLock::new(),
            };
            t.functions.insert(h, Arc::new(f));
            out[i] = Some(Ok(h));
        }
        (missing, aliased) = waiting;
    }
    if !missing.is_empty() {
        let reqs: Vec<wire::SymbolLookup<'_>> =
            aliased.iter().map(|name| wire::SymbolLookup { module: worker, name: wire_name(name).into() }).collect();
        // Pipelined in bounded batches: both directions' socket buffers hold a whole batch,
        // so neither side blocks writing while the other is not reading.
        let mut replies = Vec::with_capacity(reqs.len());
        for batch in reqs.chunks(LOOKUP_BATCH) {
            replies.extend(crate::remote::on_handle(worker, || {
                with_conn(|c| {
                    c.call_batch::<calls::ModuleGetFunction, _>(batch.iter().cloned(), |_, f| {
                        (f.function, f.params.0.iter().map(|p| (p.offset.get(), p.size.get())).collect::<Vec<_>>())
                    })
                })
            })?);
        }
        let mut t = tables_of(module);
        for (&i, reply) in missing.iter().zip(replies) {
            let resolved = reply.and_then(|(worker_fn, params)| Ok((worker_fn, ArgLayout::new(params)?)));
            out[i] = Some(match resolved {
                Err(e) => Err(CallError::new(e.code, format!("{origin}: kernel {}: {}", names[i], e.message))),
                Ok((worker_fn, layout)) => {
                    let Some(m) = t.modules.get(&module) else {
                        return Err(CallError::new(HipError::INVALID_HANDLE, "module unloaded while its functions were looked up"));
                    };
                    // A concurrent lookup of the same name may have won: keep its handle.
                    let handle = match m.functions.get(names[i]) {
                        Some(&h) => h,
                        None => {
                            let h = t.issue(FUNCTION_HANDLE_TAG, namespace_of(module))?;
                            if let Some(m) = t.modules.get_mut(&module) {
                                m.functions.insert(names[i].to_string(), h);
                            }
                            let f = Function {
                                worker: worker_fn,
                                module,
                                name: names[i].to_string(),
                                layout: OnceLock::from(layout),
                                worker_name: aliased[missing.iter().position(|&m| m == i).unwrap_or(0)].clone(),
                                attributes: Mutex::new(None),
                                c_name: OnceLock::new(),
                            };
                            t.functions.insert(h, Arc::new(f));
                            h
                        }
                    };
                    Ok(handle)
                }
            });
        }
    }
    Ok(out.into_iter().map(|r| r.expect("every name answered")).collect())
}

/// Most kernel names quoted in a not-found message.
const MAX_QUOTED_KERNELS: usize = 8;

/// `hipErrorNotFound` for kernel `name`, which the module's image shows it lacks.
fn not_in_image(origin: &str, name: &str, kernels: Option<&KernelNames>) -> CallError {
    let mut known: Vec<&str> = kernels.map(|k| k.names().collect()).unwrap_or_default();
    known.sort_unstable();
    let more = known.len().saturating_sub(MAX_QUOTED_KERNELS);
    known.truncate(MAX_QUOTED_KERNELS);
    let listed = if known.is_empty() { "none".to_string() } else { known.join(", ") };
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    CallError::new(HipError::NOT_FOUND, format!("{origin}: kernel {name}: the module has no such kernel (its kernels: {listed}{more})"))
}

/// Resolves one function of `module`.
pub(crate) fn get_function(module: u64, name: &str) -> Result<u64, CallError> {
    get_functions(module, &[name])?.pop().expect("one name, one answer")
}

/// A device global of `module`: its address and size (cached).
pub(crate) fn get_global(module: u64, name: &str) -> Result<(u64, u64), CallError> {
    let (worker, origin) = module_worker(module)?;
    if let Some(&g) = tables_of(module).modules.get(&module).and_then(|m| m.globals.get(name)) {
        return Ok(g);
    }
    let alias = tables_of(module).modules.get(&module).and_then(|m| m.aliases.get(name).cloned());
    let req = wire::SymbolLookup { module: worker, name: wire_name(alias.as_deref().unwrap_or(name)).into() };
    let global = crate::remote::on_handle(worker, || with_conn(|c| c.module_get_global(req).map(|g| (g.ptr, g.size))))
        .map_err(|e| CallError::new(e.code, format!("{origin}: global {name}: {}", e.message)))?;
    let mut device = current_device();
    if let Some(m) = tables_of(module).modules.get_mut(&module) {
        m.globals.insert(name.to_string(), global);
        device = m.device;
    }
    // A global is device memory of the module's device: hipMemcpyDefault and
    // hipPointerGetAttributes must see it as such.
    crate::state::allocations::note_device_range(global.0, global.1, device);
    Ok(global)
}

/// Drops a function whose kernel turned out missing, so a later lookup asks again.
pub(crate) fn forget_function(handle: u64) {
    let mut t = tables_of(handle);
    if let Some(f) = t.functions.remove(&handle) {
        if let Some(m) = t.modules.get_mut(&f.module) {
            m.functions.retain(|_, h| *h != handle);
        }
    }
}

/// Drops `module` and its functions from its session's tables (a library's kernel names with
/// them); returns its worker handle.
pub(crate) fn forget_module(module: u64) -> Option<u64> {
    if module & LOCAL_HANDLE_TAG_MASK != MODULE_HANDLE_TAG {
        return None;
    }
    let mut t = tables_of(module);
    let entry = t.modules.remove(&module)?;
    for h in entry.functions.values() {
        t.functions.remove(h);
    }
    Some(entry.worker)
}

/// The attributes of `f` (asked once, then cached until `hipFuncSetAttribute` changes them).
pub(crate) fn attributes(f: &Function) -> Result<wire::FuncAttributes, CallError> {
    if let Some(a) = f.attributes.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        return Ok(a.clone());
    }
    let a = crate::remote::on_handle(f.worker, || with_conn(|c| c.func_get_attributes(wire::FunctionRef { function: f.worker })))?;
    *f.attributes.lock().unwrap_or_else(|p| p.into_inner()) = Some(a.clone());
    Ok(a)
}

/// `hipFuncSetAttribute` on the worker; the cached attributes are dropped so the next
/// `hipFuncGetAttributes` reports the new value.
pub(crate) fn set_attribute(f: &Function, attribute: u32, value: i32) -> Result<(), CallError> {
    crate::remote::on_handle(f.worker, || with_conn(|c| c.func_set_attribute(wire::FuncSetAttribute { function: f.worker, attribute, value })))?;
    *f.attributes.lock().unwrap_or_else(|p| p.into_inner()) = None;
    Ok(())
}

/// Fills a `hipFuncAttributes`.
pub(crate) fn fill_attributes(out: &mut hipFuncAttributes, a: &wire::FuncAttributes) {
    out.binaryVersion = a.binary_version;
    out.cacheModeCA = a.cache_mode_ca;
    out.constSizeBytes = a.const_size as usize;
    out.localSizeBytes = a.local_size as usize;
    out.maxDynamicSharedSizeBytes = a.max_dynamic_shared_size;
    out.maxThreadsPerBlock = a.max_threads_per_block;
    out.numRegs = a.num_regs;
    out.preferredShmemCarveout = a.preferred_shmem_carveout;
    out.ptxVersion = a.ptx_version;
    out.sharedSizeBytes = a.shared_size as usize;
}

/// The `hipFunction_t` of this process whose worker handle is `worker`, if any (looked up in
/// the session of the worker that handle names).
pub fn function_by_worker(worker: u64) -> Option<u64> {
    tables_of(worker).functions.iter().find(|(_, f)| f.worker == worker).map(|(&h, _)| h)
}
