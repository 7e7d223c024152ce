//! Text rendered from templates: the defaults in `templates/` are compiled
//! in; a project may override any of them from a committed folder named by
//! the `templates` key, so a team and its CI render the same text.

use std::path::{Path, PathBuf};

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use crate::system::error::Error;

/// (name, default text) for every template ctxkeep renders.
pub const DEFAULTS: &[(&str, &str)] = &[
    (
        "project-state.md",
        include_str!("../../templates/project-state.md"),
    ),
    ("state.md", include_str!("../../templates/state.md")),
    ("resume.md", include_str!("../../templates/resume.md")),
    ("stage.md", include_str!("../../templates/stage.md")),
];

pub const DEFAULT_DIR: &str = "ctxkeep-templates";

/// The most characters of one recorded text a template shows.
const MAX_RECORDED_CHARS: usize = 1_000;

/// A checkpoint's text field holds at most 16 KiB (see `state::limits`).
const MAX_FIELD_CHARS: usize = 16 * 1024;

/// The largest template file read from a project's folder.
const MAX_TEMPLATE_BYTES: u64 = 256 * 1024;

/// The instructions one render may run: a committed template is untrusted (a clone's nested
/// loops must not hang every `SessionStart` hook). The default templates use a few thousand
/// on a large checkpoint; this bounds a render to well under a second.
const FUEL: u64 = 2_000_000;

/// The most bytes one render may produce (the resume prompt is cut far below this).
const MAX_OUTPUT_BYTES: usize = 4 * 1024 * 1024;

/// An environment compiled from these texts (one per [`DEFAULTS`] entry) of this folder.
type Compiled = (Option<PathBuf>, Vec<String>, Environment<'static>);

pub struct Templates {
    env: Environment<'static>,
    /// Where overrides come from, for error messages.
    dir: Option<PathBuf>,
}

impl Templates {
    /// Defaults, overridden by files in `root/dir` when the config names one.
    pub fn load(root: &Path, dir: Option<&str>) -> Result<Templates, Error> {
        let dir = dir.map(|d| root.join(d));
        let mut texts = Vec::with_capacity(DEFAULTS.len());
        for (name, default) in DEFAULTS {
            texts.push(match &dir {
                Some(d) if d.join(name).is_file() => {
                    // Never read from outside the project (a template linked to `~/.netrc`
                    // would put the password in the model's context).
                    crate::system::fsutil::confined(root, &d.join(name))?;
                    crate::system::fsutil::read_text(&d.join(name), MAX_TEMPLATE_BYTES)?
                }
                _ => (*default).to_string(),
            });
        }
        // A checkpoint renders its block, then its checks render the resume prompt (on a
        // thread of their own, beside the write): the same texts are compiled once per process
        // (2.8 M instructions each time), kept by the exact texts and folder.
        static COMPILED: std::sync::Mutex<Option<Compiled>> = std::sync::Mutex::new(None);
        let kept = COMPILED.lock().ok().and_then(|last| match &*last {
            Some((d, t, env)) if *d == dir && *t == texts => Some(env.clone()),
            _ => None,
        });
        if let Some(env) = kept {
            return Ok(Templates { env, dir });
        }
        let env = compile(dir.as_deref(), &texts)?;
        if let Ok(mut last) = COMPILED.lock() {
            *last = Some((dir.clone(), texts, env.clone()));
        }
        Ok(Templates { env, dir })
    }

    pub fn render<S: Serialize>(&self, name: &str, ctx: S) -> Result<String, Error> {
        let path = template_path(self.dir.as_deref(), name);
        let tmpl = self
            .env
            .get_template(name)
            .map_err(|e| template_error(&path, &e))?;
        let mut out = Bounded(Vec::new());
        let rendered = tmpl.render_captured_to(ctx, &mut out).map(drop);
        rendered.map_err(|e| {
            if out.0.len() > MAX_OUTPUT_BYTES {
                Error::data(
                    &path,
                    format!(
                        "template does not render: its output is over {MAX_OUTPUT_BYTES} bytes"
                    ),
                )
            } else {
                template_error(&path, &e)
            }
        })?;
        String::from_utf8(out.0).map_err(|_| Error::data(&path, "template output is not UTF-8"))
    }
}

impl Templates {
    /// A new state file's text around its marked block `managed` (rendered by ctxkeep from
    /// `state.md`, so printed as it is).
    pub fn render_page(&self, managed: &str) -> Result<String, Error> {
        self.render(
            "project-state.md",
            minijinja::context! { managed => minijinja::Value::from_safe_string(managed.to_string()) },
        )
    }
}

/// The environment ctxkeep renders with, `texts` (one per [`DEFAULTS`] entry, in order)
/// compiled; `dir` names an override in errors.
fn compile(dir: Option<&Path>, texts: &[String]) -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    env.set_fuel(Some(FUEL));
    // Every value a template prints is data: a file name with a line break or a recorded
    // escape sequence must not write lines in ctxkeep's voice ("## SYSTEM", "Next action:")
    // into the marked block or the prompt. Text that ctxkeep rendered itself and a field
    // written whole by a checkpoint's author (`notes`) are marked `safe` and keep their lines.
    env.set_formatter(|out, state, value| {
        if value.is_safe() {
            let text = value.to_string();
            return write_str(out, &crate::system::recorded::escape_controls(&text));
        }
        match value.as_str() {
            Some(text) => write_str(out, &crate::system::recorded::escape_line(text)),
            None => minijinja::escape_formatter(out, state, value),
        }
    });
    // Text recorded from a session, shown as data: one line, bounded,
    // controls escaped (`recorded`), or as a code span it cannot close (`code`).
    env.add_filter("recorded", |text: String| {
        crate::system::recorded::one_line(&text, MAX_RECORDED_CHARS)
    });
    // A field someone wrote by hand, shown as recorded data: one line, controls escaped,
    // never cut short of what the record holds.
    env.add_filter("field", |text: String| {
        crate::system::recorded::one_line(&text, MAX_FIELD_CHARS)
    });
    env.add_filter("code", |text: String| {
        crate::system::recorded::code_span(&text, MAX_RECORDED_CHARS)
    });
    for ((name, _), text) in DEFAULTS.iter().zip(texts) {
        let path = template_path(dir, name);
        env.add_template_owned(name.to_string(), text.clone())
            .map_err(|e| template_error(&path, &e))?;
    }
    Ok(env)
}

