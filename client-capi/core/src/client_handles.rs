//! Stream and event handles the library picks itself, so `hipStreamCreate` and
//! `hipEventCreate` need no round trip (`CLIENT_ALLOCATION`, `docs/ALLOCATION.md`).
//!
//! A handle is a tag (`wire::CLIENT_STREAM_TAG`, `wire::CLIENT_EVENT_TAG`) and a counter that
//! never repeats within the connection. The worker creates the object when it reaches the
//! posted request; if that fails, the failure is deferred to the next synchronising call and
//! every later use of the handle fails as an unknown stream or event. The live sets let a
//! destroy of a handle created here be posted too: a handle not in them (destroyed already,
//! or never made here) goes as a waiting call, so HIP's synchronous error stays.

use proto_core::wire;
use std::collections::{HashMap, HashSet};

/// Counters below this stay inside the tag's range (`wire::CLIENT_HANDLE_TAG_MASK`).
const COUNTER_LIMIT: u64 = 1 << 48;
/// Where a handle carries its worker's namespace in a device list of several workers (the
/// worker's device base, as the worker's own handles carry it after `SessionDeviceBase`).
pub const NAMESPACE_SHIFT: u32 = 40;

/// Most destroyed worker-chosen stream handles remembered (a handle created here needs no
/// memory: its counter says it was made). Past it, a use of a destroyed worker-chosen handle
/// is refused by the worker, at the next synchronising call.
pub const MAX_REMEMBERED_DESTROYED_STREAMS: usize = 1 << 16;

/// The connection's client-chosen handles.
#[derive(Debug, Default)]
pub struct ClientHandles {
    next: u64,
    /// The namespace's bits ([`ClientHandles::set_namespace`]); 0 for a single worker.
    namespace: u64,
    /// Live handles and their devices.
    streams: HashMap<u64, u32>,
    events: HashMap<u64, u32>,
    /// Worker-chosen stream handles destroyed through this connection.
    destroyed_worker_streams: HashSet<u64>,
}

/// What kind of object a handle names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A `hipStream_t`.
    Stream,
    /// A `hipEvent_t`.
    Event,
}

impl Kind {
    fn tag(self) -> u64 {
        match self {
            Self::Stream => wire::CLIENT_STREAM_TAG,
            Self::Event => wire::CLIENT_EVENT_TAG,
        }
    }
}

impl ClientHandles {
    /// A fresh handle of `kind` on `device`, recorded as live; `None` once the counter is
    /// spent (the caller then lets the worker choose).
    pub fn create(&mut self, kind: Kind, device: u32) -> Option<u64> {
        self.next += 1;
        let limit = if self.namespace == 0 { COUNTER_LIMIT } else { 1 << NAMESPACE_SHIFT };
        if self.next >= limit {
            return None;
        }
        let handle = kind.tag() | self.namespace | self.next;
        self.live(kind).insert(handle, device);
        Some(handle)
    }

    /// A fresh handle carrying `tag` (a module or function of this connection), not tracked
    /// here: its table in the library knows it. `None` once the counter is spent.
    pub fn fresh(&mut self, tag: u64) -> Option<u64> {
        self.next += 1;
        let limit = if self.namespace == 0 { COUNTER_LIMIT } else { 1 << NAMESPACE_SHIFT };
        (self.next < limit).then_some(tag | self.namespace | self.next)
    }

    /// Puts the handles created from now on in namespace `space` (bits 40..48): the
    /// connection is to a worker of a device list whose first device is `space`.
    pub fn set_namespace(&mut self, space: u8) {
        self.namespace = u64::from(space) << NAMESPACE_SHIFT;
    }

    /// Forgets `handle`; whether it was a live handle of `kind` created here.
    pub fn destroy(&mut self, kind: Kind, handle: u64) -> bool {
        self.live(kind).remove(&handle).is_some()
    }

    /// Remembers that the worker-chosen stream `handle` was destroyed (up to
    /// [`MAX_REMEMBERED_DESTROYED_STREAMS`]).
    pub fn note_destroyed_stream(&mut self, handle: u64) {
        if self.destroyed_worker_streams.len() < MAX_REMEMBERED_DESTROYED_STREAMS {
            self.destroyed_worker_streams.insert(handle);
        }
    }

    /// Whether `handle` names a stream known to be gone: made here and since destroyed (or
    /// lost with its device's reset), or a destroyed worker-chosen one. HIP refuses such a
    /// stream at the call; the worker would only find out after the call was posted.
    pub fn is_destroyed_stream(&self, handle: u64) -> bool {
        if handle & wire::CLIENT_HANDLE_TAG_MASK == wire::CLIENT_STREAM_TAG {
            let counter = handle & !wire::CLIENT_HANDLE_TAG_MASK;
            return counter != 0 && counter <= self.next && !self.streams.contains_key(&handle);
        }
        self.destroyed_worker_streams.contains(&handle)
    }

