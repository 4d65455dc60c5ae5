//! The session's side of device faults in shared mode ([`crate::device_faults`]): which
//! generation of each device it works in, reporting a sticky error it met, and the fence
//! that keeps its handles of a reset device away from the device's new context.

use super::{Failure, Session};
use crate::backend::DeviceIndex;
use crate::device_faults::{is_sticky, Fault};
use proto_core::Status;
use std::collections::{BTreeMap, HashMap};

/// What the session knows of the devices' generations.
#[derive(Debug, Default)]
pub(super) struct FaultView {
    /// [`DeviceFaults::resets`](crate::device_faults::DeviceFaults::resets) when the
    /// generations below were read.
    resets_seen: u64,
    /// The generation of each device the session works in (absent: 0).
    generations: HashMap<DeviceIndex, u64>,
    /// Devices whose context was reset while the session held work on them, with the fault
    /// that ended it: every later call of the session fails with that fault's code.
    fenced: BTreeMap<DeviceIndex, Fault>,
}

impl FaultView {
    /// The view of a session starting now.
    pub(super) fn current(faults: &crate::device_faults::DeviceFaults) -> Self {
        let resets_seen = faults.resets();
        Self { resets_seen, generations: faults.generations(), fenced: BTreeMap::new() }
    }
}

impl Session {
    /// Called before each request of a trusted session: catches up with resets other
    /// sessions' faults caused, and refuses the request with the sticky error once the
    /// session lost its work on a device (as HIP answers every call of a process after one).
    pub fn fault_gate(&mut self) -> Result<(), Failure> {
        if self.config.device_faults.resets() != self.faults.resets_seen {
            self.catch_up_resets();
        }
        match self.faults.fenced.iter().next() {
            None => Ok(()),
            Some((&device, fault)) => Err(fenced_failure(device, fault, self.id)),
        }
    }

    /// After a call that waited for the device: if the device was reset meanwhile (another
    /// session's fault, the kernel watchdog under a kernel that never returns), the call
    /// answers the fault's error, whatever the reset left the wait with. The fence itself
    /// comes with the next request.
    pub(super) fn check_reset_under_call(&self) -> Result<(), Failure> {
        let faults = &self.config.device_faults;
        if faults.resets() == self.faults.resets_seen {
            return Ok(());
        }
        for (device, generation) in faults.generations() {
            if generation > self.faults.generations.get(&device).copied().unwrap_or(0) && self.holds_device(device) {
                let fault = faults.last_fault(device).unwrap_or(Fault { code: proto_core::hip_error::code::ILLEGAL_ADDRESS, session: 0 });
                return Err(fenced_failure(device, &fault, self.id));
            }
        }
        Ok(())
    }

    /// Whether the session lost its work on some device to a fault.
    pub fn fenced(&self) -> bool {
        !self.faults.fenced.is_empty()
    }

    /// Called after a request failed with `status`: a sticky error resets its device (the
    /// first report per generation) and fences this session for it.
    pub fn note_failure(&mut self, status: Status) {
        if !is_sticky(status.0) || self.fenced() {
            return;
        }
        let held = self.held_devices();
        let candidates: Vec<DeviceIndex> = match (&self.device_map, held.is_empty()) {
            (_, false) => held.clone(),
            // Only the devices the session sees (the client's visibility variables).
            (Some(map), true) => map.iter().map(|&(_, local)| local).collect(),
            (None, true) => (0..self.backend.device_count().unwrap_or(0)).collect(),
        };
        // Where the backend can tell which of them is broken, only those (a session on two
        // devices must not reset the healthy one).
        let faulted: Vec<DeviceIndex> = candidates.into_iter().filter(|&d| self.backend.device_fault(d) != Some(false)).collect();
        let config = std::sync::Arc::clone(&self.config);
        for device in faulted {
            let seen = self.faults.generations.get(&device).copied().unwrap_or(0);
            let fault = config.device_faults.report(&*self.backend, &config.metrics, device, seen, status.0, self.id);
            if held.contains(&device) {
                self.fence(device, fault);
            } else {
                // Nothing of the session was on it: it goes on in the new generation.
                self.faults.generations.insert(device, config.device_faults.generation(device));
            }
        }
    }

    /// Takes in the resets since the session last looked: a device reset while the session
    /// held work on it fences the session for it.
    fn catch_up_resets(&mut self) {
        let faults = std::sync::Arc::clone(&self.config.device_faults);
        let resets = faults.resets();
        let now = faults.generations();
        for (&device, &generation) in &now {
            if generation > self.faults.generations.get(&device).copied().unwrap_or(0)
                && self.holds_device(device)
                && !self.faults.fenced.contains_key(&device)
            {
                let fault = faults.last_fault(device).unwrap_or(Fault { code: proto_core::hip_error::code::ILLEGAL_ADDRESS, session: 0 });
                self.fence(device, fault);
            }
        }
        self.faults.generations = now;
        self.faults.resets_seen = resets;
    }

