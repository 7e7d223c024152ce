//! Every code a user can see, in one registry: exit codes and `verify`'s
//! finding codes, with their meanings. `--help`'s footer and the reference
//! tables in docs/codes.md are built from it (a test compares them).

/// The exit codes, a documented contract.
pub mod exit {
    pub const OK: u8 = 0;
    /// A check says no (verify found errors, `--fail-at` reached, a wrong nonce).
    pub const CHECK_FAILED: u8 = 1;
    pub const USAGE: u8 = 2;
    /// EX_DATAERR: a malformed state file or input.
    pub const DATA: u8 = 65;
    /// EX_NOINPUT: not initialized, or an input file is missing.
    pub const NO_INPUT: u8 = 66;
    /// EX_IOERR: disk full, read-only filesystem, other I/O failures.
    pub const IO: u8 = 74;
    /// EX_TEMPFAIL: lock timeout or a concurrent edit; retry.
    pub const TEMPFAIL: u8 = 75;
    /// EX_NOPERM: permission denied.
    pub const NO_PERM: u8 = 77;
    /// 128 + SIGINT: `relay` stopped by Ctrl-C or SIGTERM, after its checkpoint.
    pub const INTERRUPTED: u8 = 130;
}

/// One exit code and what it means (Markdown: backticks and `\|` allowed).
pub struct ExitCode {
    pub code: u8,
    pub meaning: &'static str,
}

/// One finding code (or a range `CK101–CK104` of codes that share a meaning).
pub struct FindingCode {
    pub code: &'static str,
    pub severity: &'static str,
    pub meaning: &'static str,
}

pub const EXIT_CODES: &[ExitCode] = &[
    ExitCode {
        code: exit::OK,
        meaning: "ok (also when stdout is closed early, e.g. `ctxkeep resume \\| head`)",
    },
    ExitCode {
        code: exit::CHECK_FAILED,
        meaning: "a check says no: `verify` found errors, a `checkpoint` by hand that would leave a required field empty, `--fail-at` reached, the recovered fields do not fit `--max-tokens`, `resume` refused by `max_handoffs_without_progress`, a wrong or outdated nonce given to `ack`, a `restore` that would overwrite local changes without `--force`, `relay` stopped stuck or out of sessions or time",
    },
    ExitCode {
        code: exit::USAGE,
        meaning: "usage error (bad flag or value: an empty `--decision` or `--question`, a `--model` not in the model table)",
    },
    ExitCode {
        code: exit::DATA,
        meaning: "bad data: malformed `project-state.md` (an unresolved merge conflict in it included), transcript or input; a checkpoint field, list or whole record over a limit of docs/reliability.md (refused, nothing written); a hand-edited checkpoint given to `resume`",
    },
    ExitCode {
        code: exit::NO_INPUT,
        meaning: "not initialized, no checkpoint yet, no resume to acknowledge yet, no snapshot to `restore`, or an input file is missing, is not a regular file (a directory, FIFO or device: never read) or is a symlink loop",
    },
    ExitCode {
        code: exit::IO,
        meaning: "I/O error: disk full, read-only file system, a write past the file-size limit (`ulimit -f`)",
    },
    ExitCode {
        code: exit::TEMPFAIL,
        meaning: "lock timeout, or the file changed under us (an editor saved during the write): retry",
    },
    ExitCode {
        code: exit::NO_PERM,
        meaning: "permission denied",
    },
    ExitCode {
        code: exit::INTERRUPTED,
        meaning: "`relay` interrupted (Ctrl-C or SIGTERM): the running agent was stopped and a checkpoint written",
    },
];

