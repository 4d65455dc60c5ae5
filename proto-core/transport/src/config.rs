//! Settings shared by every transport, and the one checked reader of the environment that
//! client, transports and worker use: a bad value of any `HIP_REMOTE_*` / `TF_*` variable is
//! refused with a message naming the variable and what it accepts, never silently ignored.

use std::ops::RangeInclusive;
use std::time::Duration;

/// Default connect timeout (`HIP_REMOTE_CONNECT_TIMEOUT`, seconds).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default deadline for a whole call's reply (`HIP_REMOTE_IO_TIMEOUT`, seconds; 0 = none).
/// Long kernels make a worker's reply legitimately slow, so the default is generous; a
/// frozen worker is caught sooner by the liveness timeout.
pub const DEFAULT_IO_TIMEOUT: Duration = Duration::from_secs(600);
/// Accepted `HIP_REMOTE_CONNECT_TIMEOUT`, seconds.
pub const CONNECT_TIMEOUT_RANGE: RangeInclusive<f64> = 0.001..=3600.0;
/// Accepted `HIP_REMOTE_IO_TIMEOUT`, seconds (0 = no deadline).
pub const IO_TIMEOUT_RANGE: RangeInclusive<f64> = 0.0..=604_800.0;

/// Default time a client waits for a reply in silence before it sends a PING
/// (`HIP_REMOTE_HEARTBEAT`, seconds).
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(5);
/// Accepted `HIP_REMOTE_HEARTBEAT`, seconds.
pub const HEARTBEAT_RANGE: RangeInclusive<f64> = 0.05..=60.0;
/// Default time without any frame from the worker, while a reply is awaited, after which
/// the worker is declared frozen or unreachable (`HIP_REMOTE_LIVENESS_TIMEOUT`, seconds).
pub const DEFAULT_LIVENESS_TIMEOUT: Duration = Duration::from_secs(30);
/// Accepted `HIP_REMOTE_LIVENESS_TIMEOUT`, seconds. Its floor leaves room for a few of the
/// worker's heartbeats ([`WORKER_HEARTBEAT`]) in every window.
pub const LIVENESS_TIMEOUT_RANGE: RangeInclusive<f64> = 3.0..=3600.0;
/// How often a worker busy with a request (a synchronize waiting for a long kernel) tells
/// its client it is alive, when it has sent nothing else meanwhile.
pub const WORKER_HEARTBEAT: Duration = Duration::from_secs(1);

/// Default time a waiting reader polls (its socket, its completion queue) before it blocks.
/// A reply that arrives within it is taken without the sleep and scheduler wake-up of a
/// blocked reader.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);
/// Longest spin accepted (`HIP_REMOTE_TCP_SPIN_US`, `HIP_REMOTE_RDMA_SPIN_US`).
pub const MAX_SPIN: Duration = Duration::from_millis(10);

/// Connect and I/O timeouts, the same for TCP and RDMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Connect timeout.
    pub connect: Duration,
    /// Deadline for a whole call's reply (`None` = none).
    pub io: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self { connect: DEFAULT_CONNECT_TIMEOUT, io: Some(DEFAULT_IO_TIMEOUT) }
    }
}

impl Timeouts {
    /// Defaults overridden by `HIP_REMOTE_CONNECT_TIMEOUT` and `HIP_REMOTE_IO_TIMEOUT`
    /// (seconds, fractional allowed).
    pub fn from_env() -> Result<Self, EnvError> {
        Self::from_lookup(&env_lookup)
    }

    /// As [`from_env`](Self::from_env), reading variables through `lookup`.
    pub fn from_lookup(lookup: &Lookup<'_>) -> Result<Self, EnvError> {
        let mut timeouts = Self::default();
        if let Some(s) = secs(lookup, "HIP_REMOTE_CONNECT_TIMEOUT", CONNECT_TIMEOUT_RANGE)? {
            timeouts.connect = s;
        }
        if let Some(s) = secs(lookup, "HIP_REMOTE_IO_TIMEOUT", IO_TIMEOUT_RANGE)? {
            timeouts.io = (!s.is_zero()).then_some(s);
        }
        Ok(timeouts)
    }
}

/// How a client notices a frozen or unreachable worker while it waits for a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Liveness {
    /// Silence after which the client sends a PING.
    pub heartbeat: Duration,
    /// Silence after which the worker is given up.
    pub timeout: Duration,
}

impl Default for Liveness {
    fn default() -> Self {
        Self { heartbeat: DEFAULT_HEARTBEAT, timeout: DEFAULT_LIVENESS_TIMEOUT }
    }
}

