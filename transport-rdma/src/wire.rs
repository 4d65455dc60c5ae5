//! What the RDMA transport itself puts on the wire: the 32-bit immediate data of every SEND
//! and the private data exchanged by librdmacm's connect/accept.
//!
//! ```text
//! immediate data (host order u32, big-endian on the wire as verbs requires)
//!  31        19 18  16 15      12 11                0
//!  +-----------+------+----------+-------------------+
//!  |  reserved | kind | ctrl     |  data credits     |
//!  +-----------+------+----------+-------------------+
//!       0       0 data   control and data receive slots the sender re-posted
//!               1 update (no payload: credits only)     since its previous SEND
//!               2 fin    (no payload: clean end of the stream)
//!               3 remote (24-byte RemoteDesc: a bulk section to RDMA-READ, data credit)
//!               4 done   (no payload: the last remote bulk was read or skipped)
//!               5 landing (32-byte LandingDesc: where the reply to a request may be
//!                         RDMA-WRITten; data credit, not part of the stream)
//!
//! private data (little endian, 16 bytes; REQ carries the client's, REP the worker's)
//!  0      4        6       8            12           16
//!  +------+--------+-------+------------+------------+
//!  | HRDM | version| flags | recv_depth |  slot_len  |
//!  +------+--------+-------+------------+------------+
//! ```

use crate::credit::Grant;
use zerocopy::byteorder::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// Why a transport-level message was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Immediate data with reserved bits or an unknown kind.
    #[error("invalid immediate data {0:#010x}")]
    BadImm(u32),
    /// A control segment (update, fin) that carried payload bytes.
    #[error("control segment carries {0} payload bytes")]
    PayloadOnControl(u32),
    /// Private data of the wrong size or magic.
    #[error("connection parameters: {0}")]
    BadParams(&'static str),
}

/// What a received segment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegKind {
    /// Bytes of the frame stream (never empty).
    Data,
    /// Credits only.
    Update,
    /// The sender closes the stream; nothing follows.
    Fin,
    /// A bulk section announced as remote: the payload is a [`RemoteDesc`] (one-sided path;
    /// the receiver RDMA-READs the bytes). Spends a data credit, keeps stream order.
    Remote,
    /// The receiver finished with the sender's last [`SegKind::Remote`] bulk (read or
    /// skipped); the sender may release its buffer. No payload, a control credit.
    Done,
    /// A [`LandingDesc`]: the peer may RDMA-WRITE the bulk of its reply to one request into
    /// this buffer. Processed on arrival, outside the stream (it always precedes the request).
    Landing,
}

impl SegKind {
    const fn code(self) -> u32 {
        match self {
            SegKind::Data => 0,
            SegKind::Update => 1,
            SegKind::Fin => 2,
            SegKind::Remote => 3,
            SegKind::Done => 4,
            SegKind::Landing => 5,
        }
    }
}

/// Decoded immediate data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Imm {
    /// Segment kind.
    pub kind: SegKind,
    /// Receive credits granted to the receiver of this SEND.
    pub grant: Grant,
}

/// Largest data grant that fits the immediate data.
pub const MAX_DATA_GRANT: u16 = 0xfff;
/// Largest control grant that fits the immediate data.
pub const MAX_CTRL_GRANT: u16 = 0xf;

const _: () = assert!(crate::config::MAX_RING_DEPTH <= MAX_DATA_GRANT as u32);
const _: () = assert!(crate::credit::CONTROL_CREDITS <= MAX_CTRL_GRANT as u32);

impl Imm {
    /// The 32-bit value (host order; verbs wants it big-endian, the fabric converts).
    /// Grants are bounded by the rings (checked at compile time above).
    pub const fn encode(self) -> u32 {
        (self.kind.code() << 16) | ((self.grant.ctrl as u32 & 0xf) << 12) | (self.grant.data as u32 & 0xfff)
    }