pub const FINDING_CODES: &[FindingCode] = &[
    FindingCode {
        code: "CK001",
        severity: "error",
        meaning: "format version missing or unsupported",
    },
    FindingCode {
        code: "CK002",
        severity: "error",
        meaning: "no checkpoint recorded yet (`verify` then exits 66, as `resume` does)",
    },
    FindingCode {
        code: "CK101–CK104",
        severity: "error",
        meaning: "phase, active_task, controlling_agent or next_action is empty",
    },
    FindingCode {
        code: "CK105",
        severity: "error",
        meaning: "checkpoint id is not `ckpt-NNNN`",
    },
    FindingCode {
        code: "CK106",
        severity: "error",
        meaning: "created_at is not an RFC 3339 time",
    },
    FindingCode {
        code: "CK110",
        severity: "error",
        meaning: "the checkpoint was edited by hand since ctxkeep sealed it (`resume` refuses it; `ctxkeep checkpoint` re-seals it)",
    },
    FindingCode {
        code: "CK111",
        severity: "error",
        meaning: "the checkpoint has no digest",
    },
    FindingCode {
        code: "CK120",
        severity: "error",
        meaning: "the marked block has no end marker: the file was cut short",
    },
    FindingCode {
        code: "CK121",
        severity: "error",
        meaning: "the checkpoint record stops mid-way (no digest, and other keys missing): cut short or damaged",
    },
    FindingCode {
        code: "CK122",
        severity: "warning",
        meaning: "the marked block is missing although there is a checkpoint",
    },
    FindingCode {
        code: "CK123",
        severity: "error",
        meaning: "an unresolved merge conflict (`<<<<<<<` … `>>>>>>>`) anywhere in the file, with its lines; `verify` exits 65 (`ctxkeep resolve` finishes the merge)",
    },
    FindingCode {
        code: "CK124",
        severity: "warning",
        meaning: "the marked block was edited by hand since ctxkeep wrote it; the next checkpoint rewrites it and keeps the edited text in `.ctxkeep/checkpoints/` (`replaced_block`)",
    },
    FindingCode {
        code: "CK125",
        severity: "error (a warning for a control character in prose, such as a request with pasted terminal output)",
        meaning: "a one-line value of the checkpoint (a file name, a command, a branch) holds a line break or a control character, or prose holds a control character: shown raw it would read as lines of ctxkeep's own (ctxkeep shows it escaped)",
    },
    FindingCode {
        code: "CK130",
        severity: "warning (always for a near miss of a known key such as `stags:`, which names the key meant; any other unknown key only with `--strict`)",
        meaning: "a top-level key ctxkeep does not read (kept as written; check for a typo)",
    },
    FindingCode {
        code: "CK201",
        severity: "error",
        meaning: "a field is a stand-in (`...`, `(not set)`, `none`, `-`) or template/help text",
    },
    FindingCode {
        code: "CK202",
        severity: "error",
        meaning: "a field still says `TBD`, `TODO`, `FIXME`, `XXX` or `???`",
    },
    FindingCode {
        code: "CK203",
        severity: "error",
        meaning: "an unfilled slot: `<name>`, `{name}`, `{{ var }}`, `[insert …]`",
    },
    FindingCode {
        code: "CK204",
        severity: "error",
        meaning: "an empty item in decisions or open questions, or an empty bullet in the notes",
    },
    FindingCode {
        code: "CK301",
        severity: "error",
        meaning: "a phrase that only makes sense with the lost conversation (\"as discussed\", \"that bug\", …)",
    },
    FindingCode {
        code: "CK302",
        severity: "error",
        meaning: "the next action is only pronouns and vague verbs (\"do it\", \"continue\", \"fix that\")",
    },
    FindingCode {
        code: "CK303",
        severity: "warning",
        meaning: "the next action does not start with an action verb",
    },
    FindingCode {
        code: "CK304",
        severity: "warning (error with `--strict`)",
        meaning: "`verify --probe`: the fresh reader could not resolve a phrase without the lost conversation (names the field and the phrase)",
    },
    FindingCode {
        code: "CK305",
        severity: "warning (error with `--strict`)",
        meaning: "`verify --probe`: the fresh reader restated a field differently from the checkpoint",
    },
    FindingCode {
        code: "CK306",
        severity: "warning (error with `--strict`)",
        meaning: "`verify --probe`: the probe command failed, timed out or answered nothing usable (quotes its stderr)",
    },
    FindingCode {
        code: "CK307",
        severity: "warning",
        meaning: "a remaining action item says nothing concrete (\"continue\", \"finish it\", \"idle\"), by the next action's rule",
    },
    FindingCode {
        code: "CK401",
        severity: "warning",
        meaning: "a task or decision id defined neither in the checkpoint nor in the repository",
    },
    FindingCode {
        code: "CK402",
        severity: "warning",
        meaning: "an issue number found neither in the checkpoint nor in the repository",
    },
    FindingCode {
        code: "CK403",
        severity: "warning",
        meaning: "a file path that is not in the repository nor among the checkpoint's files",
    },
    FindingCode {
        code: "CK410",
        severity: "error",
        meaning: "a file listed as uncommitted is gone and was not recorded as deleted",
    },
    FindingCode {
        code: "CK501",
        severity: "error",
        meaning: "the recorded HEAD is unknown to the repository",
    },
    FindingCode {
        code: "CK502",
        severity: "warning",
        meaning: "HEAD moved N commits since the checkpoint (stale), or is on another line of history",
    },
    FindingCode {
        code: "CK503",
        severity: "warning (error with `--strict`)",
        meaning: "uncommitted changes the checkpoint does not describe (ctxkeep's own, such as its `.gitignore` line or settings entries, are not counted)",
    },
    FindingCode {
        code: "CK510",
        severity: "warning",
        meaning: "`.gitattributes` names ctxkeep's merge driver but this clone's git config does not define it (run `ctxkeep init`); a note instead where `CI` is set",
    },
    FindingCode {
        code: "CK601",
        severity: "error",
        meaning: "the resume prompt does not fit the token budget even with optional sections left out",
    },
    FindingCode {
        code: "CK602",
        severity: "warning",
        meaning: "the resume prompt fits the budget only by leaving sections out",
    },
    FindingCode {
        code: "CK701",
        severity: "error",
        meaning: "a secret matching the redaction rules, anywhere in the file",
    },
    FindingCode {
        code: "CK801",
        severity: "warning",
        meaning: "the last resume was never confirmed: no reply carried the marker line its prompt asked for, and `ctxkeep ack` was not run (checked only when `.ctxkeep/` exists and `acknowledgement:` is not `false`)",
    },
];

