//! Synchronising calls: what HIP reports, and makes visible, when the device has caught up.

use crate::conn::Conn;
use crate::remote::with_conn;
use client_core::CallError;

/// Runs a synchronous call and reports with it the deferred failure of an earlier
/// fire-and-forget request, as HIP's synchronising calls do. The reader spins for the device
/// unless the current device is set to `hipDeviceScheduleBlockingSync`.
pub fn call_sync<R>(f: impl FnOnce(&mut Conn) -> Result<R, CallError>) -> Result<(), CallError> {
    let spin = !super::devices::blocking_sync(super::devices::current_device());
    with_conn(|c| {
        c.waiting_for_device(spin, f)?;
        match c.take_deferred() {
            Some(code) => Err(CallError::new(code, "an earlier asynchronous operation failed on the worker")),
            // Device work that finished may have written managed memory: the CPU sees it now.
            None => c.after_sync(),
        }
    })
}