    /// Whether `handle` names an event made here and since destroyed (or lost with its
    /// device's reset): ROCm answers `hipErrorContextIsDestroyed` when such an event is
    /// destroyed again.
    pub fn is_destroyed_event(&self, handle: u64) -> bool {
        if handle & wire::CLIENT_HANDLE_TAG_MASK != wire::CLIENT_EVENT_TAG {
            return false;
        }
        let counter = handle & !wire::CLIENT_HANDLE_TAG_MASK;
        counter != 0 && counter <= self.next && !self.events.contains_key(&handle)
    }

    /// The device of the live `handle` of `kind` created here; `None` for a handle the worker
    /// chose or one no longer live.
    pub fn device_of(&self, kind: Kind, handle: u64) -> Option<u32> {
        match kind {
            Kind::Stream => self.streams.get(&handle).copied(),
            Kind::Event => self.events.get(&handle).copied(),
        }
    }

    /// Forgets the handles of `device` (`hipDeviceReset` destroys them on the worker).
    pub fn forget_device(&mut self, device: u32) {
        self.streams.retain(|_, d| *d != device);
        self.events.retain(|_, d| *d != device);
    }

    fn live(&mut self, kind: Kind) -> &mut HashMap<u64, u32> {
        match kind {
            Kind::Stream => &mut self.streams,
            Kind::Event => &mut self.events,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn handles_are_tagged_fresh_and_destroyed_once() {
        let mut handles = ClientHandles::default();
        let stream = handles.create(Kind::Stream, 0).unwrap();
        let event = handles.create(Kind::Event, 1).unwrap();
        assert_eq!(stream & wire::CLIENT_HANDLE_TAG_MASK, wire::CLIENT_STREAM_TAG);
        assert_eq!(event & wire::CLIENT_HANDLE_TAG_MASK, wire::CLIENT_EVENT_TAG);
        assert_ne!(stream & !wire::CLIENT_HANDLE_TAG_MASK, event & !wire::CLIENT_HANDLE_TAG_MASK);
        assert!(!handles.destroy(Kind::Event, stream), "a stream is not an event");
        assert!(handles.destroy(Kind::Stream, stream));
        assert!(!handles.destroy(Kind::Stream, stream), "a second destroy waits for the worker's answer");
        handles.forget_device(1);
        assert!(!handles.destroy(Kind::Event, event), "a reset device's handles are gone");
        assert!(handles.is_destroyed_stream(stream), "a destroyed stream made here is known dead");
        let live = handles.create(Kind::Stream, 0).unwrap();
        assert!(!handles.is_destroyed_stream(live));
        assert!(!handles.is_destroyed_stream(live + 1), "a handle not made yet is not known dead");
        assert!(!handles.is_destroyed_stream(0x1234), "worker-chosen handles are dead only once destroyed");
        handles.note_destroyed_stream(0x1234);
        assert!(handles.is_destroyed_stream(0x1234));
        handles.forget_device(0);
        assert!(handles.is_destroyed_stream(live), "a reset device's streams are gone");
        let module = handles.fresh(wire::CLIENT_MODULE_TAG).unwrap();
        assert_eq!(module & wire::CLIENT_HANDLE_TAG_MASK, wire::CLIENT_MODULE_TAG);
        assert_ne!(module & !wire::CLIENT_HANDLE_TAG_MASK, live & !wire::CLIENT_HANDLE_TAG_MASK, "one counter for every kind");
        handles.next = COUNTER_LIMIT - 1;
        assert_eq!(handles.create(Kind::Stream, 0), None, "a spent counter falls back to the worker");
        assert_eq!(handles.fresh(wire::CLIENT_FUNCTION_TAG), None, "and for modules and functions too");
    }

    #[test]
    fn destroyed_events_made_here_are_known() {
        let mut handles = ClientHandles::default();
        let event = handles.create(Kind::Event, 0).unwrap();
        let stream = handles.create(Kind::Stream, 0).unwrap();
        assert!(!handles.is_destroyed_event(event), "a live event");
        assert!(!handles.is_destroyed_event(event + 2), "an event not made yet");
        assert!(handles.destroy(Kind::Event, event));
        assert!(handles.is_destroyed_event(event));
        assert!(handles.destroy(Kind::Stream, stream));
        assert!(!handles.is_destroyed_event(stream), "a stream is not an event");
        assert!(!handles.is_destroyed_event(0x1234), "a worker-chosen handle is the worker's to judge");
    }

    #[test]
    fn a_namespace_sets_the_handles_worker_bits() {
        let mut handles = ClientHandles::default();
        handles.set_namespace(2);
        let stream = handles.create(Kind::Stream, 2).unwrap();
        assert_eq!(stream, wire::CLIENT_STREAM_TAG | 2 << NAMESPACE_SHIFT | 1);
        handles.next = (1 << NAMESPACE_SHIFT) - 1;
        assert_eq!(handles.create(Kind::Event, 2), None, "a counter never spills into the next namespace");
    }
}