/// The exit-code table as it stands in docs/codes.md.
pub fn exit_table() -> String {
    let mut t = String::from("| Code | Meaning |\n|---|---|\n");
    for e in EXIT_CODES {
        t.push_str(&format!("| {} | {} |\n", e.code, e.meaning));
    }
    t
}

/// The finding-code table as it stands in docs/codes.md.
pub fn finding_table() -> String {
    let mut t = String::from("| Code | Severity | Meaning |\n|---|---|---|\n");
    for f in FINDING_CODES {
        t.push_str(&format!(
            "| {} | {} | {} |\n",
            f.code, f.severity, f.meaning
        ));
    }
    t
}

/// `--help`'s footer: the exit codes as plain text.
pub fn exit_help() -> &'static str {
    // Built once: clap asks for it for every subcommand on every run, hooks included.
    static HELP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HELP.get_or_init(|| {
        let mut t = String::from("Exit codes:\n");
        for e in EXIT_CODES {
            let plain = e.meaning.replace("\\|", "|").replace('`', "");
            t.push_str(&format!("  {:<3} {plain}\n", e.code));
        }
        t.push_str("\nFinding codes of `verify`: see `ctxkeep help verify` and docs/codes.md.");
        t
    })
}

/// A subcommand's `--help` footer: where the exit codes are, once (the
/// table is in `ctxkeep help exit-codes` and docs/codes.md, not in every page).
pub fn exit_help_short() -> &'static str {
    "Exit codes: 0 success; the table: `ctxkeep help exit-codes`, the man page, docs/codes.md."
}

/// Whether `code` (e.g. `CK102`) is in the registry, alone or in a range.
pub fn is_finding_code(code: &str) -> bool {
    FINDING_CODES.iter().any(|f| match f.code.split_once('–') {
        Some((lo, hi)) => lo <= code && code <= hi && lo.len() == code.len(),
        None => f.code == code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_the_checks_raise_is_registered() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/verify/checks");
        let mut seen = 0;
        // The code files, a family's folder of them included (`wording/*.rs`); the word lists
        // beside them are data (`wording/*.txt`).
        let mut folders = vec![dir];
        let mut files = Vec::new();
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files.push(path);
                }
            }
        }
        for path in files {
            let text = std::fs::read_to_string(path).unwrap();
            for (at, _) in text.match_indices("\"CK") {
                let code = &text[at + 1..(at + 6).min(text.len())];
                if code[2..].chars().all(|c| c.is_ascii_digit()) {
                    assert!(is_finding_code(code), "{code} is raised but not registered");
                    seen += 1;
                }
            }
        }
        assert!(seen > 30, "the scan found only {seen} codes");
    }

    /// The table under `heading` in docs/codes.md, header row included.
    fn docs_table(heading: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/codes.md");
        let text = std::fs::read_to_string(path).unwrap();
        let section = text
            .split(heading)
            .nth(1)
            .expect("heading in docs/codes.md");
        section
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    #[test]
    fn the_reference_tables_are_the_registry() {
        assert_eq!(docs_table("## Exit codes"), exit_table());
        assert_eq!(docs_table("## Finding codes"), finding_table());
    }

    #[test]
    fn ranges_and_single_codes_are_found() {
        assert!(is_finding_code("CK103"));
        assert!(is_finding_code("CK801"));
        assert!(!is_finding_code("CK109"));
        assert!(!is_finding_code("CK999"));
    }
}
