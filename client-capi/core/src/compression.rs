//! When a host-to-device copy goes compressed (`features::COMPRESSED_BULK`): only when that
//! makes it faster. The driver tells the policy what it measured — the link's throughput from
//! uncompressed uploads ([`Compression::link_measured`]) and, per copy, a sample's compressed
//! size and compression time — and the policy answers; it keeps no clock of its own.
//!
//! A copy is compressed when the link's throughput is known, the sample shrinks to at most
//! [`MAX_WORTHWHILE_RATIO`] of itself, and compressing, sending the smaller bytes and
//! decompressing them is predicted to take at most [`REQUIRED_GAIN`] of sending them as
//! they are. On loopback or a
//! fast network the compressor is the slower part, and incompressible data never shrinks:
//! both stay uncompressed.

/// Smallest copy considered (smaller ones are latency, not bandwidth).
pub const COMPRESS_MIN_BYTES: usize = 1 << 20;
/// Bytes of the sample compressed to judge a copy.
pub const COMPRESS_SAMPLE_BYTES: usize = 64 << 10;
/// Smallest uncompressed upload whose time measures the link.
pub const LINK_SAMPLE_MIN_BYTES: usize = 4 << 20;
/// A sample must shrink at least this much for compression to be considered.
pub const MAX_WORTHWHILE_RATIO: f64 = 0.9;
/// Compressed copies must be predicted to take at most this share of an uncompressed one
/// (a margin for the measurements' error: never slower).
pub const REQUIRED_GAIN: f64 = 0.8;

/// The policy's state: the link's measured throughput.
#[derive(Debug, Default, Clone)]
pub struct Compression {
    /// Bytes per second of uncompressed uploads (the last measurement weighs half).
    link: Option<f64>,
}

impl Compression {
    /// An uncompressed upload of `bytes` took `seconds` from first byte sent to its reply.
    pub fn link_measured(&mut self, bytes: usize, seconds: f64) {
        if bytes < LINK_SAMPLE_MIN_BYTES || seconds.is_nan() || seconds <= 0.0 {
            return;
        }
        let rate = bytes as f64 / seconds;
        self.link = Some(self.link.map_or(rate, |old| (old + rate) / 2.0));
    }

    /// The link's throughput, if measured.
    pub fn link(&self) -> Option<f64> {
        self.link
    }

    /// Whether a copy of `len` bytes goes compressed, given a sample of `sample_len` bytes
    /// that compressed to `compressed_len` in `compress_seconds`.
    pub fn compress(&self, len: usize, sample_len: usize, compressed_len: usize, compress_seconds: f64) -> bool {
        let Some(link) = self.link else { return false };
        if len < COMPRESS_MIN_BYTES || sample_len == 0 || compress_seconds.is_nan() {
            return false;
        }
        let ratio = compressed_len as f64 / sample_len as f64;
        if ratio > MAX_WORTHWHILE_RATIO {
            return false;
        }
        // Per byte: compress, send the smaller bytes, decompress on the worker (counted as
        // long as compressing; LZ4 decompresses faster), against sending them as they are.
        let compress_per_byte = compress_seconds.max(1e-9) / sample_len as f64;
        2.0 * compress_per_byte + ratio / link <= REQUIRED_GAIN / link
    }
}

#[cfg(test)]
mod test {
    use super::*;

    const MIB: usize = 1 << 20;

    fn with_link(bytes_per_s: f64) -> Compression {
        let mut c = Compression::default();
        c.link_measured(64 * MIB, 64.0 * MIB as f64 / bytes_per_s);
        c
    }

    #[test]
    fn off_until_the_link_is_measured() {
        let c = Compression::default();
        assert!(!c.compress(64 * MIB, 64 << 10, 4 << 10, 1e-4));
        let mut c = Compression::default();
        c.link_measured(MIB, 1.0); // too small to measure the link
        assert!(c.link().is_none());
    }

    #[test]
    fn on_for_compressible_data_on_a_slow_link() {
        // 10 MB/s, a sample compressing 10:1 at 500 MB/s.
        let c = with_link(10e6);
        assert!(c.compress(64 * MIB, 64 << 10, 6 << 10, (64 << 10) as f64 / 500e6));
    }

    #[test]
    fn off_on_loopback_where_the_compressor_is_slower_than_the_link() {
        // 5 GB/s, the same sample: compressing alone takes longer than sending.
        let c = with_link(5e9);
        assert!(!c.compress(64 * MIB, 64 << 10, 6 << 10, (64 << 10) as f64 / 500e6));
    }

    #[test]
    fn off_for_incompressible_data_and_small_copies() {
        let c = with_link(10e6);
        assert!(!c.compress(64 * MIB, 64 << 10, 64 << 10, 1e-5));
        assert!(!c.compress(64 * MIB, 64 << 10, (0.95 * (64 << 10) as f64) as usize, 1e-5));
        assert!(!c.compress(MIB - 1, 64 << 10, 1 << 10, 1e-5));
    }

    #[test]
    fn off_when_the_gain_is_within_the_margin() {
        // 100 MB/s, 0.85 ratio at 1 GB/s: 1 ns + 8.5 ns vs 10 ns per byte: not 20 % better.
        let c = with_link(100e6);
        assert!(!c.compress(64 * MIB, 64 << 10, (0.85 * (64 << 10) as f64) as usize, (64 << 10) as f64 / 1e9));
    }
}
