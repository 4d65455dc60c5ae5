//! Records the git commit being built (`git rev-parse --short HEAD`), "unknown" outside a git
//! checkout or without git. Reruns when HEAD moves (a commit, a checkout) — then only this
//! tiny crate and its direct users rebuild.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok().filter(|o| o.status.success())?;
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string()).filter(|s| !s.is_empty())
}

fn main() {
    let commit = std::env::var("HIP_REMOTE_GIT_COMMIT").ok().filter(|c| !c.is_empty()).or_else(|| git(&["rev-parse", "--short", "HEAD"]));
    let commit = commit.unwrap_or_else(|| "unknown".into());
    // HEAD (a worktree's own), the reflog that every commit appends to, and the branch's ref;
    // only files that exist: a missing one would rerun this script on every build.
    let mut watched: Vec<String> = ["HEAD", "logs/HEAD", "packed-refs"].iter().filter_map(|p| git(&["rev-parse", "--git-path", p])).collect();
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]).and_then(|branch| git(&["rev-parse", "--git-path", &branch])));
    for file in watched.iter().filter(|f| std::path::Path::new(f).is_file()) {
        println!("cargo:rerun-if-changed={file}");
    }
    println!("cargo:rerun-if-env-changed=HIP_REMOTE_GIT_COMMIT");
    println!("cargo:rustc-env=HIP_REMOTE_GIT_COMMIT={commit}");
}
