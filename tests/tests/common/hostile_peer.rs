//! A peer that writes frames by hand: what the real client can never send (malformed control
//! parts, undefined flags, a header of another protocol version, requests flagged as responses,
//! announced lengths it never delivers, ids of its choosing). Everything a well-formed client
//! would send goes through [`super::SessionDriver`] and the real client session instead.

use proto_core::{Flags, FrameHeader, Request};
use transport_core::{FrameSink, FrameSource, TransportError};

use super::{Reply, TestWorker};

/// One connection, frames in and out as bytes; no session, no request ids of its own.
pub struct HostilePeer {
    pub sink: Box<dyn FrameSink>,
    pub source: Box<dyn FrameSource>,
    buf: Vec<u8>,
}

impl HostilePeer {
    pub fn connect(worker: &TestWorker) -> Self {
        let (sink, source) = worker.connect();
        Self::over(sink, source)
    }

    pub fn over(sink: Box<dyn FrameSink>, source: Box<dyn FrameSource>) -> Self {
        Self { sink, source, buf: vec![0; 1 << 16] }
    }

    /// Encodes `req` with any `flags` under request id `id` and sends it.
    pub fn send_frame(&mut self, req: &Request<'_>, flags: Flags, id: u64) -> u64 {
        let frame = loop {
            match req.encode_frame(&mut self.buf, flags, id) {
                Ok(frame) => break frame,
                Err(proto_core::EncodeError::BufferTooSmall { required }) => self.buf.resize(required, 0),
                Err(e) => panic!("encode {:?}: {e}", req.opcode()),
            }
        };
        self.sink.send(&self.buf[..frame.head_len], frame.bulk).expect("send");
        id
    }

    /// Sends bytes exactly as given (a hand-made frame).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.sink.send(bytes, &[]).expect("send raw");
    }

    /// The next frame, read without any client's interpretation.
    pub fn try_recv(&mut self) -> Result<Reply, TransportError> {
        let head = self.source.recv_head()?;
        let header = head.header;
        let control = head.control.to_vec();
        let mut bulk = vec![0; header.bulk_len as usize];
        self.source.recv_bulk(&mut bulk)?;
        Ok(Reply { header, control, bulk, outcome: None })
    }

    pub fn recv(&mut self) -> Reply {
        self.try_recv().expect("receive a frame")
    }

    /// The worker has closed the connection: the next read ends.
    pub fn expect_closed(&mut self) {
        match self.try_recv() {
            Err(TransportError::Closed) | Err(TransportError::Io(_)) => {}
            Ok(frame) => panic!("expected the worker to close the connection, got {:?}", frame.header),
            Err(e) => panic!("expected a closed connection, got {e}"),
        }
    }
}

/// A hand-made header (lengths as given; `emit` computes `payload_len = control + bulk`).
pub fn raw_header(opcode: u16, flags: Flags, request_id: u64, control_len: u32, bulk_len: u32) -> [u8; 32] {
    FrameHeader { version: proto_core::PROTOCOL_VERSION, opcode, flags, credits: 0, request_id, control_len, bulk_len, aux: 0 }.emit()
}