    /// Parses an immediate value together with the received byte count.
    pub fn decode(raw: u32, byte_len: u32) -> Result<Self, WireError> {
        let kind = match raw >> 16 {
            0 => SegKind::Data,
            1 => SegKind::Update,
            2 => SegKind::Fin,
            3 => SegKind::Remote,
            4 => SegKind::Done,
            5 => SegKind::Landing,
            _ => return Err(WireError::BadImm(raw)),
        };
        match kind {
            SegKind::Data if byte_len == 0 => return Err(WireError::BadImm(raw)),
            SegKind::Remote if byte_len as usize != REMOTE_DESC_LEN => return Err(WireError::BadImm(raw)),
            SegKind::Landing if byte_len as usize != LANDING_DESC_LEN => return Err(WireError::BadImm(raw)),
            SegKind::Update | SegKind::Fin | SegKind::Done if byte_len != 0 => return Err(WireError::PayloadOnControl(byte_len)),
            _ => {}
        }
        Ok(Self { kind, grant: Grant { data: (raw & 0xfff) as u16, ctrl: ((raw >> 12) & 0xf) as u16 } })
    }
}

/// Size of a [`RemoteDesc`] on the wire.
pub const REMOTE_DESC_LEN: usize = 24;

/// How a bulk section announced by a [`RemoteDesc`] reaches the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteHow {
    /// The receiver RDMA-READs it from `addr`/`rkey` and answers `done`.
    Read,
    /// The sender already RDMA-WROTE it into the receiver's landing for this reply (`addr`
    /// and `rkey` are 0); nothing is answered.
    Written,
}

/// A bulk section that does not travel through the rings (little endian: addr u64, len u64,
/// rkey u32, how u32 — 0 read, 1 written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteDesc {
    /// Address of the sender's registered buffer.
    pub addr: u64,
    /// Length (equals the frame's bulk length).
    pub len: u64,
    /// Remote key of the registration.
    pub rkey: u32,
    /// Read by the receiver, or already written into its landing.
    pub how: RemoteHow,
}

impl RemoteDesc {
    /// Wire form.
    pub fn emit(&self) -> [u8; REMOTE_DESC_LEN] {
        let mut b = [0u8; REMOTE_DESC_LEN];
        b[0..8].copy_from_slice(&self.addr.to_le_bytes());
        b[8..16].copy_from_slice(&self.len.to_le_bytes());
        b[16..20].copy_from_slice(&self.rkey.to_le_bytes());
        let how: u32 = match self.how {
            RemoteHow::Read => 0,
            RemoteHow::Written => 1,
        };
        b[20..24].copy_from_slice(&how.to_le_bytes());
        b
    }

    /// Parses the wire form.
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        if b.len() != REMOTE_DESC_LEN {
            return Err(WireError::BadParams("remote bulk descriptor"));
        }
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let how = match u32_at(20) {
            0 => RemoteHow::Read,
            1 => RemoteHow::Written,
            _ => return Err(WireError::BadParams("remote bulk descriptor: unknown kind")),
        };
        Ok(Self { addr: u64_at(0), len: u64_at(8), rkey: u32_at(16), how })
    }
}

/// Bytes of a [`LandingDesc`].
pub const LANDING_DESC_LEN: usize = 32;

/// A landing offered by the client: the reply to request `request_id` may have its bulk
/// RDMA-WRITten into `[addr, addr + len)` (little endian: addr u64, len u64, rkey u32,
/// reserved u32 = 0, request_id u64).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LandingDesc {
    /// Address of the client's registered buffer.
    pub addr: u64,
    /// Its length: the reply's bulk length the client expects.
    pub len: u64,
    /// Remote key (remote write access).
    pub rkey: u32,
    /// The request whose reply lands there.
    pub request_id: u64,
}

impl LandingDesc {
    /// The wire bytes.
    pub fn emit(&self) -> [u8; LANDING_DESC_LEN] {
        let mut b = [0u8; LANDING_DESC_LEN];
        b[0..8].copy_from_slice(&self.addr.to_le_bytes());
        b[8..16].copy_from_slice(&self.len.to_le_bytes());
        b[16..20].copy_from_slice(&self.rkey.to_le_bytes());
        b[24..32].copy_from_slice(&self.request_id.to_le_bytes());
        b
    }

