//! Managed family handlers (see `proto_core::opcode`, family `Managed`, and
//! docs/MANAGED_MEMORY.md): the worker's half of the coherence engine.
//!
//! For each managed or mapped allocation the session keeps the hash of every page as the
//! client last saw it. A PUSH writes the client's changed pages and records their hashes; a
//! PULL reads the device memory, and answers the pages whose hash differs (recording the new
//! hashes), so only what changed crosses the connection, in either direction.

use super::{CallCx, Failure, Session};
use crate::backend::{DevicePtr, MemsetPattern};
use proto_core::opcode::ManagedHandler;
use proto_core::wire::{self, page_hash, MANAGED_PAGE, MAX_PAGES_PER_FRAME};
use proto_core::{Bulk, List, Outcome, Status};
use std::collections::HashMap;
use zerocopy::byteorder::little_endian::U32;

/// Most managed and mapped allocations one session may hold.
pub const MAX_MANAGED_RANGES_PER_SESSION: usize = 4096;

/// Device bytes a PULL reads at a time while comparing (bounds the staging on GPU backends).
const PULL_READ_CHUNK: u64 = 1 << 20;

/// The session's managed and mapped allocations.
#[derive(Debug, Default)]
pub(super) struct ManagedState {
    /// Allocation address → hash of each page as the client last saw it.
    ranges: HashMap<u64, Vec<u64>>,
    /// The latest PULL's answer, borrowed by its reply.
    reply_pages: Vec<U32>,
    reply_data: Vec<u8>,
}

fn invalid(message: String) -> Failure {
    Failure::new(Status::INVALID_VALUE, message)
}

impl Session {
    fn managed_range(&self, ptr: u64, what: &str) -> Result<&Vec<u64>, Failure> {
        self.managed.ranges.get(&ptr).ok_or_else(|| invalid(format!("{what}({ptr:#x}): not a managed or mapped allocation of this session")))
    }
}

impl ManagedHandler for Session {
    fn managed_alloc(&mut self, _cx: &mut CallCx, req: wire::ManagedAlloc) -> Result<wire::ManagedAllocation, Failure> {
        let dev = self.device(req.device)?;
        if req.size == 0 || !req.size.is_multiple_of(MANAGED_PAGE) {
            return Err(invalid(format!("managed allocation of {} bytes is not a positive number of {MANAGED_PAGE}-byte pages", req.size)));
        }
        let pages = usize::try_from(req.size / MANAGED_PAGE)
            .ok()
            .filter(|&n| n <= u32::MAX as usize)
            .ok_or_else(|| Failure::new(Status::OUT_OF_MEMORY, format!("managed allocation of {} bytes has too many pages", req.size)))?;
        // Ranges a device reset freed with the rest of the session's memory go first.
        let allocations = &self.allocations;
        self.managed.ranges.retain(|ptr, _| allocations.get(*ptr).is_some());
        if self.managed.ranges.len() >= MAX_MANAGED_RANGES_PER_SESSION {
            return Err(Failure::new(
                Status::OUT_OF_MEMORY,
                format!("session holds the maximum of {MAX_MANAGED_RANGES_PER_SESSION} managed and mapped allocations"),
            ));
        }
        self.check_allocation_capacity(req.size)?;
        let ptr = match req.twin {
            wire::TWIN_MANAGED => self.backend.malloc_managed(dev, req.size, req.hint)?,
            wire::TWIN_DEVICE => self.backend.malloc_device_twin(dev, req.size, req.hint)?,
            other => return Err(invalid(format!("managed allocation with device side {other} (0: managed, 1: device memory)"))),
        };
        // Both sides start from zeroed pages (the client's fresh mapping is zero too).
        let stream = self.stream(0, dev)?;
        let zeroed = self.backend.memset(stream, ptr, MemsetPattern::U8(0), req.size).and_then(|()| match stream {
            Some(s) => self.backend.stream_synchronize(s),
            None => Ok(()),
        });
        if let Err(e) = zeroed {
            let _ = self.backend.free(ptr);
            return Err(e.into());
        }
        self.record_allocation(ptr, req.size, dev);
        let zero_hash = page_hash(&[0; MANAGED_PAGE as usize]);
        self.managed.ranges.insert(ptr.0, vec![zero_hash; pages]);
        Ok(wire::ManagedAllocation { ptr: ptr.0 })
    }

    fn managed_free(&mut self, _cx: &mut CallCx, req: wire::ManagedFree) -> Result<wire::Empty, Failure> {
        self.managed_range(req.ptr, "hipFree")?;
        self.managed.ranges.remove(&req.ptr);
        self.allocations.remove(req.ptr);
        // As hipFree: the session's queued work finishes before the memory goes.
        let _ = self.synchronize_session(None);
        self.forget_allocation(req.ptr);
        self.backend.free(DevicePtr(req.ptr))?;
        Ok(wire::Empty {})
    }