impl Liveness {
    /// Defaults overridden by `HIP_REMOTE_HEARTBEAT` and `HIP_REMOTE_LIVENESS_TIMEOUT`
    /// (seconds); the heartbeat must be shorter than the timeout.
    pub fn from_env() -> Result<Self, EnvError> {
        Self::from_lookup(&env_lookup)
    }

    /// As [`from_env`](Self::from_env), reading variables through `lookup`.
    pub fn from_lookup(lookup: &Lookup<'_>) -> Result<Self, EnvError> {
        let mut liveness = Self::default();
        if let Some(s) = secs(lookup, "HIP_REMOTE_HEARTBEAT", HEARTBEAT_RANGE)? {
            liveness.heartbeat = s;
        }
        if let Some(s) = secs(lookup, "HIP_REMOTE_LIVENESS_TIMEOUT", LIVENESS_TIMEOUT_RANGE)? {
            liveness.timeout = s;
        }
        if liveness.heartbeat >= liveness.timeout {
            return Err(EnvError {
                name: "HIP_REMOTE_HEARTBEAT".into(),
                value: format!("{}", liveness.heartbeat.as_secs_f64()),
                expected: format!("seconds shorter than HIP_REMOTE_LIVENESS_TIMEOUT ({} s)", liveness.timeout.as_secs_f64()),
            });
        }
        Ok(liveness)
    }
}

/// A variable whose value is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}={value:?} is refused: expected {expected}")]
pub struct EnvError {
    /// The variable.
    pub name: String,
    /// Its value as given.
    pub value: String,
    /// What it accepts.
    pub expected: String,
}

/// Where variables come from: the process environment, or a table in tests. `Err(value)`: set
/// but not Unicode.
pub type Lookup<'a> = dyn Fn(&str) -> Option<Result<String, String>> + 'a;

/// The process environment as a [`Lookup`].
pub fn env_lookup(name: &str) -> Option<Result<String, String>> {
    std::env::var_os(name).map(|v| v.into_string().map_err(|v| v.to_string_lossy().into_owned()))
}

fn refuse(name: &str, value: &str, expected: impl Into<String>) -> EnvError {
    EnvError { name: name.into(), value: value.into(), expected: expected.into() }
}

/// A text variable, trimmed: `None` when unset or blank.
pub fn text(lookup: &Lookup<'_>, name: &str) -> Result<Option<String>, EnvError> {
    match lookup(name) {
        None => Ok(None),
        Some(Err(raw)) => Err(refuse(name, &raw, "valid UTF-8 text")),
        Some(Ok(v)) => Ok(Some(v.trim().to_owned()).filter(|v| !v.is_empty())),
    }
}

/// A duration in seconds (fractional allowed) within `range`.
pub fn secs(lookup: &Lookup<'_>, name: &str, range: RangeInclusive<f64>) -> Result<Option<Duration>, EnvError> {
    let Some(v) = text(lookup, name)? else { return Ok(None) };
    let expected = || format!("seconds from {} to {}", range.start(), range.end());
    match v.parse::<f64>() {
        Ok(s) if s.is_finite() && range.contains(&s) => Ok(Some(Duration::from_secs_f64(s))),
        _ => Err(refuse(name, &v, expected())),
    }
}

/// A whole number within `range`; `unit` names what it counts in the message.
pub fn uint(lookup: &Lookup<'_>, name: &str, range: RangeInclusive<u64>, unit: &str) -> Result<Option<u64>, EnvError> {
    let Some(v) = text(lookup, name)? else { return Ok(None) };
    match v.parse::<u64>() {
        Ok(n) if range.contains(&n) => Ok(Some(n)),
        _ => Err(refuse(name, &v, format!("a whole number of {unit} from {} to {}", range.start(), range.end()))),
    }
}

/// A boolean: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off` (any case).
pub fn flag(lookup: &Lookup<'_>, name: &str) -> Result<Option<bool>, EnvError> {
    let Some(v) = text(lookup, name)? else { return Ok(None) };
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(Some(true)),
        "0" | "false" | "no" | "off" => Ok(Some(false)),
        _ => Err(refuse(name, &v, "1, true, yes, on, 0, false, no or off")),
    }
}

/// A spin time in microseconds (`HIP_REMOTE_TCP_SPIN_US`, `HIP_REMOTE_RDMA_SPIN_US`), at most
/// [`MAX_SPIN`].
pub fn spin(lookup: &Lookup<'_>, name: &str) -> Result<Option<Duration>, EnvError> {
    Ok(uint(lookup, name, 0..=MAX_SPIN.as_micros() as u64, "microseconds")?.map(Duration::from_micros))
}

#[cfg(test)]
mod test {
    use super::*;

