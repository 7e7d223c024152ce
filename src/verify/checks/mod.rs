//! Findings about a checkpoint: stable codes, a severity, the field, the
//! line in project-state.md and a message that says how to fix it.
//!
//! One module per concern, numbered by hundreds: CK0xx/CK1xx structure,
//! CK2xx placeholders, CK3xx cold-read, CK4xx references, CK5xx git,
//! CK6xx size, CK7xx secrets, CK8xx the session chain. Codes are a contract: never renumber.

mod handoff;
mod references;
mod repository;
mod secrets;
mod size;
mod structure;
mod wording;

use std::path::PathBuf;

use serde::Serialize;

use crate::domain::checkpoint::{Checkpoint, Field};
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;

pub use structure::{conflicts, structural};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub code: &'static str,
    pub severity: Severity,
    pub field: Option<String>,
    pub line: Option<usize>,
    pub message: String,
}

impl Finding {
    pub fn new(
        code: &'static str,
        severity: Severity,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            code,
            severity,
            field: field.map(str::to_string),
            line: None,
            message: message.into(),
        }
    }
}

impl Finding {
    fn at(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }
}

/// What the checks look at: the parsed file and the repository around it.
pub struct Subject<'a> {
    pub sf: &'a StateFile,
    pub ws: &'a Workspace,
    pub strict: bool,
    /// Token budget of the size check; `None` means the config's.
    pub max_tokens: Option<usize>,
    /// Judge the repository as the next commit will hold it (git's index):
    /// no working-tree or clone-local findings.
    pub staged: bool,
    /// Only errors are wanted: what can only warn is not looked for.
    pub errors_only: bool,
}

/// Every finding, plus notes on checks that could not run (no git, ...).
#[derive(Debug, Default)]
pub struct Outcome {
    pub findings: Vec<Finding>,
    pub notes: Vec<String>,
}

/// Runs every check. A file without a usable checkpoint (CK001, CK002) gets
/// only the structural findings: the other checks have nothing to read.
pub fn all(s: &Subject) -> anyhow::Result<Outcome> {
    let mut out = Outcome {
        findings: structural(s.sf, s.strict),
        notes: Vec::new(),
    };
    let Some(c) = s.sf.fm.checkpoint.as_ref() else {
        return Ok(out);
    };
    if out
        .findings
        .iter()
        .any(|f| f.code == "CK001" || f.code == "CK002")
    {
        return Ok(out);
    }
    let loc = Locator::new(s.sf);
    let repo = Repo::open(s.ws, s.staged);
    out.findings.extend(wording::check(c, &loc, s.errors_only));
    out.findings
        .extend(references::check(c, s.sf, &repo, &loc, s.errors_only));
    repository::check(c, s, &repo, &loc, &mut out);
    out.findings.extend(size::check(c, s, &loc)?);
    out.findings.extend(secrets::check(s.sf, &loc));
    // The session chain is this clone's own: a commit does not carry it,
    // and a pre-commit hook is no place to nag about an ack.
    if !s.staged && !in_git_hook() && !s.errors_only {
        out.findings.extend(handoff::check(s));
    }
    // Grouped by check, then in file order: a stable, readable report.
    crate::system::sorting::sort_by_key(&mut out.findings, |f| (f.code, f.line));
    Ok(out)
}

/// Whether ctxkeep runs inside a git hook (git sets `GIT_INDEX_FILE` for
/// the commit hooks) or under the pre-commit framework (`PRE_COMMIT`).
fn in_git_hook() -> bool {
    ["GIT_INDEX_FILE", "PRE_COMMIT"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()))
}

/// The repository around the state file, read once for all checks.
pub(crate) struct Repo {
    /// The git top level, or the state file's folder without git.
    pub top: PathBuf,
    /// The state file, relative to `top`.
    pub state_rel: PathBuf,
    /// Why git cannot be used, if it cannot.
    pub no_git: Option<String>,
    /// Files git tracks (relative to `top`); without git, the files found
    /// walking the folder. Listed on first use ([`Repo::files`]): a checkpoint whose named
    /// paths are all on disk never lists a large repository's tree.
    files: std::cell::OnceCell<Vec<String>>,
    /// Only what git's index holds counts as present.
    pub staged: bool,
}