    fn managed_push(&mut self, _cx: &mut CallCx, req: wire::ManagedPush<'_>) -> Result<wire::Empty, Failure> {
        // The last PULL's answer has been sent: its buffer (up to 16 MiB) is not kept.
        self.managed.reply_data = Vec::new();
        let page_count = self.managed_range(req.ptr, "managed push")?.len();
        let pages = req.pages.0;
        let data = req.data.0;
        if data.len() as u64 != pages.len() as u64 * MANAGED_PAGE {
            return Err(invalid(format!("managed push of {} pages carries {} bytes", pages.len(), data.len())));
        }
        if pages.windows(2).any(|w| w[0].get() >= w[1].get()) || pages.last().is_some_and(|p| p.get() as usize >= page_count) {
            return Err(invalid(format!("managed push pages are not ascending pages of the {page_count}-page allocation")));
        }
        // Not ordered behind the session's blocking streams as legacy null-stream work is: a
        // stream may be waiting for exactly these bytes (hipStreamWaitValue* on mapped or
        // signal memory, released by a CPU write), and the copy below is synchronous.
        let stream = Some(self.null_stream(self.device_of(req.ptr))?);
        // Consecutive pages go to the device as one copy.
        let mut i = 0;
        while i < pages.len() {
            let mut run = 1;
            while i + run < pages.len() && pages[i + run].get() == pages[i].get() + run as u32 {
                run += 1;
            }
            let first = u64::from(pages[i].get());
            let bytes = &data[i * MANAGED_PAGE as usize..(i + run) * MANAGED_PAGE as usize];
            self.backend.memcpy_htod_sync(stream, DevicePtr(req.ptr + first * MANAGED_PAGE), bytes)?;
            i += run;
        }
        let hashes = self.managed.ranges.get_mut(&req.ptr).expect("checked above");
        for (page, bytes) in pages.iter().zip(data.chunks_exact(MANAGED_PAGE as usize)) {
            hashes[page.get() as usize] = page_hash(bytes);
        }
        Ok(wire::Empty {})
    }

    fn managed_pull<'a>(&'a mut self, _cx: &mut CallCx, req: wire::ManagedPull) -> Result<Outcome<wire::ManagedPages<'a>>, Failure> {
        let page_count = self.managed_range(req.ptr, "managed pull")?.len();
        let from = req.from as usize;
        if from > page_count {
            return Err(invalid(format!("managed pull from page {from} of a {page_count}-page allocation")));
        }
        // A PULL follows a synchronising call, which has waited for the work it covers; like a
        // PUSH it is not ordered behind the session's blocking streams, one of which may be
        // held by a wait that only a later CPU write (pushed by a later request) releases.
        let stream = Some(self.null_stream(self.device_of(req.ptr))?);
        let mut hashes = std::mem::take(self.managed.ranges.get_mut(&req.ptr).expect("checked above"));
        let (mut pages, mut data) = (std::mem::take(&mut self.managed.reply_pages), std::mem::take(&mut self.managed.reply_data));
        pages.clear();
        data.clear();
        let mut next = from;
        let mut result = Ok(());
        while next < page_count && pages.len() < MAX_PAGES_PER_FRAME {
            let chunk_pages = (PULL_READ_CHUNK / MANAGED_PAGE).min((page_count - next) as u64).min((MAX_PAGES_PER_FRAME - pages.len()) as u64);
            let first = next;
            let ptr = DevicePtr(req.ptr + first as u64 * MANAGED_PAGE);
            result = self.backend.with_device_bytes(stream, ptr, chunk_pages * MANAGED_PAGE, &mut |bytes| {
                for (i, page) in bytes.chunks_exact(MANAGED_PAGE as usize).enumerate() {
                    let hash = page_hash(page);
                    if hash != hashes[first + i] {
                        hashes[first + i] = hash;
                        pages.push(U32::new((first + i) as u32));
                        data.extend_from_slice(page);
                    }
                }
            });
            if result.is_err() {
                break;
            }
            next += chunk_pages as usize;
        }
        *self.managed.ranges.get_mut(&req.ptr).expect("checked above") = hashes;
        self.managed.reply_pages = pages;
        self.managed.reply_data = data;
        result?;
        Ok(Outcome::Reply(wire::ManagedPages { pages: List(&self.managed.reply_pages), next: next as u32, data: Bulk(&self.managed.reply_data) }))
    }
}