    fn table<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<Result<String, String>> + 'a {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| Ok(v.to_string()))
    }

    #[test]
    fn unset_and_blank_keep_the_defaults() {
        assert_eq!(Timeouts::from_lookup(&table(&[])), Ok(Timeouts::default()));
        assert_eq!(Timeouts::from_lookup(&table(&[("HIP_REMOTE_IO_TIMEOUT", "  ")])), Ok(Timeouts::default()));
        assert_eq!(Liveness::from_lookup(&table(&[])), Ok(Liveness::default()));
    }

    #[test]
    fn timeouts_parse_fractions_and_zero_means_no_deadline() {
        let t = Timeouts::from_lookup(&table(&[("HIP_REMOTE_CONNECT_TIMEOUT", "2.5"), ("HIP_REMOTE_IO_TIMEOUT", "0")])).unwrap();
        assert_eq!(t, Timeouts { connect: Duration::from_millis(2500), io: None });
        let t = Timeouts::from_lookup(&table(&[("HIP_REMOTE_IO_TIMEOUT", " 12 ")])).unwrap();
        assert_eq!(t.io, Some(Duration::from_secs(12)));
    }

    #[test]
    fn bad_numbers_are_refused_naming_the_variable_and_range() {
        for (name, value) in [
            ("HIP_REMOTE_IO_TIMEOUT", "ten"),
            ("HIP_REMOTE_IO_TIMEOUT", "-1"),
            ("HIP_REMOTE_IO_TIMEOUT", "NaN"),
            ("HIP_REMOTE_IO_TIMEOUT", "inf"),
            ("HIP_REMOTE_IO_TIMEOUT", "1e9"),
            ("HIP_REMOTE_CONNECT_TIMEOUT", "0"),
        ] {
            let e = Timeouts::from_lookup(&table(&[(name, value)])).unwrap_err();
            assert_eq!((e.name.as_str(), e.value.as_str()), (name, value));
            let message = e.to_string();
            assert!(message.starts_with(name) && message.contains("seconds from"), "{message}");
        }
    }

    #[test]
    fn liveness_needs_a_heartbeat_below_its_timeout() {
        let l = Liveness::from_lookup(&table(&[("HIP_REMOTE_HEARTBEAT", "0.5"), ("HIP_REMOTE_LIVENESS_TIMEOUT", "4")])).unwrap();
        assert_eq!(l, Liveness { heartbeat: Duration::from_millis(500), timeout: Duration::from_secs(4) });
        let e = Liveness::from_lookup(&table(&[("HIP_REMOTE_HEARTBEAT", "10"), ("HIP_REMOTE_LIVENESS_TIMEOUT", "5")])).unwrap_err();
        assert!(e.to_string().contains("shorter than HIP_REMOTE_LIVENESS_TIMEOUT"), "{e}");
        assert!(Liveness::from_lookup(&table(&[("HIP_REMOTE_LIVENESS_TIMEOUT", "1")])).is_err());
    }

    #[test]
    fn flags_accept_the_usual_spellings_only() {
        for (v, want) in [("1", true), ("TRUE", true), ("yes", true), ("On", true), ("0", false), ("false", false), ("no", false), ("off", false)] {
            assert_eq!(flag(&table(&[("X", v)]), "X"), Ok(Some(want)), "{v}");
        }
        let e = flag(&table(&[("HIP_REMOTE_DEBUG", "maybe")]), "HIP_REMOTE_DEBUG").unwrap_err();
        assert!(e.to_string().contains("HIP_REMOTE_DEBUG=\"maybe\"") && e.to_string().contains("0, false"), "{e}");
        assert_eq!(flag(&table(&[]), "X"), Ok(None));
    }

    #[test]
    fn whole_numbers_and_spins_are_range_checked() {
        assert_eq!(uint(&table(&[("P", "80")]), "P", 1..=65535, "ports"), Ok(Some(80)));
        for bad in ["0", "65536", "8o", "-3", "1.5"] {
            let e = uint(&table(&[("P", bad)]), "P", 1..=65535, "ports").unwrap_err();
            assert_eq!(e.expected, "a whole number of ports from 1 to 65535");
        }
        assert_eq!(spin(&table(&[("S", "10000")]), "S"), Ok(Some(MAX_SPIN)));
        assert!(spin(&table(&[("S", "10001")]), "S").is_err());
    }

    #[test]
    fn non_unicode_values_are_refused() {
        let lookup = |_: &str| Some(Err("\u{fffd}x".to_string()));
        assert_eq!(text(&lookup, "HIP_REMOTE_WORKER").unwrap_err().expected, "valid UTF-8 text");
    }
}
