//! User objects (`hipUserObject*`, `hipGraphRetainUserObject`, `hipGraphReleaseUserObject`):
//! a reference-counted destructor call the application hands to graphs. The destructor is the
//! application's code, so user objects and every reference to them live here, never on the
//! worker: a graph holds references (counted into the object), an executable graph takes its
//! graph's references when instantiated, a clone copies them, and destroying a graph or an
//! executable graph releases them. The destructor runs when the last reference goes, on the
//! releasing thread after every lock of this library is released (never under the
//! connection's lock). Argument checks and the silent no-ops follow ROCm's `hip_graph.cpp`.

use crate::abi::*;
use client_core::CallError;
use std::collections::HashMap;
use std::ffi::{c_uint, c_void};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// One user object: its destructor and the references all holders own together.
struct UserObject {
    destroy: unsafe extern "C" fn(*mut c_void),
    ptr: usize,
    references: u64,
}

/// References held per graph or executable graph: object → count.
type Held = HashMap<u64, u64>;

#[derive(Default)]
struct Registry {
    objects: HashMap<u64, UserObject>,
    next: u64,
    /// Per graph (and per executable graph, in `execs`), the references it owns.
    graphs: HashMap<u64, Held>,
    execs: HashMap<u64, Held>,
}

/// A destructor to run once the registry's lock is released.
struct Destructor(unsafe extern "C" fn(*mut c_void), usize);

impl Destructor {
    fn run(self) {
        // SAFETY: the application's destructor with the pointer it gave hipUserObjectCreate,
        // called once, when the object's last reference went (HIP's contract).
        unsafe { (self.0)(self.1 as *mut c_void) }
    }
}

impl Registry {
    /// Drops `count` references of `object`; the destructor to run if that was the last.
    fn release(&mut self, object: u64, count: u64) -> Option<Destructor> {
        let o = self.objects.get_mut(&object)?;
        o.references = o.references.saturating_sub(count);
        if o.references > 0 {
            return None;
        }
        let o = self.objects.remove(&object)?;
        for held in self.graphs.values_mut().chain(self.execs.values_mut()) {
            held.remove(&object);
        }
        Some(Destructor(o.destroy, o.ptr))
    }

    /// Releases every reference in `held`.
    fn release_all(&mut self, held: Held) -> Vec<Destructor> {
        held.into_iter().filter_map(|(object, count)| self.release(object, count)).collect()
    }

    /// Gives `to` (a new holder) references to everything `from` holds.
    fn copy_references(&mut self, from: &Held) -> Held {
        for (object, count) in from {
            if let Some(o) = self.objects.get_mut(object) {
                o.references += count;
            }
        }
        from.clone()
    }
}

fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(Registry { next: 1, ..Default::default() })).lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs the destructors (the registry's lock is not held: each caller drops it first).
fn run(destructors: Vec<Destructor>) {
    destructors.into_iter().for_each(Destructor::run);
}

/// HIP takes reference counts from 1 to `INT_MAX`.
fn check_count(count: c_uint) -> Result<u64, CallError> {
    if count == 0 || count > i32::MAX as c_uint {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("reference count {count}")));
    }
    Ok(u64::from(count))
}

/// `graph` was destroyed: its references go.
pub(crate) fn graph_destroyed(graph: u64) {
    let destructors = {
        let mut r = registry();
        let held = r.graphs.remove(&graph).unwrap_or_default();
        r.release_all(held)
    };
    run(destructors);
}

/// `clone` was made from `original`: it holds the same references.
pub(crate) fn graph_cloned(original: u64, clone: u64) {
    let mut r = registry();
    if let Some(held) = r.graphs.get(&original).cloned() {
        let copied = r.copy_references(&held);
        r.graphs.insert(clone, copied);
    }
}

/// `exec` was instantiated from `graph`: it holds the graph's references.
pub(crate) fn exec_instantiated(graph: u64, exec: u64) {
    let mut r = registry();
    if let Some(held) = r.graphs.get(&graph).cloned() {
        let copied = r.copy_references(&held);
        r.execs.insert(exec, copied);
    }
}

/// `exec` was destroyed: its references go.
pub(crate) fn exec_destroyed(exec: u64) {
    let destructors = {
        let mut r = registry();
        let held = r.execs.remove(&exec).unwrap_or_default();
        r.release_all(held)
    };
    run(destructors);
}

