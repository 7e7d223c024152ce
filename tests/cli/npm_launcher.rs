//! The npm package's launcher (packaging/npm/ctxkeep/bin/ctxkeep), in the layout `npm install
//! -g` makes: the command a symlink to the launcher, the binary in the platform package beside
//! it. Skipped, saying so, where `node` is not installed. (packaging/npm/test-registry installs
//! the real packages from a local registry.)

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PLATFORM_PACKAGES: &[&str] = &[
    "cli-linux-x64-gnu",
    "cli-linux-x64-musl",
    "cli-linux-arm64-gnu",
    "cli-linux-arm64-musl",
    "cli-darwin-x64",
    "cli-darwin-arm64",
];

fn node_missing() -> bool {
    let found = Command::new("node").arg("--version").output();
    if found.as_ref().is_ok_and(|o| o.status.success()) {
        return false;
    }
    eprintln!("skipped: node is not installed");
    true
}

/// A global prefix as npm lays it out, every platform package holding `binary`.
struct Install {
    _dir: tempfile::TempDir,
    prefix: PathBuf,
}

impl Install {
    fn new(binary: Option<&[u8]>) -> Install {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("prefix");
        let package = prefix.join("lib/node_modules/ctxkeep");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/npm/ctxkeep");
        fs::create_dir_all(package.join("bin")).unwrap();
        fs::copy(source.join("bin/ctxkeep"), package.join("bin/ctxkeep")).unwrap();
        fs::set_permissions(
            package.join("bin/ctxkeep"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        fs::copy(source.join("platforms.js"), package.join("platforms.js")).unwrap();
        fs::write(
            package.join("package.json"),
            format!(
                r#"{{"name":"ctxkeep","version":"{}"}}"#,
                env!("CARGO_PKG_VERSION")
            ),
        )
        .unwrap();
        if let Some(bytes) = binary {
            for name in PLATFORM_PACKAGES {
                let dir = package.join("node_modules/@ctxkeep").join(name);
                fs::create_dir_all(&dir).unwrap();
                fs::write(
                    dir.join("package.json"),
                    format!(r#"{{"name":"@ctxkeep/{name}"}}"#),
                )
                .unwrap();
                fs::write(dir.join("ctxkeep"), bytes).unwrap();
                fs::set_permissions(dir.join("ctxkeep"), fs::Permissions::from_mode(0o755))
                    .unwrap();
            }
        }
        fs::create_dir_all(prefix.join("bin")).unwrap();
        symlink(
            "../lib/node_modules/ctxkeep/bin/ctxkeep",
            prefix.join("bin/ctxkeep"),
        )
        .unwrap();
        Install { _dir: dir, prefix }
    }

    fn launcher(&self) -> PathBuf {
        self.prefix.join("lib/node_modules/ctxkeep/bin/ctxkeep")
    }

    /// The command as a hook runs it (through npm's bin link).
    fn run(&self, args: &[&str]) -> Output {
        Command::new(self.prefix.join("bin/ctxkeep"))
            .args(args)
            .output()
            .unwrap()
    }
}

fn real_binary() -> Vec<u8> {
    fs::read(assert_cmd::cargo::cargo_bin!("ctxkeep")).unwrap()
}

fn version_line() -> String {
    format!("ctxkeep {}\n", env!("CARGO_PKG_VERSION"))
}

#[test]
fn twenty_first_runs_at_once_all_work_and_later_runs_start_no_node() {
    if node_missing() {
        return;
    }
    let binary = real_binary();
    for round in 0..3 {
        let install = Install::new(Some(&binary));
        let runs: Vec<_> = (0..20)
            .map(|_| {
                Command::new(install.prefix.join("bin/ctxkeep"))
                    .arg("--version")
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for run in runs {
            let out = run.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "round {round}: {err}");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                version_line(),
                "{err}"
            );
        }
        let script = fs::read_to_string(install.launcher()).unwrap();
        assert!(script.starts_with("#!/bin/sh\n"), "{}", &script[..60]);
        // Later runs need no Node: none is on the PATH now.
        let out = Command::new(install.prefix.join("bin/ctxkeep"))
            .arg("--version")
            .env("PATH", "/nonexistent")
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), version_line());
        // Exit codes pass through.
        assert_eq!(install.run(&["no-such-command"]).status.code(), Some(2));
    }
}

#[test]
fn a_broken_platform_binary_never_replaces_the_launcher_and_is_named() {
    if node_missing() {
        return;
    }
    let binary = real_binary();
    let damaged: [(&str, Vec<u8>); 3] = [
        ("empty", Vec::new()),
        ("truncated", binary[..binary.len().min(64 * 1024)].to_vec()),
        ("corrupt", b"\x7fELF garbage, not a program\n".repeat(100)),
    ];
    for (what, bytes) in damaged {
        let install = Install::new(Some(&bytes));
        let before = fs::read(install.launcher()).unwrap();
        for _ in 0..2 {
            let out = install.run(&["--version"]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(69), "{what}: {err}");
            assert_eq!(err.lines().count(), 1, "{what}: {err}");
            assert!(
                err.contains("@ctxkeep/cli-") && err.contains("npm install -g"),
                "{what}: {err}"
            );
            assert!(out.stdout.is_empty(), "{what}");
        }
        assert_eq!(fs::read(install.launcher()).unwrap(), before, "{what}");
        assert!(!install.launcher().with_file_name("ctxkeep.native").exists());
    }
}

#[test]
fn a_missing_platform_package_names_the_one_to_install() {
    if node_missing() {
        return;
    }
    let install = Install::new(None);
    let out = install.run(&["--version"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(69), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("is not installed")
            && err.contains("npm install -g @ctxkeep/cli-")
            && err.contains(env!("CARGO_PKG_VERSION")),
        "{err}"
    );
}
