//! One protocol session with a worker for the probe tools (`ping`, `rocminfo`,
//! `rocm_agent_enumerator`): connect (TCP or TLS, as the client library would), HELLO, answer
//! the challenge with HIP_REMOTE_TOKEN when the worker asks, then plain request/reply calls.

use crate::connect;
use proto_core::wire;
use proto_core::{Flags, Request, Response};
use transport_core::{FrameSink, FrameSource};

/// An open session.
pub struct WorkerSession {
    tx: Box<dyn FrameSink>,
    rx: Box<dyn FrameSource>,
    buf: Vec<u8>,
    next_id: u64,
    /// What the worker said in WELCOME.
    pub worker_name: String,
    pub backend: String,
    pub version: u16,
    pub session_id: u64,
}

impl WorkerSession {
    /// Opens a session with the worker at `addr` (`HOST:PORT` or `tls://HOST:PORT`).
    pub fn open(addr: &str, client_name: &str) -> Result<Self, String> {
        let (tx, rx) = connect(addr)?;
        let mut session =
            Self { tx, rx, buf: vec![0u8; 4096], next_id: 0, worker_name: String::new(), backend: String::new(), version: 0, session_id: 0 };
        let hello = Request::Hello(wire::Hello {
            min_version: proto_core::header::MIN_PROTOCOL_VERSION,
            max_version: proto_core::PROTOCOL_VERSION,
            features: 0,
            client_name: client_name.into(),
            resume_session: 0,
            auth_token: Default::default(),
        });
        let token = std::env::var("HIP_REMOTE_TOKEN").ok();
        let mut auth = None;
        let mut welcome = None;
        let said = session.call(&hello, &mut |r| {
            if let Response::Hello(w) = r {
                welcome = Some((w.worker_name.as_str().to_owned(), w.backend.as_str().to_owned(), w.version, w.session_id));
                if w.features & wire::features::AUTH_REQUIRED != 0 {
                    let cx = proto_core::auth::AuthContext {
                        nonce: w.auth_challenge.0,
                        session_id: w.session_id,
                        client_name,
                        version: w.version,
                        features: w.features,
                    };
                    auth = Some(token.as_deref().map(|t| proto_core::auth::auth_response(t.as_bytes(), &cx)));
                }
            }
        });
        // A protocol neither side shares: say both releases, as the client library does.
        said.map_err(|e| {
            client_core::version_mismatch(client_core::CallError::new(client_core::HipError::NOT_INITIALIZED, e), addr, client_name).message
        })?;
        let (worker_name, backend, version, session_id) = welcome.ok_or("the worker answered HELLO with something else")?;
        (session.worker_name, session.backend, session.version, session.session_id) = (worker_name, backend, version, session_id);
        match auth {
            None => {}
            Some(None) => return Err(format!("the worker at {addr} requires authentication: set HIP_REMOTE_TOKEN")),
            Some(Some(response)) => session.call(&Request::Authenticate(wire::Authenticate { response: response.as_slice().into() }), &mut |_| {})?,
        }
        Ok(session)
    }

    /// Sends `req` and hands its reply to `on`; an error reply becomes `Err`.
    pub fn call(&mut self, req: &Request<'_>, on: &mut dyn FnMut(Response<'_>)) -> Result<(), String> {
        self.next_id += 1;
        let f = req.encode_frame(&mut self.buf, Flags::empty(), self.next_id).map_err(|e| e.to_string())?;
        self.tx.send(&self.buf[..f.head_len], f.bulk).map_err(|e| e.to_string())?;
        let head = self.rx.recv_head().map_err(|e| e.to_string())?;
        let (header, control) = (head.header, head.control.to_vec());
        let mut bulk = vec![0u8; self.rx.bulk_remaining()];
        self.rx.recv_bulk(&mut bulk).map_err(|e| e.to_string())?;
        if header.flags.contains(Flags::ERROR) {
            let e = <wire::ErrorReply as proto_core::Message>::parse(&control, &[]).map_err(|e| e.to_string())?;
            return Err(format!("{:?}: {}", e.status, e.message.as_str()));
        }
        on(Response::parse(header.opcode, &control, &bulk).map_err(|e| e.to_string())?);
        Ok(())
    }

    /// Every device's properties, in the worker's order.
    pub fn devices(&mut self) -> Result<Vec<wire::DeviceProperties>, String> {
        let mut count = 0;
        self.call(&Request::GetDeviceCount(wire::Empty {}), &mut |r| {
            if let Response::GetDeviceCount(c) = r {
                count = c.count;
            }
        })?;
        let mut devices = Vec::with_capacity(count as usize);
        for device in 0..count {
            self.call(&Request::GetDeviceProperties(wire::DeviceRef { device }), &mut |r| {
                if let Response::GetDeviceProperties(p) = r {
                    devices.push(p);
                }
            })?;
        }
        if devices.len() != count as usize {
            return Err("the worker answered a device query with something else".into());
        }
        Ok(devices)
    }

    /// Ends the session politely.
    pub fn close(mut self) {
        let _ = self.call(&Request::Goodbye(wire::Empty {}), &mut |_| {});
    }
}