    /// The devices the session holds anything on.
    fn held_devices(&self) -> Vec<DeviceIndex> {
        let count = self.backend.device_count().unwrap_or(0);
        (0..count).filter(|&d| self.holds_device(d)).collect()
    }

    /// Whether the session holds nothing on any device (`SessionDeviceBase` may still move it).
    pub(super) fn holds_nothing(&self) -> bool {
        self.held_devices().is_empty()
    }

    fn holds_device(&self, device: DeviceIndex) -> bool {
        self.allocations.iter().any(|(_, a)| a.device == device)
            || self.streams.values().any(|(_, d, _)| *d == device)
            || self.null_streams.contains_key(&device)
            || self.events.values().any(|(_, d)| *d == device)
            || self.modules.values().any(|m| m.device() == device)
            || self.blas.values().any(|(_, d)| *d == device)
    }

    /// Forgets everything the session held on `device` without handing any of it to the
    /// backend, which dropped its side in the reset: the same pointer or handle value may
    /// already name another session's object in the new context. Later calls fail with the
    /// fault's code.
    fn fence(&mut self, device: DeviceIndex, fault: Fault) {
        let name = proto_core::hip_error::name(fault.code).to_string_lossy();
        tracing::info!(
            session = self.id,
            device,
            code = fault.code,
            faulted_session = fault.session,
            "session loses its work on device {device} to {name}"
        );
        self.config.metrics.session_ended_by_fault(device);
        self.config.device_faults.note_fenced(device, self.id);
        self.faults.fenced.insert(device, fault);
        for (ptr, _) in self.allocations.drain_where(|a| a.device == device) {
            self.forget_allocation(ptr);
        }
        let nulls: Vec<_> = self.null_streams.extract_if(|d, _| *d == device).map(|(_, s)| s).collect();
        let streams = self.streams.drain_where(|(_, d, _)| *d == device).into_iter().map(|(_, (s, _, _))| s);
        for stream in streams.chain(nulls) {
            self.legacy_order.forget(stream);
            self.stream_priorities.remove(&stream);
            self.release_worker_stream();
        }
        drop(self.events.drain_where(|(_, d)| *d == device));
        for (_, module) in self.modules.drain_where(|m| m.device() == device) {
            self.forget_module(&module);
        }
        drop(self.blas.drain_where(|(_, d)| *d == device));
        // The families below keep objects that free themselves through the backend when
        // dropped (pool blocks shared over IPC, VMM physical memory, client ranges' units,
        // arrays, executable graphs): they are left unreleased, never freed into the new
        // context. Their memory on this device went with the reset; on another device of a
        // multi-device session it stays allocated until the worker ends.
        std::mem::forget(std::mem::take(&mut self.pools));
        std::mem::forget(std::mem::take(&mut self.vmm));
        std::mem::forget(std::mem::take(&mut self.client_ranges));
        std::mem::forget(std::mem::take(&mut self.ipc));
        std::mem::forget(std::mem::take(&mut self.arrays));
        std::mem::forget(std::mem::take(&mut self.graphs));
        std::mem::forget(std::mem::take(&mut self.captures));
    }
}