impl Repo {
    /// Whether `rel` (relative to `top`) is there: on disk, or with
    /// `--staged` in git's index (a file or a folder of them).
    pub fn present(&self, rel: &str) -> bool {
        if !self.staged {
            return self.top.join(rel).symlink_metadata().is_ok();
        }
        let dir = format!("{}/", rel.trim_end_matches('/'));
        self.files().iter().any(|f| f == rel || f.starts_with(&dir))
    }

    /// Every file git tracks (without git, found walking the folder), listed once.
    pub fn files(&self) -> &[String] {
        self.files.get_or_init(|| match self.no_git {
            None => crate::system::git::tracked_files(&self.top).unwrap_or_default(),
            Some(_) => walk(&self.top),
        })
    }

    /// Whether a tracked file matches: `matches` over the list when it is already read (or
    /// there is no git), else git asked about `pathspecs` alone (git's wildcards, where `*`
    /// also matches `/`), which spares listing the whole tree for one path.
    pub fn tracks_any(&self, pathspecs: &[String], matches: impl Fn(&str) -> bool) -> bool {
        if self.no_git.is_some() || self.files.get().is_some() {
            return self.files().iter().any(|f| matches(f));
        }
        crate::system::git::tracks_any(&self.top, pathspecs).unwrap_or(false)
    }

    fn open(ws: &Workspace, staged: bool) -> Repo {
        let state = crate::system::fsutil::resolve_target(&ws.state_path);
        // The repository check needs the status: read it now, with the top level beside it
        // (one reading, shared with every later check; `--staged` reads only the index).
        if !staged {
            let _ = crate::system::git::state(&ws.root, &[]);
        }
        let (top, no_git) = match crate::system::git::toplevel(&ws.root) {
            Ok(t) => (t, None),
            Err(why) => (ws.root.clone(), Some(why.to_string())),
        };
        // git prints the real path; the state path may go through a symlink.
        let top_real = std::fs::canonicalize(&top).unwrap_or_else(|_| top.clone());
        let state_real = std::fs::canonicalize(&state).unwrap_or(state);
        let state_rel = state_real
            .strip_prefix(&top_real)
            .map(PathBuf::from)
            .unwrap_or_else(|_| PathBuf::from(crate::domain::workspace::STATE_FILE));
        Repo {
            top,
            state_rel,
            no_git,
            files: std::cell::OnceCell::new(),
            staged,
        }
    }
}

/// Files under `root` (relative), skipping hidden folders and build output,
/// for a project that is not a git repository. Bounded.
fn walk(root: &std::path::Path) -> Vec<String> {
    const MAX_FILES: usize = 20_000;
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "node_modules" {
                    stack.push(e.path());
                }
            } else if let Ok(rel) = e.path().strip_prefix(root) {
                out.push(rel.to_string_lossy().into_owned());
                if out.len() >= MAX_FILES {
                    return out;
                }
            }
        }
    }
    out
}

/// One checkpoint field (or one item of a list field) and its text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Text<'a> {
    pub field: Field,
    /// 0-based index in `decisions` / `open_questions`.
    pub item: Option<usize>,
    pub text: &'a str,
}

impl Text<'_> {
    /// How a message names it: `next_action`, `decisions item 2`.
    pub fn label(&self) -> String {
        match self.item {
            Some(i) => format!("`{}` item {}", self.field, i + 1),
            None => format!("`{}`", self.field),
        }
    }
}