    /// Parses the wire bytes (exactly [`LANDING_DESC_LEN`], reserved bytes zero).
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        if b.len() != LANDING_DESC_LEN || b[20..24] != [0; 4] {
            return Err(WireError::BadParams("landing descriptor"));
        }
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Ok(Self { addr: u64_at(0), len: u64_at(8), rkey: u32::from_le_bytes(b[16..20].try_into().expect("4 bytes")), request_id: u64_at(24) })
    }
}

/// [`RawParams::flags`] bit: this side accepts remote bulk sections (it RDMA-READs them).
pub const FLAG_ONE_SIDED: u16 = 1;
/// [`RawParams::flags`] bit: this side takes part in landings (a client offers them, a
/// worker RDMA-WRITEs replies into them). Both bits must be set on both sides.
pub const FLAG_LANDINGS: u16 = 2;

/// Magic of [`ConnParams`].
pub const PARAMS_MAGIC: [u8; 4] = *b"HRDM";
/// Version of the RDMA transport's own wire use.
pub const TRANSPORT_VERSION: u16 = 1;
/// Size of [`ConnParams`] on the wire (librdmacm allows 56 bytes in a REQ).
pub const PARAMS_LEN: usize = 16;

/// The private data's layout.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct RawParams {
    /// [`PARAMS_MAGIC`].
    pub magic: [u8; 4],
    /// [`TRANSPORT_VERSION`].
    pub version: U16,
    /// Reserved, zero.
    pub flags: U16,
    /// Receive slots the sender posted: the peer's initial credits.
    pub recv_depth: U32,
    /// Bytes per receive slot: the peer's largest SEND.
    pub slot_len: U32,
}

const _: () = assert!(core::mem::size_of::<RawParams>() == PARAMS_LEN);

/// One side's receive ring, announced at connect/accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnParams {
    /// Receive slots posted (initial credits of the peer).
    pub recv_depth: u32,
    /// Bytes per slot.
    pub slot_len: u32,
    /// [`FLAG_ONE_SIDED`] and future capability bits (unknown bits are ignored).
    pub flags: u16,
}

impl ConnParams {
    /// Parses private data (longer buffers are fine: IB CM pads private data with zeros).
    pub fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let raw = bytes.get(..PARAMS_LEN).and_then(|b| RawParams::ref_from_bytes(b).ok()).ok_or(WireError::BadParams("too short"))?;
        if raw.magic != PARAMS_MAGIC {
            return Err(WireError::BadParams("bad magic (not a hip-remote RDMA peer)"));
        }
        if raw.version.get() != TRANSPORT_VERSION {
            return Err(WireError::BadParams("unsupported transport version"));
        }
        let (recv_depth, slot_len) = (raw.recv_depth.get(), raw.slot_len.get());
        if !(crate::config::MIN_RING_DEPTH..=crate::config::MAX_RING_DEPTH).contains(&recv_depth) {
            return Err(WireError::BadParams("recv_depth out of range"));
        }
        if !(crate::config::MIN_SLOT_LEN..=crate::config::MAX_SLOT_LEN).contains(&(slot_len as usize)) {
            return Err(WireError::BadParams("slot_len out of range"));
        }
        Ok(Self { recv_depth, slot_len, flags: raw.flags.get() })
    }

    /// Wire form (mirror of [`parse`](Self::parse)).
    pub fn emit(&self) -> [u8; PARAMS_LEN] {
        let raw = RawParams {
            magic: PARAMS_MAGIC,
            version: U16::new(TRANSPORT_VERSION),
            flags: U16::new(self.flags),
            recv_depth: U32::new(self.recv_depth),
            slot_len: U32::new(self.slot_len),
        };
        let mut out = [0u8; PARAMS_LEN];
        out.copy_from_slice(raw.as_bytes());
        out
    }
}

#[cfg(test)]
mod test {
    use super::*;

    static PARAMS_BYTES: [u8; PARAMS_LEN] = [b'H', b'R', b'D', b'M', 1, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 1, 0];

