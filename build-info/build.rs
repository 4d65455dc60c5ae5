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
    // A worktree's HEAD and reflog live in its own git directory.
    for path in ["HEAD", "logs/HEAD"] {
        if let Some(file) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={file}");
        }
    }
    println!("cargo:rerun-if-env-changed=HIP_REMOTE_GIT_COMMIT");
    println!("cargo:rustc-env=HIP_REMOTE_GIT_COMMIT={commit}");
}