fn write_str(out: &mut minijinja::Output, text: &str) -> Result<(), minijinja::Error> {
    out.write_str(text)
        .map_err(|_| minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "cannot write"))
}

/// The render's output, refused past [`MAX_OUTPUT_BYTES`].
struct Bounded(Vec<u8>);

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        if self.0.len() > MAX_OUTPUT_BYTES {
            return Err(std::io::Error::other("template output too large"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn template_path(dir: Option<&Path>, name: &str) -> PathBuf {
    match dir {
        Some(d) if d.join(name).is_file() => d.join(name),
        _ => PathBuf::from("templates (built-in)").join(name),
    }
}

fn template_error(path: &Path, e: &minijinja::Error) -> Error {
    let line = e
        .line()
        .map(|l| format!(" at line {l}"))
        .unwrap_or_default();
    let detail = match e.kind() {
        minijinja::ErrorKind::OutOfFuel => {
            format!(" (its limit of {FUEL} steps: a loop without bound?)")
        }
        _ => e.detail().map(|d| format!(": {d}")).unwrap_or_default(),
    };
    Error::data(
        path,
        format!("template does not render{line}: {}{detail}", e.kind()),
    )
}

/// Writes the defaults into `root/dir` for editing; existing files are kept.
/// Returns the files written.
pub fn eject(root: &Path, dir: &str) -> Result<Vec<PathBuf>, Error> {
    let target = root.join(dir);
    crate::system::fsutil::confined(root, &target)?;
    crate::system::fsutil::ensure_dir(&target)?;
    let mut written = Vec::new();
    for (name, text) in DEFAULTS {
        let path = target.join(name);
        if crate::system::fsutil::create_new(&path, text.as_bytes())? {
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn full_context() -> serde_json::Value {
        let checkpoint = json!({
            "id": "ckpt-0007", "created_at": "2026-01-15T10:00:00Z", "trigger": "stage-90",
            "phase": "PHASE", "active_task": "TASK", "controlling_agent": "AGENT",
            "next_action": "NEXT", "decisions": ["DECISION"], "open_questions": ["QUESTION"],
            "notes": "NOTES",
            "git": {"branch": "main", "head": "abc123", "dirty": [{"path": "DIRTY.rs", "status": "modified"}]},
            "budget": {"tokens": 180000, "window": 200000, "percent": 90.0},
            "digest": "sha256:00"
        });
        json!({
            "checkpoint": checkpoint,
            "history": [{"id": "ckpt-0006", "created_at": "t", "phase": "OLDPHASE", "next_action": "OLDNEXT"}],
            "changes": {"note": null, "commits_since": 2, "head_now": "def456",
                        "newly_dirty": [{"path": "NEW.rs", "status": "untracked"}], "now_clean": ["GONE.rs"]},
            "include": {"history": true, "notes": true, "tree": true, "changes": true, "questions": true, "decisions": true},
            "stuck": "STUCK", "nonce": "12345678", "handoff": null,
            "ack_request": "ACK 12345678",
            "managed": "MANAGED",
            "percent": 90.0, "tokens": 180000, "window": 200000,
            "stage": {"name": "stage-90", "action": "checkpoint", "at": 90},
        })
    }

    #[test]
    fn a_template_changed_between_two_loads_renders_its_new_text() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("tpl");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("stage.md"), "first {{ percent }}").unwrap();
        let first = Templates::load(dir.path(), Some("tpl")).unwrap();
        assert_eq!(
            first.render("stage.md", json!({"percent": 1})).unwrap(),
            "first 1"
        );
        // The same texts again: the same output (compiled once, reused).
        let again = Templates::load(dir.path(), Some("tpl")).unwrap();
        assert_eq!(
            again.render("stage.md", json!({"percent": 2})).unwrap(),
            "first 2"
        );
        std::fs::write(folder.join("stage.md"), "second {{ percent }}").unwrap();
        let second = Templates::load(dir.path(), Some("tpl")).unwrap();
        assert_eq!(
            second.render("stage.md", json!({"percent": 3})).unwrap(),
            "second 3"
        );
        // The defaults when the folder is not named.
        let defaults = Templates::load(dir.path(), None).unwrap();
        assert!(!defaults
            .render("stage.md", full_context())
            .unwrap()
            .starts_with("second"));
    }

    #[test]
    fn the_state_file_links_to_the_repository_cargo_names() {
        let link = format!("]({})", env!("CARGO_PKG_REPOSITORY"));
        assert!(include_str!("../../templates/project-state.md").contains(&link));
    }

    #[test]
    fn every_default_template_renders_every_field() {
        let t = Templates::load(Path::new("."), None).unwrap();
        let ctx = full_context();
        let expect: &[(&str, &[&str])] = &[
            (
                "project-state.md",
                &["MANAGED", "<!-- ctxkeep:begin -->", "<!-- ctxkeep:end -->"],
            ),
            (
                "state.md",
                &[
                    "ckpt-0007",
                    "PHASE",
                    "TASK",
                    "AGENT",
                    "NEXT",
                    "DECISION",
                    "QUESTION",
                    "NOTES",
                    "DIRTY.rs",
                    "OLDPHASE",
                ],
            ),
            (
                "resume.md",
                &[
                    "ckpt-0007",
                    "PHASE",
                    "TASK",
                    "AGENT",
                    "NEXT",
                    "DECISION",
                    "QUESTION",
                    "NOTES",
                    "DIRTY.rs",
                    "NEW.rs",
                    "GONE.rs",
                    "STUCK",
                    "12345678",
                    "OLDNEXT",
                ],
            ),
            ("stage.md", &["90", "stage-90"]),
        ];
        assert_eq!(expect.len(), DEFAULTS.len(), "a template without a test");
        for (name, needles) in expect {
            let out = t
                .render(name, &ctx)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            for n in *needles {
                assert!(out.contains(n), "{name} lacks {n}:\n{out}");
            }
        }
        for action in ["warn", "handoff"] {
            let mut c = ctx.clone();
            c["stage"]["action"] = json!(action);
            assert!(t.render("stage.md", &c).unwrap().contains(action));
        }
        // Before the first checkpoint.
        let empty = json!({"checkpoint": null, "history": []});
        assert!(t
            .render("state.md", &empty)
            .unwrap()
            .contains("No checkpoint yet"));
    }

    #[test]
    fn a_broken_override_names_the_template_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tpl")).unwrap();
        std::fs::write(dir.path().join("tpl/state.md"), "ok\nfine\n{% if %}\n").unwrap();
        let err = match Templates::load(dir.path(), Some("tpl")) {
            Err(e) => e,
            Ok(t) => t.render("state.md", json!({})).unwrap_err(),
        };
        let msg = err.to_string();
        assert_eq!(err.exit_code(), 65);
        assert!(
            msg.contains("tpl/state.md") && msg.contains("line 3"),
            "{msg}"
        );
    }
}