/// The checkpoint's prose fields, in record order.
pub(crate) fn texts(c: &Checkpoint) -> Vec<Text<'_>> {
    let text = |field: Field, text| Text {
        field,
        item: None,
        text,
    };
    let mut v: Vec<Text> = Field::REQUIRED
        .into_iter()
        .filter_map(|f| Some(text(f, f.text(c)?)))
        .collect();
    for field in [Field::Decisions, Field::OpenQuestions] {
        let list = field.items(c).into_iter().flatten();
        v.extend(list.enumerate().map(|(i, t)| Text {
            field,
            item: Some(i),
            text: t,
        }));
    }
    v.push(text(Field::Notes, &c.notes));
    v
}

/// Finds the line in project-state.md of a checkpoint field, a list item,
/// or a line inside a block scalar (`notes: |`).
pub(crate) struct Locator<'a> {
    sf: &'a StateFile,
    lines: Vec<&'a str>,
}

impl<'a> Locator<'a> {
    pub fn new(sf: &'a StateFile) -> Locator<'a> {
        Locator {
            sf,
            lines: sf.original.lines().collect(),
        }
    }

    /// The line of `text`'s field or item; `line_in_value` (0-based) moves
    /// into a block scalar, where the value's lines are the file's.
    pub fn text_line(&self, t: &Text, line_in_value: usize) -> Option<usize> {
        let key = self.field_line(t.field.key())?;
        let key_text = self.lines.get(key - 1)?;
        let indent = key_text.len() - key_text.trim_start().len();
        // The key may be missing (a flow mapping written by hand): then the
        // line found is the record's, and there is no value to look into.
        let Some(value) = key_text
            .trim_start()
            .strip_prefix(t.field.key())
            .and_then(|r| r.strip_prefix(':'))
            .map(str::trim)
        else {
            return Some(key);
        };
        match t.item {
            Some(i) if value.is_empty() => {
                // Block sequence: count `- ` items indented under the key.
                let mut n = 0;
                for (j, l) in self.lines.iter().enumerate().skip(key) {
                    let ind = l.len() - l.trim_start().len();
                    if l.trim().is_empty() {
                        continue;
                    }
                    if ind <= indent {
                        break;
                    }
                    if l.trim_start().starts_with('-') {
                        if n == i {
                            return Some(j + 1);
                        }
                        n += 1;
                    }
                }
                Some(key)
            }
            None if value.starts_with(['|', '>']) => Some(key + 1 + line_in_value),
            _ => Some(key),
        }
    }

    pub fn field_line(&self, field: &str) -> Option<usize> {
        self.sf
            .nested_key_line("checkpoint", field)
            .or_else(|| self.sf.key_line("checkpoint"))
    }

    /// The first line of the file (1-based) that belongs to the body.
    pub fn body_first_line(&self) -> usize {
        let front = &self.sf.original[..self.sf.original.len() - self.sf.body.len()];
        front.matches('\n').count() + 1
    }

    /// The 1-based line of a byte offset in the file.
    pub fn line_of_offset(&self, offset: usize) -> usize {
        let end = offset.min(self.sf.original.len());
        let end = (0..=end)
            .rev()
            .find(|&i| self.sf.original.is_char_boundary(i))
            .unwrap_or(0);
        self.sf.original[..end].matches('\n').count() + 1
    }

    /// Which key a file line belongs to: a checkpoint field, another
    /// top-level key, or `body`.
    pub fn field_at(&self, line: usize) -> Option<String> {
        if line >= self.body_first_line() {
            return Some("body".into());
        }
        let top = self
            .sf
            .mapping
            .keys()
            .filter_map(|k| k.as_str())
            .filter_map(|k| self.sf.key_line(k).map(|l| (l, k)))
            .filter(|(l, _)| *l <= line)
            .max()?;
        if top.1 != "checkpoint" {
            return Some(top.1.to_string());
        }
        let fields = self.sf.mapping.get("checkpoint")?.as_mapping()?;
        fields
            .keys()
            .filter_map(|k| k.as_str())
            .filter_map(|k| self.sf.nested_key_line("checkpoint", k).map(|l| (l, k)))
            .filter(|(l, _)| *l <= line)
            .max()
            .map(|(_, k)| k.to_string())
            .or(Some("checkpoint".into()))
    }

    /// The first front-matter line containing `needle` (for dirty paths).
    pub fn find_in_front(&self, needle: &str) -> Option<usize> {
        let end = self.body_first_line();
        self.lines
            .iter()
            .take(end.saturating_sub(1))
            .position(|l| l.contains(needle))
            .map(|i| i + 1)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use serde::Deserialize;

    use super::*;
    use crate::domain::checkpoint::{DirtyFile, GitState};

    pub(super) fn clean() -> Checkpoint {
        Checkpoint {
            id: "ckpt-0003".into(),
            created_at: "2026-01-15T10:00:00Z".into(),
            trigger: "manual".into(),
            phase: "implementing the parser".into(),
            active_task: "split front matter in src/state.rs".into(),
            controlling_agent: "claude-code".into(),
            next_action: "run cargo test and fix the CRLF case".into(),
            ..Default::default()
        }
    }

    /// The file ctxkeep would write for `c`, sealed.
    pub(super) fn file_for(c: &Checkpoint) -> String {
        let mut c = c.clone();
        c.seal();
        format!(
            "---\nctxkeep: 1\n{}---\n# Notes\n\n<!-- ctxkeep:begin -->\nblock\n<!-- ctxkeep:end -->\n",
            crate::domain::yaml_emit::emit_key("checkpoint", &c.to_json(), "\n")
        )
    }

    pub(super) fn parse(text: &str) -> StateFile {
        StateFile::parse(Path::new("project-state.md"), text.to_string()).unwrap()
    }

    /// A folder with the files the corpus refers to, as a repository without git.
    fn repo() -> (tempfile::TempDir, Repo) {
        let dir = tempfile::tempdir().unwrap();
        for (p, text) in [
            ("src/state.rs", "// state\n"),
            ("src/lexer.rs", "// lexer\n"),
            ("README.md", "# demo\n"),
            ("docs/adr/0007-use-sqlite.md", "# Use SQLite\n"),
            ("DECISIONS.md", "## DEC-0021: one lexer for both formats\n"),
            ("CHANGELOG.md", "- fixed CRLF loss (#42)\n"),
        ] {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let repo = Repo {
            top: dir.path().to_path_buf(),
            state_rel: PathBuf::from("project-state.md"),
            no_git: Some("not a git repository".into()),
            files: std::cell::OnceCell::new(),
            staged: false,
        };
        (dir, repo)
    }

    /// The checks that read only the file and the folder (no git, no tokens).
    fn text_codes(c: &Checkpoint, repo: &Repo) -> Vec<Finding> {
        text_findings(c, repo, false)
    }

    fn text_findings(c: &Checkpoint, repo: &Repo, errors_only: bool) -> Vec<Finding> {
        let text = file_for(c);
        let sf = parse(&text);
        let loc = Locator::new(&sf);
        let cp = sf.fm.checkpoint.clone().unwrap();
        let mut f = structural(&sf, false);
        f.extend(wording::check(&cp, &loc, errors_only));
        f.extend(references::check(&cp, &sf, repo, &loc, errors_only));
        f
    }

    /// What a checkpoint warns of as soon as it writes ([`Subject::errors_only`]) is what
    /// `verify` reports as errors: for every case of the corpus, and with its items as the
    /// remaining steps and a lost uncommitted file.
    #[test]
    fn errors_only_finds_every_error_a_full_run_finds() {
        let cases: Vec<Case> =
            serde_yaml::from_str(include_str!("../../../tests/corpus/checkpoints.yaml")).unwrap();
        let (_dir, repo) = repo();
        let errors = |f: Vec<Finding>| -> Vec<(&'static str, Option<usize>, String)> {
            f.into_iter()
                .filter(|f| f.severity == Severity::Error)
                .map(|f| (f.code, f.line, f.message))
                .collect()
        };
        let mut with_errors = 0;
        for case in &cases {
            let mut c = case.checkpoint();
            c.remaining = vec![c.next_action.clone()];
            c.git = Some(GitState {
                dirty: vec![DirtyFile {
                    path: "src/gone.rs".into(),
                    status: "modified".into(),
                }],
                ..GitState::default()
            });
            let full = errors(text_findings(&c, &repo, false));
            with_errors += usize::from(full.len() > 1);
            assert_eq!(
                errors(text_findings(&c, &repo, true)),
                full,
                "{}",
                case.name
            );
        }
        assert!(with_errors >= 10, "the corpus raises errors: {with_errors}");
    }

    #[derive(Deserialize)]
    struct Case {
        name: String,
        expect: Option<String>,
        fields: crate::domain::checkpoint::Fields,
    }

    impl Case {
        /// A clean checkpoint with the case's fields set.
        fn checkpoint(&self) -> Checkpoint {
            let mut c = clean();
            let f = self.fields.clone();
            macro_rules! set { ($($x:ident),*) => { $( if let Some(v) = f.$x { c.$x = v; } )* } }
            set!(
                phase,
                active_task,
                controlling_agent,
                next_action,
                decisions,
                open_questions,
                notes
            );
            c
        }
    }

    #[test]
    fn corpus_each_bad_checkpoint_raises_its_one_code_and_good_ones_none() {
        let cases: Vec<Case> =
            serde_yaml::from_str(include_str!("../../../tests/corpus/checkpoints.yaml")).unwrap();
        assert!(cases.len() >= 30, "the corpus keeps at least 30 cases");
        let (_dir, repo) = repo();
        let mut failures = Vec::new();
        for case in &cases {
            let c = case.checkpoint();
            let found = text_codes(&c, &repo);
            let codes: BTreeSet<&str> = found.iter().map(|x| x.code).collect();
            let want: BTreeSet<&str> = case.expect.iter().map(String::as_str).collect();
            if codes != want {
                failures.push(format!("{}: want {want:?}, got {found:#?}", case.name));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn findings_point_at_the_item_and_the_block_scalar_line() {
        let (_dir, repo) = repo();
        let mut c = clean();
        c.decisions = vec!["keep serde_yaml".into(), "use TBD for now".into()];
        let text = file_for(&c);
        let f = text_codes(&c, &repo);
        let lines: Vec<&str> = text.lines().collect();
        let line = f[0].line.unwrap();
        assert_eq!(f[0].code, "CK202");
        assert!(
            lines[line - 1].contains("use TBD for now"),
            "{line}: {text}"
        );

        // A hand-written block scalar: the finding names the line inside it.
        let text = file_for(&clean()).replace(
            "  digest:",
            "  notes: |\n    lexer done\n    same as before for the parser\n  digest:",
        );
        let sf = parse(&text);
        let loc = Locator::new(&sf);
        let f = wording::check(sf.fm.checkpoint.as_ref().unwrap(), &loc, false);
        assert_eq!(f.len(), 1, "{f:?}");
        let line = f[0].line.unwrap();
        assert!(
            text.lines()
                .nth(line - 1)
                .unwrap()
                .contains("same as before"),
            "{line}: {text}"
        );
        assert_eq!(f[0].field.as_deref(), Some("notes"));
    }

    #[test]
    fn a_record_cut_mid_way_is_one_error_not_a_list_of_empty_fields() {
        let text = file_for(&clean());
        let cut: String = text
            .lines()
            .take_while(|l| !l.contains("controlling_agent"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            + "---\n<!-- ctxkeep:begin -->\n<!-- ctxkeep:end -->\n";
        let f = structural(&parse(&cut), false);
        let codes: Vec<&str> = f.iter().map(|x| x.code).collect();
        assert_eq!(codes, ["CK121"], "{f:?}");
        assert!(
            f[0].message.contains("stops after `active_task`"),
            "{}",
            f[0].message
        );
        assert!(f[0].message.contains("`next_action`"));
        // Only the digest missing: hand-written, not cut.
        let no_digest = text
            .lines()
            .filter(|l| !l.contains("digest"))
            .map(|l| format!("{l}\n"))
            .collect::<String>();
        let codes: Vec<&str> = structural(&parse(&no_digest), false)
            .iter()
            .map(|x| x.code)
            .collect();
        assert_eq!(codes, ["CK111"]);
    }

    #[test]
    fn body_cut_short_missing_block_and_conflicts() {
        let text = file_for(&clean());
        let codes = |t: &str| -> Vec<&'static str> {
            structural(&parse(t), false)
                .iter()
                .map(|x| x.code)
                .collect()
        };
        assert!(codes(&text).is_empty());
        let cut = &text[..text.find("<!-- ctxkeep:end -->").unwrap() - 3];
        assert_eq!(codes(cut), ["CK120"]);
        let f = structural(&parse(cut), false);
        let line = f[0].line.unwrap();
        assert_eq!(cut.lines().nth(line - 1), Some("<!-- ctxkeep:begin -->"));
        let gone = &text[..text.find("<!-- ctxkeep:begin -->").unwrap()];
        assert_eq!(codes(gone), ["CK122"]);
        let conflict = text.replace("block\n", "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> other\n");
        assert_eq!(codes(&conflict), ["CK123"]);
        // A setext heading underline is not a conflict.
        let heading = text.replace("# Notes\n", "Notes\n=======\n");
        assert!(codes(&heading).is_empty());
    }

    #[test]
    fn dirty_paths_gone_from_disk_unless_recorded_as_deleted() {
        let (_dir, repo) = repo();
        let mut c = clean();
        c.git = Some(GitState {
            branch: Some("main".into()),
            head: None,
            dirty: vec![
                DirtyFile {
                    path: "src/lexer.rs".into(),
                    status: "modified".into(),
                },
                DirtyFile {
                    path: "src/old.rs".into(),
                    status: "deleted".into(),
                },
                DirtyFile {
                    path: "src/scratch.rs".into(),
                    status: "untracked".into(),
                },
            ],
            dirty_omitted: 0,
            snapshot: None,
        });
        let f = text_codes(&c, &repo);
        let codes: Vec<&str> = f.iter().map(|x| x.code).collect();
        assert_eq!(codes, ["CK410"], "{f:?}");
        assert!(f[0].message.contains("src/scratch.rs"));
        let text = file_for(&c);
        assert!(text
            .lines()
            .nth(f[0].line.unwrap() - 1)
            .unwrap()
            .contains("src/scratch.rs"));
    }

    #[test]
    fn field_at_names_checkpoint_fields_other_keys_and_the_body() {
        let mut c = clean();
        c.notes = "n".into();
        let text = file_for(&c).replace("ctxkeep: 1\n", "ctxkeep: 1\nowner: alice\n");
        let sf = parse(&text);
        let loc = Locator::new(&sf);
        let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
        assert_eq!(loc.field_at(line_of("owner")).as_deref(), Some("owner"));
        assert_eq!(loc.field_at(line_of("notes:")).as_deref(), Some("notes"));
        assert_eq!(loc.field_at(line_of("# Notes")).as_deref(), Some("body"));
        let off = text.find("# Notes").unwrap();
        assert_eq!(loc.line_of_offset(off), line_of("# Notes"));
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn text_checks_never_panic(
                next in "(\\PC|\n|`|\"|<|>|\\{|\\}|#|-|/|\\.|:)*",
                notes in "(\\PC|\n|- |\\?)*",
                item in "\\PC*",
                head in "\\PC{0,20}",
            ) {
                let (_dir, repo) = repo();
                let mut c = clean();
                c.next_action = next;
                c.notes = notes;
                c.decisions = vec![item];
                c.git = Some(GitState { head: Some(head), ..GitState::default() });
                let _ = text_codes(&c, &repo);
            }
        }
    }
}
