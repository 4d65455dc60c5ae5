//! librdmacm: event channels, connection identifiers, and socket address conversion.

use super::{errno, os_err};
use rdma_sys::*;
use std::ffi::CStr;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::time::{Duration, Instant};

/// An RDMA CM event channel (its fd made non-blocking, so waiting is `poll` with a timeout).
pub(crate) struct EventChannel(pub(crate) *mut rdma_event_channel);

// SAFETY: librdmacm event channels may be used from any thread; we serialise use through
// `&self` methods that only read the fd and call thread-safe librdmacm functions.
unsafe impl Send for EventChannel {}
// SAFETY: as above.
unsafe impl Sync for EventChannel {}

impl EventChannel {
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: plain constructor; null is checked.
        let ch = unsafe { rdma_create_event_channel() };
        if ch.is_null() {
            return Err(os_err("rdma_create_event_channel"));
        }
        let ch = Self(ch);
        super::set_nonblocking(ch.fd())?;
        Ok(ch)
    }

    pub(crate) fn fd(&self) -> i32 {
        // SAFETY: `self.0` is a live channel.
        unsafe { (*self.0).fd }
    }

    /// The next event, waiting at most `timeout` (`None`: only what is already queued).
    pub(crate) fn next(&self, timeout: Option<Duration>) -> io::Result<Option<CmEvent>> {
        let until = timeout.map(|t| Instant::now() + t);
        loop {
            let mut ev = std::ptr::null_mut();
            // SAFETY: live channel, `ev` is an out-pointer; the fd is non-blocking.
            if unsafe { rdma_get_cm_event(self.0, &mut ev) } == 0 {
                return Ok(Some(CmEvent(ev)));
            }
            let e = errno();
            if e != libc::EAGAIN && e != libc::EWOULDBLOCK && e != libc::EINTR {
                return Err(io::Error::from_raw_os_error(e));
            }
            let left = match until {
                None => return Ok(None),
                Some(u) => u.saturating_duration_since(Instant::now()),
            };
            if left.is_zero() {
                return Ok(None);
            }
            super::poll_fds(&[self.fd()], left)?;
        }
    }

    /// Waits for an event of type `want` on `id`; any other event is an error naming it.
    pub(crate) fn expect(&self, want: rdma_cm_event_type::Type, timeout: Duration, what: &str) -> io::Result<CmEvent> {
        match self.next(Some(timeout))? {
            Some(ev) if ev.kind() == want && ev.status() == 0 => Ok(ev),
            Some(ev) => Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!("{what}: got {} (status {}) instead of {}", event_name(ev.kind()), ev.status(), event_name(want)),
            )),
            None => Err(io::Error::new(io::ErrorKind::TimedOut, format!("{what}: no {} within {timeout:?}", event_name(want)))),
        }
    }
}

impl Drop for EventChannel {
    fn drop(&mut self) {
        // SAFETY: every id of the channel is destroyed before (owners drop ids first).
        unsafe { rdma_destroy_event_channel(self.0) };
    }
}

/// A CM event, acknowledged on drop.
pub(crate) struct CmEvent(*mut rdma_cm_event);

impl CmEvent {
    pub(crate) fn kind(&self) -> rdma_cm_event_type::Type {
        // SAFETY: the event is live until acked in Drop.
        unsafe { (*self.0).event }
    }

    pub(crate) fn status(&self) -> i32 {
        // SAFETY: as above.
        unsafe { (*self.0).status }
    }

    /// The id the event is about (for CONNECT_REQUEST: the new connection's id).
    pub(crate) fn id(&self) -> *mut rdma_cm_id {
        // SAFETY: as above.
        unsafe { (*self.0).id }
    }

    /// The connect request's `(responder_resources, initiator_depth)`: the RDMA READs the
    /// peer accepts and issues at once.
    pub(crate) fn rd_atoms(&self) -> (u8, u8) {
        // SAFETY: for connection events `param.conn` is the active union member.
        unsafe {
            let conn = &(*self.0).param.conn;
            (conn.responder_resources, conn.initiator_depth)
        }
    }

    /// A copy of the connection private data (valid only until the ack).
    pub(crate) fn private_data(&self) -> Vec<u8> {
        // SAFETY: for connection events `param.conn` is the active union member; the data
        // pointer is valid for `private_data_len` bytes until the event is acknowledged.
        unsafe {
            let conn = &(*self.0).param.conn;
            if conn.private_data.is_null() {
                return Vec::new();
            }
            std::slice::from_raw_parts(conn.private_data.cast::<u8>(), conn.private_data_len as usize).to_vec()
        }
    }
}

impl Drop for CmEvent {
    fn drop(&mut self) {
        // SAFETY: acknowledged exactly once.
        unsafe { rdma_ack_cm_event(self.0) };
    }
}

/// librdmacm's name for an event type.
pub(crate) fn event_name(kind: rdma_cm_event_type::Type) -> String {
    // SAFETY: rdma_event_str returns a static string for every value.
    unsafe { CStr::from_ptr(rdma_event_str(kind)).to_string_lossy().into_owned() }
}

/// `SocketAddr` as a `sockaddr_storage` for librdmacm.
pub(crate) fn to_sockaddr(sa: &SocketAddr) -> libc::sockaddr_storage {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match sa {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in.
            let sin = unsafe { &mut *(&mut ss as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above for sockaddr_in6.
            let sin6 = unsafe { &mut *(&mut ss as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            sin6.sin6_flowinfo = a.flowinfo();
            sin6.sin6_scope_id = a.scope_id();
        }
    }
    ss
}

/// A `sockaddr` from librdmacm as a `SocketAddr`.
///
/// # Safety
/// `sa` must point to a valid `sockaddr_in` or `sockaddr_in6` (by its family).
pub(crate) unsafe fn from_sockaddr(sa: *const libc::sockaddr) -> Option<SocketAddr> {
    // SAFETY: the caller guarantees a valid sockaddr of the family it names.
    unsafe {
        match (*sa).sa_family as i32 {
            libc::AF_INET => {
                let sin = &*sa.cast::<libc::sockaddr_in>();
                let ip = Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
                Some(SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(sin.sin_port))))
            }
            libc::AF_INET6 => {
                let sin6 = &*sa.cast::<libc::sockaddr_in6>();
                let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                Some(SocketAddr::V6(SocketAddrV6::new(ip, u16::from_be(sin6.sin6_port), sin6.sin6_flowinfo, sin6.sin6_scope_id)))
            }
            _ => None,
        }
    }
}

/// Resolves "host:port" (or "[v6]:port") to socket addresses.
pub(crate) fn resolve(addr: &str) -> io::Result<Vec<SocketAddr>> {
    use std::net::ToSocketAddrs;
    let addrs: Vec<SocketAddr> = addr.to_socket_addrs()?.collect();
    if addrs.is_empty() {
        return Err(io::Error::new(io::ErrorKind::NotFound, format!("{addr}: no address")));
    }
    Ok(addrs)
}

/// Whether `ip` is unspecified (0.0.0.0 / ::), for log messages.
pub(crate) fn is_any(ip: &IpAddr) -> bool {
    ip.is_unspecified()
}
