//! Tests of the device log reader: records built here byte by byte, as the device writer
//! lays them out, in a fake device memory.

use super::*;
use proptest::prelude::*;

/// A test argument, as a device writer would serialize it.
#[derive(Clone, Copy, Debug)]
enum A {
    I(i64),
    U(u64),
    F(f64),
    P(u64),
    S(&'static [u8]),
    Null,
}

fn push_padded(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(bytes);
    out.resize(pad8(out.len()).unwrap(), 0);
}

/// A whole record: `kind`, `format`, `args`.
fn record(kind: u32, format: &[u8], args: &[A]) -> Vec<u8> {
    let mut out = Vec::new();
    for word in [0, kind, format.len() as u32, args.len() as u32] {
        out.extend(word.to_le_bytes());
    }
    push_padded(&mut out, format);
    for arg in args {
        let (tag, bytes): (u32, Vec<u8>) = match arg {
            A::I(v) => (tag::SIGNED, v.to_le_bytes().to_vec()),
            A::U(v) => (tag::UNSIGNED, v.to_le_bytes().to_vec()),
            A::F(v) => (tag::FLOAT, v.to_bits().to_le_bytes().to_vec()),
            A::P(v) => (tag::POINTER, v.to_le_bytes().to_vec()),
            A::S(s) => (tag::STRING, s.to_vec()),
            A::Null => (tag::NULL_STRING, Vec::new()),
        };
        out.extend(tag.to_le_bytes());
        out.extend((bytes.len() as u32).to_le_bytes());
        push_padded(&mut out, &bytes);
    }
    let size = out.len() as u32;
    out[..4].copy_from_slice(&size.to_le_bytes());
    out
}

fn printf(format: &str, args: &[A]) -> String {
    let bytes = record(KIND_PRINTF, format.as_bytes(), args);
    String::from_utf8(format_record(&Record::parse(&bytes).expect("well-formed"))).unwrap()
}

#[test]
fn integers_follow_c() {
    assert_eq!(
        printf("%d %i %u|%5d|%-5d|%05d|%+d", &[A::I(-42), A::I(7), A::U(3_000_000_000), A::I(42), A::I(42), A::I(-42), A::I(9)]),
        "-42 7 3000000000|   42|42   |-0042|+9"
    );
    assert_eq!(printf("%x %X %#x %o %#o", &[A::U(255), A::U(255), A::U(255), A::U(8), A::U(8)]), "ff FF 0xff 10 010");
    // Length modifiers narrow as C's types do.
    assert_eq!(
        printf(
            "%hhd %hd %d %ld %lld %hhu %zu %jd %td",
            &[A::I(300), A::I(70000), A::I(1 << 33), A::I(1 << 33), A::I(-1), A::U(257), A::U(1 << 40), A::I(-5), A::I(6)]
        ),
        "44 4464 0 8589934592 -1 1 1099511627776 -5 6"
    );
    assert_eq!(printf("%u %x", &[A::I(-1), A::I(-1)]), "4294967295 ffffffff");
    assert_eq!(printf("%llu %llx", &[A::I(-1), A::U(u64::MAX)]), "18446744073709551615 ffffffffffffffff");
    // An unsigned argument for %d (threadIdx.x) is its bits, as C reads them.
    assert_eq!(printf("thread %d of %d\n", &[A::U(3), A::U(u64::from(u32::MAX))]), "thread 3 of -1\n");
    assert_eq!(printf("%.3d|%*d|%-*d|%.*d", &[A::I(5), A::I(4), A::I(1), A::I(-4), A::I(2), A::I(3), A::I(7)]), "005|   1|2   |007");
    assert_eq!(printf("%c%c%3c", &[A::I(i64::from(b'o')), A::U(u64::from(b'k')), A::I(i64::from(b'!'))]), "ok  !");
}

#[test]
fn floats_strings_and_pointers_follow_c() {
    assert_eq!(
        printf("%f %.2f %e %g %G %a", &[A::F(1.5), A::F(1.23456), A::F(12345.678), A::F(0.0001), A::F(1e-10), A::F(1.0)]),
        "1.500000 1.23 1.234568e+04 0.0001 1E-10 0x1p+0"
    );
    assert_eq!(printf("%8.3f|%-8.1e|%+.0f", &[A::F(-2.5), A::F(100.0), A::F(2.5)]), "  -2.500|1.0e+02 |+2");
    assert_eq!(printf("%f %f %Lf", &[A::F(f64::INFINITY), A::F(f64::NAN), A::F(0.25)]), "inf nan 0.250000");
    assert_eq!(
        printf("[%s] [%5s] [%-5s] [%.2s] [%s]", &[A::S(b"hip"), A::S(b"ab"), A::S(b"ab"), A::S(b"remote"), A::Null]),
        "[hip] [   ab] [ab   ] [re] [(null)]"
    );
    assert_eq!(printf("%p %p", &[A::P(0xdead_beef), A::P(0)]), format!("0xdeadbeef {}", c_pointer(0)));
    assert_eq!(printf("100%% done%c", &[A::I(10)]), "100% done\n");
}

/// What libc prints for `%p` of `value` (glibc: `(nil)` for 0).
fn c_pointer(value: usize) -> String {
    let mut out = Vec::new();
    assert!(c_format(&mut out, &CString::new("%p").unwrap(), CArg::Pointer(value as *const c_void)));
    String::from_utf8(out).unwrap()
}

#[test]
fn strings_stop_at_nul_and_pass_any_bytes() {
    let bytes = record(KIND_PRINTF, b"%s|%s\n", &[A::S(b"ab\0cd"), A::S(b"\xff\xfe")]);
    assert_eq!(format_record(&Record::parse(&bytes).unwrap()), b"ab|\xff\xfe\n");
    let bytes = record(KIND_PRINTF, b"before\0after %d", &[A::I(1)]);
    assert_eq!(format_record(&Record::parse(&bytes).unwrap()), b"before");
    let bytes = record(KIND_PRINTF, b"\xc3\x28 %d", &[A::I(1)]);
    assert_eq!(format_record(&Record::parse(&bytes).unwrap()), b"\xc3\x28 1");
}

#[test]
fn mismatches_and_missing_arguments_print_the_conversion() {
    // A float for %d: printed as written, consumed, so the next one stays in step.
    assert_eq!(printf("%d %d", &[A::F(1.5), A::I(2)]), "%d 2");
    assert_eq!(printf("%f %s %p", &[A::I(1), A::I(2), A::F(0.5)]), "%f %s %p");
    assert_eq!(printf("%5.2f and %d and %s", &[A::F(1.0)]), " 1.00 and %d and %s");
    assert_eq!(printf("%*d", &[A::F(1.0), A::I(3)]), "%*d");
    assert_eq!(printf("%n %d", &[A::I(1)]), "%n 1");
    assert_eq!(printf("%k %y 100%", &[]), "%k %y 100%");
    assert_eq!(printf("%-", &[]), "%-");
    assert_eq!(printf("%lc%ls", &[A::I(65), A::S(b"x")]), "Ax");
    // Fields beyond the bound print as written.
    assert_eq!(printf("%99999d|%.99999f|%*d|%d", &[A::I(1), A::F(1.0), A::I(1 << 20), A::I(1), A::I(2)]), "%99999d|%.99999f|%*d|2");
    assert_eq!(printf("%000000000000000000000000000000d", &[A::I(1)]), "%000000000000000000000000000000d");
    assert_eq!(printf("%4096d", &[A::I(1)]).len(), 4096);
}

#[test]
fn record_text_is_bounded() {
    let format = "%4096d".repeat(40);
    let args = vec![A::I(1); 40];
    let text = printf(&format, &args);
    assert!(text.len() <= MAX_RECORD_TEXT + 64, "{}", text.len());
    assert!(text.ends_with("[hip-remote: kernel printf record cut]\n"));
}

#[test]
fn malformed_records_are_refused() {
    let good = record(KIND_PRINTF, b"%d %s", &[A::I(1), A::S(b"abc")]);
    assert!(Record::parse(&good).is_ok());
    assert_eq!(Record::parse(&good[..8]), Err(Malformed::Truncated));
    assert_eq!(Record::parse(&good[..good.len() - 8]), Err(Malformed::Truncated));
    let mut bad_kind = good.clone();
    bad_kind[4] = 9;
    assert_eq!(Record::parse(&bad_kind), Err(Malformed::Kind(9)));
    let mut huge_count = good.clone();
    huge_count[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(Record::parse(&huge_count), Err(Malformed::ArgCount(u32::MAX)));
    let mut huge_format = good.clone();
    huge_format[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(Record::parse(&huge_format), Err(Malformed::Truncated));
    // The first argument's tag sits after the 8-byte-padded format.
    let mut bad_tag = good.clone();
    bad_tag[24] = 77;
    assert_eq!(Record::parse(&bad_tag), Err(Malformed::Arg { tag: 77, len: 8 }));
    let mut bad_len = good.clone();
    bad_len[28] = 4;
    assert_eq!(Record::parse(&bad_len), Err(Malformed::Arg { tag: 1, len: 4 }));
    let mut long_string = good.clone();
    long_string[44..48].copy_from_slice(&1000u32.to_le_bytes());
    assert_eq!(Record::parse(&long_string), Err(Malformed::Truncated));
    let mut null_with_len = record(KIND_PRINTF, b"%s", &[A::Null]);
    null_with_len[28] = 8;
    assert!(Record::parse(&null_with_len).is_err());
}

const BASE: u64 = 0x7000_0000;

/// Device memory holding one log at [`BASE`], written as the device writer does.
struct FakeDevice {
    bytes: Vec<u8>,
    capacity: u64,
    reads: usize,
    /// Scrambles the contents (not the size words) of the next data read: a copy that read
    /// a record's contents before its writer stored them, and its size after.
    scramble_next_data_read: bool,
    /// Fails every access.
    broken: bool,
}

impl FakeDevice {
    fn new(capacity: u64) -> Self {
        let mut bytes = vec![0u8; (HEADER_BYTES + capacity) as usize];
        bytes[..8].copy_from_slice(&MAGIC.to_le_bytes());
        bytes[8..16].copy_from_slice(&capacity.to_le_bytes());
        Self { bytes, capacity, reads: 0, scramble_next_data_read: false, broken: false }
    }

    /// A zero-initialised global, as modules define it: the first writer stores the magic.
    fn zeroed(capacity: u64) -> Self {
        Self { bytes: vec![0u8; (HEADER_BYTES + capacity) as usize], ..Self::new(capacity) }
    }

    fn word(&self, at: usize) -> u64 {
        u64_at(&self.bytes, at).unwrap()
    }

    fn set_u32(&mut self, at: usize, value: u32) {
        self.bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }

    /// A writer's reservation; `None` when the record did not fit (counted in `dropped`).
    fn reserve(&mut self, size: usize) -> Option<usize> {
        self.bytes[..8].copy_from_slice(&MAGIC.to_le_bytes());
        self.bytes[8..16].copy_from_slice(&self.capacity.to_le_bytes());
        let head = self.word(16);
        self.bytes[16..24].copy_from_slice(&(head + size as u64).to_le_bytes());
        if head + size as u64 > self.word(8) {
            let dropped = u32_at(&self.bytes, 28).unwrap();
            self.set_u32(28, dropped + 1);
            return None;
        }
        Some(HEADER_BYTES as usize + head as usize)
    }

    /// A writer: reserve, store the contents, the size word last.
    fn write(&mut self, record: &[u8]) {
        if let Some(at) = self.reserve(record.len()) {
            self.bytes[at + 4..at + record.len()].copy_from_slice(&record[4..]);
            self.bytes[at..at + 4].copy_from_slice(&record[..4]);
        }
    }

    fn assert_failed(&mut self, record: &[u8]) {
        self.write(record);
        let asserts = u32_at(&self.bytes, 24).unwrap();
        self.set_u32(24, asserts + 1);
    }

    fn open(&mut self) -> DeviceLog {
        let size = self.bytes.len() as u64;
        DeviceLog::open(self, 0, BASE, size).unwrap().expect("a device log")
    }
}

impl LogMemory for FakeDevice {
    fn read(&mut self, device: DeviceIndex, address: u64, out: &mut [u8]) -> Result<(), BackendError> {
        assert_eq!(device, 0);
        if self.broken {
            return Err(BackendError::IllegalAddress("broken".into()));
        }
        self.reads += 1;
        let at = (address - BASE) as usize;
        out.copy_from_slice(&self.bytes[at..at + out.len()]);
        if std::mem::take(&mut self.scramble_next_data_read) && at >= HEADER_BYTES as usize {
            let sizes: Vec<(usize, [u8; 4])> = {
                let mut kept = Vec::new();
                let mut walked = 0;
                while let Some(size) = u32_at(out, walked).filter(|&s| s != 0) {
                    kept.push((walked, out[walked..walked + 4].try_into().unwrap()));
                    walked += size as usize;
                }
                kept
            };
            out.fill(0xee);
            for (at, size) in sizes {
                out[at..at + 4].copy_from_slice(&size);
            }
        }
        Ok(())
    }

    fn zero(&mut self, _device: DeviceIndex, address: u64, len: u64) -> Result<(), BackendError> {
        let at = (address - BASE) as usize;
        self.bytes[at..at + len as usize].fill(0);
        Ok(())
    }
}

fn text(drained: &Drained) -> &str {
    std::str::from_utf8(&drained.text).unwrap()
}

#[test]
fn open_checks_size_magic_and_capacity() {
    let mut device = FakeDevice::new(256);
    let size = device.bytes.len() as u64;
    assert!(DeviceLog::open(&mut device, 0, BASE, 31).unwrap().is_none());
    assert!(DeviceLog::open(&mut device, 0, BASE, size).unwrap().is_some());
    // A capacity larger than the global.
    assert!(DeviceLog::open(&mut device, 0, BASE, size - 8).unwrap().is_none());
    device.bytes[8..16].copy_from_slice(&12u64.to_le_bytes());
    assert!(DeviceLog::open(&mut device, 0, BASE, size).unwrap().is_none(), "not a multiple of 8");
    let mut huge = FakeDevice::new(8);
    huge.bytes[8..16].copy_from_slice(&(MAX_CAPACITY + 8).to_le_bytes());
    assert!(DeviceLog::open(&mut huge, 0, BASE, u64::MAX).unwrap().is_none());
    let mut wrong = FakeDevice::new(64);
    wrong.bytes[0] ^= 1;
    assert!(DeviceLog::open(&mut wrong, 0, BASE, 96).unwrap().is_none());
    wrong.broken = true;
    assert!(DeviceLog::open(&mut wrong, 0, BASE, 96).is_err());
}

#[test]
fn a_zero_initialised_log_is_read_once_written() {
    let mut device = FakeDevice::zeroed(256);
    let size = device.bytes.len() as u64;
    let mut log = DeviceLog::open(&mut device, 0, BASE, size).unwrap().expect("an unwritten log");
    let reads = device.reads;
    assert_eq!(log.drain(&mut device, true, None).unwrap(), Drained::default());
    assert_eq!(device.reads, reads + 1, "the header only");
    assert!(device.bytes.iter().all(|&b| b == 0), "nothing to reset");
    device.write(&record(KIND_PRINTF, b"first %d\n", &[A::I(1)]));
    assert_eq!(text(&log.drain(&mut device, false, None).unwrap()), "first 1\n");
    device.assert_failed(&record(KIND_ASSERT, b"boom\n", &[]));
    let drained = log.drain(&mut device, true, None).unwrap();
    assert_eq!((text(&drained), drained.asserts), ("boom\n", 1));
    assert_eq!((device.word(0), device.word(8), device.word(16)), (MAGIC, 256, 0), "reset keeps the magic");
    // Half a header (a magic not stored yet, or garbage) reads nothing.
    let mut odd = FakeDevice::zeroed(256);
    let mut log = DeviceLog::open(&mut odd, 0, BASE, size).unwrap().unwrap();
    odd.bytes[16] = 8;
    assert_eq!(log.drain(&mut odd, false, None).unwrap(), Drained::default());
    assert_eq!(log.drain(&mut odd, true, None).unwrap(), Drained::default());
    // A zeroed global too large is read up to the bound.
    let mut huge = FakeDevice::zeroed(8);
    assert!(DeviceLog::open(&mut huge, 0, BASE, u64::MAX).unwrap().is_some());
}

#[test]
fn drain_reads_each_record_once_in_order() {
    let mut device = FakeDevice::new(4096);
    let mut log = device.open();
    assert_eq!(log.drain(&mut device, false, None).unwrap(), Drained::default());
    device.write(&record(KIND_PRINTF, b"a=%d\n", &[A::I(1)]));
    device.write(&record(KIND_PRINTF, b"b=%s\n", &[A::S(b"two")]));
    assert_eq!(text(&log.drain(&mut device, false, None).unwrap()), "a=1\nb=two\n");
    device.write(&record(KIND_PRINTF, b"c\n", &[]));
    assert_eq!(text(&log.drain(&mut device, false, None).unwrap()), "c\n");
    assert_eq!(log.drain(&mut device, false, None).unwrap(), Drained::default());
    // Not settled: never reset.
    assert_ne!(device.word(16), 0);
}

#[test]
fn an_unfinished_record_waits_for_its_writer() {
    let mut device = FakeDevice::new(4096);
    let mut log = device.open();
    device.write(&record(KIND_PRINTF, b"first\n", &[]));
    let late = record(KIND_PRINTF, b"late %d\n", &[A::I(5)]);
    let at = device.reserve(late.len()).unwrap();
    device.write(&record(KIND_PRINTF, b"after\n", &[]));
    assert_eq!(text(&log.drain(&mut device, false, None).unwrap()), "first\n");
    device.bytes[at..at + late.len()].copy_from_slice(&late);
    assert_eq!(text(&log.drain(&mut device, false, None).unwrap()), "late 5\nafter\n");
}

#[test]
fn unsettled_reads_take_contents_from_the_second_copy() {
    let mut device = FakeDevice::new(4096);
    let mut log = device.open();
    device.write(&record(KIND_PRINTF, b"x=%d y=%s\n", &[A::I(-3), A::S(b"ok")]));
    device.scramble_next_data_read = true;
    assert_eq!(text(&log.drain(&mut device, false, None).unwrap()), "x=-3 y=ok\n");
    // Header, first copy, second copy.
    assert_eq!(device.reads, 1 + 3);
}

#[test]
fn settled_drain_resets_the_log() {
    let mut device = FakeDevice::new(128);
    let mut log = device.open();
    device.write(&record(KIND_PRINTF, b"%s\n", &[A::S(b"0123456789abcdef0123456789")]));
    device.write(&record(KIND_PRINTF, b"%s\n", &[A::S(b"0123456789abcdef0123456789")]));
    device.write(&record(KIND_PRINTF, b"%s\n", &[A::S(b"0123456789abcdef0123456789")]));
    assert_eq!(u32_at(&device.bytes, 28), Some(1), "the third did not fit");
    let drained = log.drain(&mut device, true, None).unwrap();
    assert_eq!(
        text(&drained),
        "0123456789abcdef0123456789\n0123456789abcdef0123456789\n[hip-remote: 1 kernel printf records lost: the device log is full]\n"
    );
    // Header counters zero, data zero: the next writer starts at 0 with the whole capacity.
    assert_eq!((device.word(16), device.word(24)), (0, 0));
    assert!(device.bytes[HEADER_BYTES as usize..].iter().all(|&b| b == 0));
    assert_eq!(device.word(0), MAGIC);
    device.write(&record(KIND_PRINTF, b"again\n", &[]));
    assert_eq!(text(&log.drain(&mut device, true, None).unwrap()), "again\n");
    assert_eq!(log.drain(&mut device, true, None).unwrap(), Drained::default());
}

#[test]
fn asserts_are_counted_once() {
    let mut device = FakeDevice::new(1024);
    let mut log = device.open();
    let message = record(KIND_ASSERT, b"%s:%u: %s: Device-side assertion `%s' failed.\n", &[A::S(b"k.hip"), A::U(12), A::S(b"kern"), A::S(b"x > 0")]);
    device.assert_failed(&message);
    device.assert_failed(&message);
    let drained = log.drain(&mut device, false, None).unwrap();
    assert_eq!(drained.asserts, 2);
    assert_eq!(text(&drained), "k.hip:12: kern: Device-side assertion `x > 0' failed.\n".repeat(2));
    assert_eq!(log.drain(&mut device, false, None).unwrap().asserts, 0);
    device.assert_failed(&message);
    assert_eq!(log.drain(&mut device, true, None).unwrap().asserts, 1);
    assert_eq!(log.drain(&mut device, true, None).unwrap().asserts, 0);
}

#[test]
fn corrupt_sizes_stop_the_walk_until_a_reset() {
    let mut device = FakeDevice::new(1024);
    let mut log = device.open();
    device.write(&record(KIND_PRINTF, b"good\n", &[]));
    let at = device.reserve(24).unwrap();
    device.set_u32(at, 12);
    device.write(&record(KIND_PRINTF, b"unreachable\n", &[]));
    assert_eq!(text(&log.drain(&mut device, false, None).unwrap()), "good\n");
    assert_eq!(text(&log.drain(&mut device, false, None).unwrap()), "");
    // A size running past the head, then a reset.
    device.set_u32(at, 1 << 20);
    assert_eq!(text(&log.drain(&mut device, true, None).unwrap()), "");
    device.write(&record(KIND_PRINTF, b"fresh\n", &[]));
    assert_eq!(text(&log.drain(&mut device, true, None).unwrap()), "fresh\n");
}

#[test]
fn malformed_records_are_skipped_and_counted() {
    let mut device = FakeDevice::new(1024);
    let mut log = device.open();
    let mut bad = record(KIND_PRINTF, b"%d\n", &[A::I(1)]);
    bad[4] = 42;
    device.write(&bad);
    device.write(&record(KIND_PRINTF, b"ok\n", &[]));
    assert_eq!(text(&log.drain(&mut device, false, None).unwrap()), "ok\n[hip-remote: 1 malformed kernel printf records skipped]\n");
}

#[test]
fn an_overwritten_magic_reads_nothing() {
    let mut device = FakeDevice::new(1024);
    let mut log = device.open();
    device.write(&record(KIND_PRINTF, b"hidden\n", &[]));
    device.bytes[0] = 0;
    assert_eq!(log.drain(&mut device, true, None).unwrap(), Drained::default());
    assert!(device.word(16) != 0, "no reset of what is not a log");
}

#[test]
fn drain_text_is_bounded() {
    let mut device = FakeDevice::new(4 << 20);
    let mut log = device.open();
    let big = record(KIND_PRINTF, b"%4096d%4096d%4096d%4096d%4096d%4096d%4096d%4096d\n", &[A::I(1); 8]);
    for _ in 0..((4 << 20) / big.len()) {
        device.write(&big);
    }
    let drained = log.drain(&mut device, true, None).unwrap();
    assert!(drained.text.len() <= MAX_DRAIN_TEXT + MAX_RECORD_TEXT + 200, "{}", drained.text.len());
    assert!(text(&drained).ends_with(&format!("kernel printf records not shown: over {MAX_DRAIN_TEXT} bytes of text]\n")));
}

#[test]
fn read_errors_are_returned() {
    let mut device = FakeDevice::new(64);
    let mut log = device.open();
    device.broken = true;
    assert!(log.drain(&mut device, true, None).is_err());
}

// ---- LogBook: launches, waits, attribution, resets ----

const STREAM_A: u64 = 11;
const STREAM_B: u64 = 12;
const MODULE: u64 = 5;

fn book(device: &mut FakeDevice) -> LogBook {
    let mut book = LogBook::default();
    let log = device.open();
    book.add_module(MODULE, log);
    book
}

fn only(deliveries: Vec<Delivery>) -> Delivery {
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    deliveries.into_iter().next().unwrap()
}

#[test]
fn a_stream_wait_delivers_to_that_stream_and_resets_when_settled() {
    let mut device = FakeDevice::new(1024);
    let mut book = book(&mut device);
    book.launched(MODULE, STREAM_A);
    device.write(&record(KIND_PRINTF, b"hello %d\n", &[A::I(1)]));
    let waited = book.before_stream_wait(STREAM_A);
    let delivery = only(book.after_wait(waited, &mut device, &[]));
    assert_eq!((delivery.stream, delivery.text.as_slice(), delivery.asserts), (STREAM_A, &b"hello 1\n"[..], 0));
    assert_eq!(device.word(16), 0, "settled: reset");
    // Nothing launched on B: its wait reads nothing.
    let reads = device.reads;
    assert!(book.after_wait(book.before_stream_wait(STREAM_B), &mut device, &[]).is_empty());
    assert_eq!(device.reads, reads);
}

#[test]
fn a_prefetched_header_saves_the_reads_when_nothing_was_written() {
    let mut device = FakeDevice::new(1024);
    let mut book = book(&mut device);
    book.launched(MODULE, STREAM_A);
    let waited = book.before_stream_wait(STREAM_A);
    assert_eq!(waited.headers(), &[(MODULE, BASE)]);
    let header: [u8; 32] = device.bytes[..32].try_into().unwrap();
    let reads = device.reads;
    assert!(book.after_wait(waited, &mut device, &[(MODULE, header)]).is_empty());
    assert_eq!(device.reads, reads, "nothing written: no device access at all");
    // With records, only the data is read.
    book.launched(MODULE, STREAM_A);
    device.write(&record(KIND_PRINTF, b"seen\n", &[]));
    let header: [u8; 32] = device.bytes[..32].try_into().unwrap();
    let waited = book.before_stream_wait(STREAM_A);
    let delivery = only(book.after_wait(waited, &mut device, &[(MODULE, header)]));
    assert_eq!(delivery.text, b"seen\n");
    assert_eq!(device.reads, reads + 1, "only the data");
    assert_eq!(device.word(16), 0, "settled: reset");
}

#[test]
fn a_module_busy_on_another_stream_is_not_reset() {
    let mut device = FakeDevice::new(1024);
    let mut book = book(&mut device);
    book.launched(MODULE, STREAM_A);
    book.launched(MODULE, STREAM_B);
    device.write(&record(KIND_PRINTF, b"from a\n", &[]));
    let delivery = only(book.after_wait(book.before_stream_wait(STREAM_A), &mut device, &[]));
    assert_eq!((delivery.stream, delivery.text.as_slice()), (STREAM_A, &b"from a\n"[..]));
    assert_ne!(device.word(16), 0, "B may still be writing");
    device.write(&record(KIND_PRINTF, b"from b\n", &[]));
    let delivery = only(book.after_wait(book.before_stream_wait(STREAM_B), &mut device, &[]));
    assert_eq!((delivery.stream, delivery.text.as_slice()), (STREAM_B, &b"from b\n"[..]));
    assert_eq!(device.word(16), 0);
}

#[test]
fn a_launch_after_the_wait_began_keeps_the_module_busy() {
    let mut device = FakeDevice::new(1024);
    let mut book = book(&mut device);
    book.launched(MODULE, STREAM_A);
    let waited = book.before_stream_wait(STREAM_A);
    // Another thread launches on A while the wait runs.
    book.launched(MODULE, STREAM_A);
    device.write(&record(KIND_PRINTF, b"one\n", &[]));
    assert_eq!(only(book.after_wait(waited, &mut device, &[])).text, b"one\n");
    assert_ne!(device.word(16), 0, "the second launch was not waited for");
    assert!(book.after_wait(book.before_stream_wait(STREAM_A), &mut device, &[]).is_empty());
    assert_eq!(device.word(16), 0);
}

#[test]
fn an_event_wait_reads_but_never_resets() {
    let mut device = FakeDevice::new(1024);
    let mut book = book(&mut device);
    book.launched(MODULE, STREAM_A);
    device.assert_failed(&record(KIND_ASSERT, b"boom\n", &[]));
    let delivery = only(book.after_wait(book.before_event_wait(STREAM_A), &mut device, &[]));
    assert_eq!((delivery.stream, delivery.text.as_slice(), delivery.asserts), (STREAM_A, &b"boom\n"[..], 1));
    assert_ne!(device.word(16), 0);
    // The stream's wait then finds nothing new, and resets.
    assert!(book.after_wait(book.before_stream_wait(STREAM_A), &mut device, &[]).is_empty());
    assert_eq!(device.word(16), 0);
}

#[test]
fn a_device_wait_delivers_to_the_latest_stream() {
    let mut device = FakeDevice::new(1024);
    let mut book = book(&mut device);
    book.launched(MODULE, STREAM_A);
    book.launched(MODULE, STREAM_B);
    device.write(&record(KIND_PRINTF, b"both\n", &[]));
    assert!(book.after_wait(book.before_device_wait(1), &mut device, &[]).is_empty(), "another device's wait");
    let delivery = only(book.after_wait(book.before_device_wait(0), &mut device, &[]));
    assert_eq!((delivery.stream, delivery.text.as_slice()), (STREAM_B, &b"both\n"[..]));
    assert_eq!(device.word(16), 0);
}

#[test]
fn graphs_launch_their_modules() {
    let mut device = FakeDevice::new(1024);
    let mut book = book(&mut device);
    book.graph_instantiated(900, vec![MODULE, 77, MODULE]);
    book.graph_instantiated(901, vec![77]);
    assert!(book.graph_has_logs(900) && !book.graph_has_logs(901));
    book.graph_launched(901, STREAM_A);
    assert!(book.before_stream_wait(STREAM_A).launches.is_empty(), "module 77 has no log");
    book.graph_launched(900, STREAM_A);
    device.write(&record(KIND_PRINTF, b"graph\n", &[]));
    assert_eq!(only(book.after_wait(book.before_stream_wait(STREAM_A), &mut device, &[])).text, b"graph\n");
    book.graph_destroyed(900);
    assert!(!book.graph_has_logs(900));
    book.graph_launched(900, STREAM_A);
    assert!(book.before_stream_wait(STREAM_A).launches.is_empty());
}

#[test]
fn unloading_reads_what_is_left_and_forgets_the_module() {
    let mut device = FakeDevice::new(1024);
    let mut book = book(&mut device);
    book.launched(MODULE, STREAM_B);
    device.write(&record(KIND_PRINTF, b"last words\n", &[]));
    let delivery = book.remove_module(MODULE, Some(&mut device)).unwrap();
    assert_eq!((delivery.stream, delivery.text.as_slice()), (STREAM_B, &b"last words\n"[..]));
    assert!(!book.has_log(MODULE));
    book.launched(MODULE, STREAM_A);
    assert!(book.before_stream_wait(STREAM_A).launches.is_empty());
}

#[test]
fn an_unreadable_log_is_skipped() {
    let mut device = FakeDevice::new(1024);
    let mut book = book(&mut device);
    book.launched(MODULE, STREAM_A);
    device.broken = true;
    assert!(book.after_wait(book.before_stream_wait(STREAM_A), &mut device, &[]).is_empty());
}

// ---- Random input never panics ----

fn any_arg() -> impl Strategy<Value = A> {
    prop_oneof![
        any::<i64>().prop_map(A::I),
        any::<u64>().prop_map(A::U),
        any::<f64>().prop_map(A::F),
        any::<u64>().prop_map(A::P),
        Just(A::S(b"str\xff")),
        Just(A::Null),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_records_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        if let Ok(record) = Record::parse(&bytes) {
            prop_assert!(format_record(&record).len() <= MAX_RECORD_TEXT + 64);
        }
    }

    #[test]
    fn random_formats_never_panic(format in proptest::collection::vec(prop_oneof![Just(b'%'), Just(b'*'), Just(b'.'), Just(b'l'), Just(b'h'), any::<u8>(), Just(b'd'), Just(b's'), Just(b'9')], 0..64),
                                  args in proptest::collection::vec(any_arg(), 0..8)) {
        let bytes = record(KIND_PRINTF, &format, &args);
        let record = Record::parse(&bytes).unwrap();
        prop_assert!(format_record(&record).len() <= MAX_RECORD_TEXT + 64);
    }

    #[test]
    fn random_logs_never_panic(header in proptest::collection::vec(any::<u8>(), 16), data in proptest::collection::vec(any::<u8>(), 0..1024), settled: bool) {
        let mut device = FakeDevice::new(data.len() as u64 / 8 * 8);
        let mut log = device.open();
        device.bytes[16..32].copy_from_slice(&header);
        let data_len = device.bytes.len() - HEADER_BYTES as usize;
        device.bytes[HEADER_BYTES as usize..].copy_from_slice(&data[..data_len]);
        let first = log.drain(&mut device, settled, None).unwrap();
        prop_assert!(first.text.len() <= MAX_DRAIN_TEXT + MAX_RECORD_TEXT + 200);
        log.drain(&mut device, settled, None).unwrap();
    }
}

// ---- StreamOutputs: what the session takes ----

#[test]
fn outputs_keep_text_per_stream_and_latch_asserts() {
    let mut outputs = StreamOutputs::default();
    outputs.deliver(Delivery { stream: STREAM_A, text: b"a1\n".to_vec(), asserts: 0 });
    outputs.deliver(Delivery { stream: STREAM_B, text: b"b\n".to_vec(), asserts: 2 });
    outputs.deliver(Delivery { stream: STREAM_A, text: b"a2\n".to_vec(), asserts: 0 });
    assert_eq!(outputs.take(STREAM_A), b"a1\na2\n");
    assert_eq!(outputs.take(STREAM_A), b"");
    assert_eq!(outputs.latched(STREAM_A), Ok(()));
    let error = outputs.latched(STREAM_B).unwrap_err();
    assert_eq!(error.hip_code(), 710);
    assert!(error.message().starts_with("2 device-side assert(s)"), "{error}");
    // Latched until the stream goes; a later assert keeps the first error.
    outputs.deliver(Delivery { stream: STREAM_B, text: Vec::new(), asserts: 1 });
    assert_eq!(outputs.latched(STREAM_B), Err(error));
    assert_eq!(outputs.take(STREAM_B), b"b\n");
    outputs.deliver(Delivery { stream: STREAM_B, text: b"gone\n".to_vec(), asserts: 0 });
    outputs.forget(STREAM_B);
    assert_eq!(outputs.latched(STREAM_B), Ok(()));
    assert_eq!(outputs.take(STREAM_B), b"");
}

#[test]
fn outputs_are_bounded() {
    let mut outputs = StreamOutputs::default();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..6 {
        outputs.deliver(Delivery { stream: STREAM_A, text: chunk.clone(), asserts: 0 });
    }
    let text = outputs.take(STREAM_A);
    let max = crate::backend::host::MAX_PENDING_KERNEL_OUTPUT;
    assert!(text.len() < max + 200);
    assert!(String::from_utf8_lossy(&text[max..]).contains(&format!("{} bytes of kernel printf output beyond", (6 << 20) - max)));
}
