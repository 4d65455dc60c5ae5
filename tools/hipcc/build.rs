//! Captures this build's commit for `hipconfig --version` (`7.2.53211-<githash>`, ROCm's form),
//! or a fixed word when not built from a git checkout (a source archive).

use std::path::PathBuf;
use std::process::Command;

/// The hash reported when no git checkout is there to ask.
const NO_GIT_HASH: &str = "unknown";

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    let hash = git(&["rev-parse", "--short=9", "HEAD"]).filter(|h| h.chars().all(|c| c.is_ascii_hexdigit()));
    println!("cargo:rustc-env=HIP_REMOTE_GITHASH={}", hash.as_deref().unwrap_or(NO_GIT_HASH));
    println!("cargo:rerun-if-changed=build.rs");
    // Rebuild when the commit moves: HEAD (per worktree) and the branch it names.
    if let (Some(git_dir), Some(common)) = (git(&["rev-parse", "--absolute-git-dir"]), git(&["rev-parse", "--git-common-dir"])) {
        let common = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(common);
        let branch = git(&["symbolic-ref", "-q", "HEAD"]).map(|b| common.join(b));
        // Only files that exist: a missing one would rerun this script on every build.
        let watched = [Some(PathBuf::from(git_dir).join("HEAD")), Some(common.join("packed-refs")), branch];
        for path in watched.into_iter().flatten().filter(|p| p.is_file()) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}
