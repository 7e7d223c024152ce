//! Text rendered from templates: the defaults in `templates/` are compiled
//! in; a project may override any of them from a committed folder named by
//! the `templates` key, so a team and its CI render the same text.

use std::path::{Path, PathBuf};

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use crate::error::Error;

/// (name, default text) for every template ctxkeep renders.
pub const DEFAULTS: &[(&str, &str)] = &[
    (
        "project-state.md",
        include_str!("../templates/project-state.md"),
    ),
    ("state.md", include_str!("../templates/state.md")),
    ("resume.md", include_str!("../templates/resume.md")),
    ("stage.md", include_str!("../templates/stage.md")),
];

pub const DEFAULT_DIR: &str = "ctxkeep-templates";

pub struct Templates {
    env: Environment<'static>,
    /// Where overrides come from, for error messages.
    dir: Option<PathBuf>,
}

impl Templates {
    /// Defaults, overridden by files in `root/dir` when the config names one.
    pub fn load(root: &Path, dir: Option<&str>) -> Result<Templates, Error> {
        let dir = dir.map(|d| root.join(d));
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_keep_trailing_newline(true);
        for (name, default) in DEFAULTS {
            let text = match &dir {
                Some(d) if d.join(name).is_file() => {
                    crate::fsutil::read_text(&d.join(name), 1024 * 1024)?
                }
                _ => (*default).to_string(),
            };
            let path = template_path(dir.as_deref(), name);
            env.add_template_owned(name.to_string(), text)
                .map_err(|e| template_error(&path, &e))?;
        }
        Ok(Templates { env, dir })
    }

    pub fn render<S: Serialize>(&self, name: &str, ctx: S) -> Result<String, Error> {
        let path = template_path(self.dir.as_deref(), name);
        let tmpl = self
            .env
            .get_template(name)
            .map_err(|e| template_error(&path, &e))?;
        tmpl.render(ctx).map_err(|e| template_error(&path, &e))
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
    let detail = e.detail().map(|d| format!(": {d}")).unwrap_or_default();
    Error::data(
        path,
        format!("template does not render{line}: {}{detail}", e.kind()),
    )
}

/// Writes the defaults into `root/dir` for editing; existing files are kept.
/// Returns the files written.
pub fn eject(root: &Path, dir: &str) -> Result<Vec<PathBuf>, Error> {
    let target = root.join(dir);
    crate::fsutil::ensure_dir(&target)?;
    let mut written = Vec::new();
    for (name, text) in DEFAULTS {
        let path = target.join(name);
        if crate::fsutil::create_new(&path, text.as_bytes())? {
            written.push(path);
        }
    }
    Ok(written)
}