    #[test]
    fn test_params_parse_emit() {
        let p = ConnParams { recv_depth: 64, slot_len: 64 << 10, flags: 0 };
        assert_eq!(ConnParams::parse(&PARAMS_BYTES), Ok(p));
        assert_eq!(p.emit(), PARAMS_BYTES);
        // IB CM pads private data: trailing zeros are fine.
        let mut padded = [0u8; 56];
        padded[..PARAMS_LEN].copy_from_slice(&PARAMS_BYTES);
        assert_eq!(ConnParams::parse(&padded), Ok(p));
    }

    #[test]
    fn test_params_refused() {
        assert!(ConnParams::parse(&PARAMS_BYTES[..15]).is_err());
        let mut b = PARAMS_BYTES;
        b[0] = b'X';
        assert!(ConnParams::parse(&b).is_err());
        let mut b = PARAMS_BYTES;
        b[4] = 2;
        assert!(ConnParams::parse(&b).is_err());
        let mut b = PARAMS_BYTES;
        b[8] = 1; // depth 1 < MIN_RING_DEPTH
        assert!(ConnParams::parse(&b).is_err());
        let mut b = PARAMS_BYTES;
        b[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(ConnParams::parse(&b).is_err());
    }

    #[test]
    fn test_imm_roundtrip_and_refusals() {
        for kind in [SegKind::Data, SegKind::Update, SegKind::Fin, SegKind::Remote, SegKind::Done, SegKind::Landing] {
            for (data, ctrl) in [(0u16, 0u16), (1, 0), (0, 1), (63, 8), (MAX_DATA_GRANT, MAX_CTRL_GRANT)] {
                let imm = Imm { kind, grant: Grant { data, ctrl } };
                let len = match kind {
                    SegKind::Data => 100,
                    SegKind::Remote => REMOTE_DESC_LEN as u32,
                    SegKind::Landing => LANDING_DESC_LEN as u32,
                    _ => 0,
                };
                assert_eq!(Imm::decode(imm.encode(), len), Ok(imm));
            }
        }
        assert_eq!(Imm { kind: SegKind::Update, grant: Grant { data: 7, ctrl: 2 } }.encode(), 0x0001_2007);
        assert_eq!(Imm::decode(0x0006_0000, 0), Err(WireError::BadImm(0x0006_0000)));
        assert_eq!(Imm::decode(0x0005_0000, 24), Err(WireError::BadImm(0x0005_0000)));
        assert_eq!(Imm::decode(0x0003_0000, 23), Err(WireError::BadImm(0x0003_0000)));
        assert_eq!(Imm::decode(0x0004_0000, 1), Err(WireError::PayloadOnControl(1)));
        let d = RemoteDesc { addr: 0x1122_3344_5566_7788, len: 9 << 20, rkey: 0xabcd, how: RemoteHow::Read };
        assert_eq!(RemoteDesc::parse(&d.emit()), Ok(d));
        assert_eq!(&d.emit()[..], &[0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0, 0, 0x90, 0, 0, 0, 0, 0, 0xcd, 0xab, 0, 0, 0, 0, 0, 0]);
        let w = RemoteDesc { addr: 0, len: 4096, rkey: 0, how: RemoteHow::Written };
        assert_eq!(RemoteDesc::parse(&w.emit()), Ok(w));
        assert_eq!(w.emit()[20], 1);
        let mut b = d.emit();
        b[20] = 2;
        assert!(RemoteDesc::parse(&b).is_err());
        let l = LandingDesc { addr: 0x7f00_0000_1000, len: 4 << 20, rkey: 0x1234, request_id: 0x0102_0304_0506_0708 };
        let lb = l.emit();
        assert_eq!(&lb[24..32], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(LandingDesc::parse(&lb), Ok(l));
        let mut bad = lb;
        bad[21] = 1;
        assert!(LandingDesc::parse(&bad).is_err());
        assert!(LandingDesc::parse(&lb[..31]).is_err());
        assert_eq!(Imm::decode(0x0100_0000, 1), Err(WireError::BadImm(0x0100_0000)));
        assert_eq!(Imm::decode(0x0000_0001, 0), Err(WireError::BadImm(1)));
        assert_eq!(Imm::decode(0x0001_0001, 5), Err(WireError::PayloadOnControl(5)));
    }
}
