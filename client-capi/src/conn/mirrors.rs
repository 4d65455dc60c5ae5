//! The driver's half of managed memory's coherence: reading and writing the application's
//! mirrored pages, and the pushes and pulls the session's book of mirrors
//! (`client_core::managed`) calls for. Semantics: docs/MANAGED_MEMORY.md.
//!
//! Dirty pages are found by comparing hashes (no page protection: no fault handler that could
//! need the connection lock its thread holds, no `EFAULT` from `read()`/`write()` into
//! protected pages, and the same code on every platform).

use super::Conn;
use crate::abi::HipError;
use client_core::managed::{ManagedMirrors, Mirror};
use client_core::CallError;
use proto_core::wire::{self, page_hash, MANAGED_PAGE, MAX_PAGES_PER_FRAME};
use proto_core::{calls, Bulk, Caller, Calls, List, Opcode};
use zerocopy::byteorder::little_endian::U32;

const PAGE: usize = MANAGED_PAGE as usize;

/// Page `i` of `mirror` as it travels: the live bytes, with zeros outside the application's part.
pub(crate) fn read_page(mirror: &Mirror, i: usize, out: &mut [u8; PAGE]) {
    let (start, end) = mirror.owned_part(i);
    out.fill(0);
    // SAFETY: `[base + i * PAGE + start, + end)` lies inside memory this range mirrors,
    // which stays mapped while it is in the book (the application's registered buffer,
    // or our own mapping). The application may not write it concurrently with a HIP call
    // that synchronises it (HIP's rule for managed memory without concurrent access).
    let live = unsafe { std::slice::from_raw_parts((mirror.base + i * PAGE + start) as *const u8, end - start) };
    out[start..end].copy_from_slice(live);
}

/// Writes the application's part of page `i` of `mirror` from `data` (a whole page).
pub(crate) fn write_page(mirror: &Mirror, i: usize, data: &[u8]) {
    let (start, end) = mirror.owned_part(i);
    // SAFETY: as in `read_page`; the bytes are the application's and it is not
    // accessing them (it is inside a synchronising HIP call).
    let live = unsafe { std::slice::from_raw_parts_mut((mirror.base + i * PAGE + start) as *mut u8, end - start) };
    live.copy_from_slice(&data[start..end]);
}

impl Conn {
    /// Managed and device-visible host memory mirrored on this connection's session.
    pub fn mirrors(&mut self) -> &mut ManagedMirrors {
        self.session.managed()
    }

    /// Before a request of `opcode` is submitted: pushes the CPU's changes first when the
    /// session's book says the request's work may read them.
    pub(super) fn before_request(&mut self, opcode: Opcode) -> Result<(), CallError> {
        if self.session.managed().before_request(opcode) {
            self.push_mirrors()?;
        }
        Ok(())
    }

    /// After a synchronising call succeeded: brings back the device's changes if device work
    /// may have written mirrored memory since the last device-wide synchronisation.
    pub(crate) fn after_sync(&mut self) -> Result<(), CallError> {
        let Some(due) = self.session.managed().pull_due() else { return Ok(()) };
        self.with_book(|conn, book| {
            let mut pulled = 0;
            let result = book.iter_mut().try_for_each(|mirror| conn.pull(mirror, &mut pulled));
            book.note_pulled_bytes(pulled);
            result?;
            book.pulled(due);
            Ok(())
        })
    }

    /// Pushes every page whose contents changed since both sides last agreed on it.
    pub fn push_mirrors(&mut self) -> Result<(), CallError> {
        self.with_book(|conn, book| {
            let mut page = [0u8; PAGE];
            let (mut indices, mut data): (Vec<U32>, Vec<u8>) = (Vec::new(), Vec::new());
            let mut pushed = 0;
            let result = book.iter_mut().try_for_each(|mirror| {
                for i in 0..mirror.pages() {
                    read_page(mirror, i, &mut page);
                    if !mirror.note_local(i, page_hash(&page)) {
                        continue;
                    }
                    indices.push(U32::new(i as u32));
                    data.extend_from_slice(&page);
                    if indices.len() == MAX_PAGES_PER_FRAME {
                        conn.send_push(mirror.device_base, &mut indices, &mut data, &mut pushed)?;
                    }
                }
                if !indices.is_empty() {
                    conn.send_push(mirror.device_base, &mut indices, &mut data, &mut pushed)?;
                }
                Ok(())
            });
            book.note_pushed_bytes(pushed);
            result
        })
    }

    /// Runs `f` with the session's book taken out of it: the managed requests `f` makes see
    /// an empty book (as they would anyway: managed traffic never triggers the engine), and
    /// the book comes back whatever `f` answers.
    fn with_book(&mut self, f: impl FnOnce(&mut Self, &mut ManagedMirrors) -> Result<(), CallError>) -> Result<(), CallError> {
        let mut book = std::mem::take(self.session.managed());
        let result = f(self, &mut book);
        *self.session.managed() = book;
        result
    }

    fn send_push(&mut self, device_base: u64, indices: &mut Vec<U32>, data: &mut Vec<u8>, pushed: &mut usize) -> Result<(), CallError> {
        *pushed += data.len();
        self.post::<calls::ManagedPush>(wire::ManagedPush { ptr: device_base, pages: List(indices), data: Bulk(data) })?;
        indices.clear();
        data.clear();
        Ok(())
    }

    fn pull(&mut self, mirror: &mut Mirror, pulled: &mut usize) -> Result<(), CallError> {
        let mut from = 0u32;
        while (from as usize) < mirror.pages() {
            let reply = self.managed_pull(wire::ManagedPull { ptr: mirror.device_base, from })?;
            let (pages, data) = (reply.pages.0, reply.data.0);
            if data.len() != pages.len() * PAGE || reply.next <= from {
                return Err(CallError::new(HipError::UNKNOWN, "malformed managed pull reply"));
            }
            for (index, bytes) in pages.iter().zip(data.chunks_exact(PAGE)) {
                let i = index.get() as usize;
                if i >= mirror.pages() {
                    return Err(CallError::new(HipError::UNKNOWN, "managed pull reply names a page outside the range"));
                }
                write_page(mirror, i, bytes);
                mirror.note_pulled(i, page_hash(bytes));
            }
            *pulled += data.len();
            from = reply.next;
        }
        Ok(())
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use client_core::managed::MirrorKind;

    #[test]
    fn unaligned_registration_travels_only_its_own_bytes() {
        let mut buffer = vec![0xAAu8; 3 * PAGE];
        let base = buffer.as_mut_ptr() as usize;
        // The application's part: from 100 bytes into page 0 to 50 bytes into page 2.
        let mirror = Mirror::new(MirrorKind::Registered, base, 3 * PAGE, (base + 100, base + 2 * PAGE + 50), 0x1000, 0, 0);
        let mut page = [0u8; PAGE];
        read_page(&mirror, 0, &mut page);
        assert!(page[..100].iter().all(|&b| b == 0) && page[100..].iter().all(|&b| b == 0xAA));
        read_page(&mirror, 2, &mut page);
        assert!(page[..50].iter().all(|&b| b == 0xAA) && page[50..].iter().all(|&b| b == 0));
        write_page(&mirror, 0, &[0x11; PAGE]);
        assert!(buffer[..100].iter().all(|&b| b == 0xAA) && buffer[100..PAGE].iter().all(|&b| b == 0x11));
        assert_eq!(mirror.device_address(base + 100), 0x1000 + 100);
    }
}
