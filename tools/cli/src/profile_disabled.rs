//! `bench --profile` in a hip-remote built without the `profiling` feature: refused with the
//! build command that has it.

use std::path::{Path, PathBuf};

/// Never started: [`SectionProfile::start`] says how to get a profiling build.
pub struct SectionProfile {
    never: std::convert::Infallible,
}

impl SectionProfile {
    pub fn start(_dir: &Path, _name: &str) -> Result<Self, String> {
        Err("this hip-remote was built without profiling: build it with `cargo build --release -p hip-remote --features profiling` for --profile"
            .into())
    }

    pub fn finish(self) -> Result<Vec<PathBuf>, String> {
        match self.never {}
    }
}