/// The failure a fenced session answers.
fn fenced_failure(device: DeviceIndex, fault: &Fault, session: u64) -> Failure {
    let name = proto_core::hip_error::name(fault.code).to_string_lossy();
    let what = match fault.session {
        // The kernel watchdog reports as no session.
        0 => format!("a kernel ran past the worker's limit (--max-kernel-ms) on device {device}"),
        s if s == session => format!("a kernel of this session faulted on device {device}"),
        s => format!("a kernel of session {s} faulted on device {device}"),
    };
    Failure::new(
        Status(fault.code),
        format!(
            "{name}: {what}; the device was reset and this session's work on it is lost. \
             As after this error in HIP, end the process and reconnect (the worker serves new sessions on the device)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BackendError, HostBackend, HostConfig, MemoryBackend};
    use crate::session::{CallCx, SessionConfig};
    use proto_core::opcode::{DeviceHandler, MemoryHandler, StreamHandler};
    use proto_core::wire;
    use std::sync::Arc;

    const ILLEGAL_ADDRESS: i32 = proto_core::hip_error::code::ILLEGAL_ADDRESS;

    fn cx() -> CallCx {
        CallCx::new(1, proto_core::Opcode::Ping, false, 0)
    }

    /// One request as the driver serves it: the gate, the handler, a failure noted.
    fn serve<T>(session: &mut Session, handler: impl FnOnce(&mut Session, &mut CallCx) -> Result<T, Failure>) -> Result<T, i32> {
        let result = session.fault_gate().and_then(|()| handler(session, &mut cx()));
        result.map_err(|failure| match failure {
            Failure::Status(status, _) => {
                session.note_failure(status);
                status.0
            }
            Failure::ReplyDeferred => panic!("no deferred replies here"),
        })
    }

    fn malloc(session: &mut Session, device: u32) -> Result<u64, i32> {
        serve(session, |s, cx| s.malloc(cx, wire::Malloc { device, size: 4096, flags: 0 })).map(|a| a.ptr)
    }

    fn stream(session: &mut Session, device: u32) -> Result<u64, i32> {
        serve(session, |s, cx| s.stream_create(cx, wire::StreamCreate { device, flags: 0, priority: 0 })).map(|c| c.stream)
    }

    fn synchronize(session: &mut Session, stream: u64) -> Result<(), i32> {
        serve(session, |s, cx| s.stream_synchronize(cx, wire::StreamRef { stream })).map(drop)
    }

    #[test]
    fn a_sticky_fault_fences_the_device_sessions_and_resets_it_once() {
        let backend = Arc::new(HostBackend::new(HostConfig { devices: 2, memory_per_device: 16 << 20, ..HostConfig::default() }));
        let config = Arc::new(SessionConfig::default());
        let open = || Session::new(backend.clone(), Arc::clone(&config));
        let (mut a, mut b, mut idle, mut other) = (open(), open(), open(), open());
        let a_memory = malloc(&mut a, 0).unwrap();
        let a_stream = stream(&mut a, 0).unwrap();
        let b_memory = malloc(&mut b, 0).unwrap();
        let b_stream = stream(&mut b, 0).unwrap();
        assert_eq!(serve(&mut idle, |s, cx| s.get_device_count(cx, wire::Empty {})).unwrap().count, 2);
        let other_memory = malloc(&mut other, 1).unwrap();
        let other_stream = stream(&mut other, 1).unwrap();

        // A sticky code from a context that stayed usable (a host kernel's assert, the cuda
        // backend's device-log asserts) resets nothing and fences nobody.
        a.note_failure(Status::ASSERT);
        assert!(!a.fenced() && backend.injected.resets.lock().unwrap().is_empty());
        assert!(malloc(&mut a, 0).is_ok());

        // A's kernel faults: its synchronize reports it, and so does every later call of A.
        backend.injected.inject(0, BackendError::IllegalAddress("a wild write".into()));
        assert_eq!(synchronize(&mut a, a_stream), Err(ILLEGAL_ADDRESS));
        assert_eq!(malloc(&mut a, 0), Err(ILLEGAL_ADDRESS));
        assert_eq!(malloc(&mut a, 1), Err(ILLEGAL_ADDRESS), "HIP fails every call of the process, not only the device's");
        assert_eq!(serve(&mut a, |s, cx| s.free(cx, wire::Free { ptr: a_memory })).map(drop), Err(ILLEGAL_ADDRESS));
        assert!(a.allocations.get(a_memory).is_none(), "the fenced session forgot its pointer");

        // B held work on the device before the reset: the same error, on every call.
        assert_eq!(synchronize(&mut b, b_stream), Err(ILLEGAL_ADDRESS));
        assert_eq!(malloc(&mut b, 0), Err(ILLEGAL_ADDRESS));
        assert_eq!(serve(&mut b, |s, cx| s.free(cx, wire::Free { ptr: b_memory })).map(drop), Err(ILLEGAL_ADDRESS));

        // The reset ran once, for device 0 only.
        assert_eq!(*backend.injected.resets.lock().unwrap(), vec![0]);
        assert_eq!(config.metrics.device_resets(0), 1);
        assert_eq!(config.metrics.device_resets(1), 0);
        assert_eq!(config.metrics.sessions_ended_by_fault(0), 2);
        assert!(config.metrics.render(&*backend).contains("hip_worker_device_resets_total{device=\"0\"} 1"));

        // A session that held nothing, one on the other device and one opened after the reset
        // are served normally.
        let idle_memory = malloc(&mut idle, 0).expect("a session without work on the device goes on");
        assert_eq!(synchronize(&mut other, other_stream), Ok(()));
        assert!(malloc(&mut other, 1).is_ok());
        let mut c = open();
        let c_memory = malloc(&mut c, 0).unwrap();
        let c_stream = stream(&mut c, 0).unwrap();
        assert_eq!(synchronize(&mut c, c_stream), Ok(()));
        serve(&mut c, |s, cx| {
            s.memset(cx, wire::Memset { dst: c_memory, value: 0x5a, width: wire::MemsetWidth::Byte, count: 4096, stream: 0, sync: true })
        })
        .unwrap();

        // The fenced sessions end without handing their stale pointers to the backend: C's
        // and the idle session's memory stay live.
        drop((a, b));
        for ptr in [c_memory, idle_memory, other_memory] {
            let mut byte = [0u8; 1];
            backend.memcpy_dtoh_sync(None, crate::backend::DevicePtr(ptr), &mut byte).expect("still allocated");
        }
        assert_eq!(*backend.injected.resets.lock().unwrap(), vec![0], "no further reset");
    }
}