#[no_mangle]
pub unsafe extern "C" fn hipUserObjectCreate(
    object_out: *mut hipUserObject_t,
    ptr: *mut c_void,
    destroy: hipHostFn_t,
    initialRefcount: c_uint,
    flags: c_uint,
) -> hipError_t {
    hip_boundary!("hipUserObjectCreate", {
        non_null!(object_out);
        if flags != hipUserObjectNoDestructorSync {
            return Err(CallError::new(
                HipError::INVALID_VALUE,
                format!("hipUserObjectCreate flags {flags} (hipUserObjectNoDestructorSync required)"),
            ));
        }
        let references = check_count(initialRefcount)?;
        let destroy = destroy.ok_or_else(|| CallError::new(HipError::INVALID_VALUE, "the destructor is NULL"))?;
        let object = {
            let mut r = registry();
            let object = r.next;
            r.next += 1;
            r.objects.insert(object, UserObject { destroy, ptr: ptr as usize, references });
            object
        };
        try_out!(object_out, crate::handle::from_id(object)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipUserObjectRetain(object: hipUserObject_t, count: c_uint) -> hipError_t {
    hip_boundary!("hipUserObjectRetain", {
        non_null!(object);
        let count = check_count(count)?;
        // An object HIP does not know is ignored, as in hip_graph.cpp.
        if let Some(o) = registry().objects.get_mut(&(object as usize as u64)) {
            o.references += count;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipUserObjectRelease(object: hipUserObject_t, count: c_uint) -> hipError_t {
    hip_boundary!("hipUserObjectRelease", {
        non_null!(object);
        let count = check_count(count)?;
        let object = object as usize as u64;
        let destructor = {
            let mut r = registry();
            // Releasing more than the object has is ignored, as in hip_graph.cpp.
            match r.objects.get(&object) {
                Some(o) if o.references >= count => r.release(object, count),
                _ => None,
            }
        };
        run(destructor.into_iter().collect());
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphRetainUserObject(graph: hipGraph_t, object: hipUserObject_t, count: c_uint, flags: c_uint) -> hipError_t {
    hip_boundary!("hipGraphRetainUserObject", {
        non_null!(graph);
        non_null!(object);
        let count = check_count(count)?;
        if flags != 0 && flags != hipGraphUserObjectMove {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("hipGraphRetainUserObject flags {flags}")));
        }
        let (graph, object) = (graph as usize as u64, object as usize as u64);
        let mut r = registry();
        let Some(o) = r.objects.get_mut(&object) else {
            return Ok(());
        };
        // hipGraphUserObjectMove: the graph takes over references the caller owned.
        if flags != hipGraphUserObjectMove {
            o.references += count;
        }
        *r.graphs.entry(graph).or_default().entry(object).or_default() += count;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGraphReleaseUserObject(graph: hipGraph_t, object: hipUserObject_t, count: c_uint) -> hipError_t {
    hip_boundary!("hipGraphReleaseUserObject", {
        non_null!(graph);
        non_null!(object);
        let count = check_count(count)?;
        let (graph, object) = (graph as usize as u64, object as usize as u64);
        let destructor = {
            let mut r = registry();
            let held = r.graphs.get_mut(&graph).and_then(|h| h.get_mut(&object));
            match held {
                // A graph that does not hold that many references: ignored, as HIP does.
                Some(held) if *held >= count => {
                    *held -= count;
                    if *held == 0 {
                        r.graphs.get_mut(&graph).map(|h| h.remove(&object));
                    }
                    r.release(object, count)
                }
                _ => None,
            }
        };
        run(destructor.into_iter().collect());
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static DESTROYED: AtomicUsize = AtomicUsize::new(0);
    unsafe extern "C" fn count_destroy(_: *mut c_void) {
        DESTROYED.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn references_follow_graphs_clones_and_execs() {
        let object = {
            let mut r = registry();
            let object = r.next;
            r.next += 1;
            r.objects.insert(object, UserObject { destroy: count_destroy, ptr: 0, references: 1 });
            r.graphs.entry(0xa).or_default().insert(object, 1);
            object
        };
        graph_cloned(0xa, 0xb);
        exec_instantiated(0xb, 0xc);
        assert_eq!(registry().objects[&object].references, 3);
        graph_destroyed(0xa);
        graph_destroyed(0xb);
        assert_eq!(DESTROYED.load(Ordering::SeqCst), 0);
        exec_destroyed(0xc);
        assert_eq!(DESTROYED.load(Ordering::SeqCst), 1);
        assert!(!registry().objects.contains_key(&object));
    }
}
