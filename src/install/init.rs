//! `init`'s job: create project-state.md, or add ctxkeep's front matter to
//! a file of the user's, or change the settings given; keep `.ctxkeep/` out
//! of git.

use std::path::Path;

use anyhow::Context;
use serde::Serialize;
use serde_json::{json, Value};

use crate::context::stages::Stage;
use crate::context::tokens::Encoding;
use crate::domain::config::DEFAULT_WINDOW;
use crate::domain::state::{StateFile, FORMAT_VERSION};
use crate::domain::templates::{self, Templates};
use crate::domain::workspace::Workspace;
use crate::system::error::Error;
use crate::system::output::Output;

#[derive(Debug, Serialize)]
pub struct InitReport {
    pub path: String,
    pub created: bool,
    /// The settings this run changed.
    pub changed: Vec<String>,
    pub model: Option<String>,
    pub window: u64,
    pub encoding: String,
    pub stages: Vec<crate::context::stages::Stage>,
    pub gitignore_updated: bool,
    pub templates_dir: Option<String>,
    pub templates_written: Vec<String>,
    /// `.gitattributes` names ctxkeep's merge driver now (this run added it).
    pub merge_driver_attributes_added: bool,
    /// The repository's local git config defines the driver now (this run added it).
    pub merge_driver_config_added: bool,
    /// The file had no ctxkeep front matter before (new or added to).
    #[serde(skip)]
    pub fresh: bool,
    /// The file was written (false: nothing changed, or another `init` won).
    #[serde(skip)]
    pub wrote: bool,
}

/// The settings `init` was given, validated by the caller.
#[derive(Debug, Default)]
pub struct Settings {
    pub model: Option<String>,
    pub window: Option<u64>,
    pub encoding: Option<Encoding>,
    pub stages: Option<Vec<Stage>>,
    /// Copy the default templates into the project's template folder.
    pub eject_templates: bool,
    /// Leave git's merge driver alone (`--no-merge-driver`).
    pub no_merge_driver: bool,
}

/// Creates the state file (or adds ctxkeep's front matter to an existing
/// one, or changes the settings given), under the lock.
pub fn init(ws: &Workspace, args: Settings, out: &Output) -> anyhow::Result<InitReport> {
    let stages = args.stages.clone();
    let encoding = args.encoding;
    // A damaged file is refused before the lock, so nothing is created. One
    // without ctxkeep's front matter is left to the locked read below: it may
    // be a concurrent init's new file, caught between its creation and its
    // first bytes.
    let current = match StateFile::load(&ws.state_path) {
        Err(Error::NotInitialized { .. }) => None,
        Err(e) => return Err(e.into()),
        Ok(sf) => Some(sf),
    };
    // The model sets the window and encoding (as `count --model` reads
    // them: the table, then the project's `models:`); one neither knows is
    // refused unless both are given.
    let model_info = match &args.model {
        None => None,
        Some(m) => {
            let known = match current.as_ref().filter(|sf| sf.is_initialized()) {
                Some(sf) => crate::domain::config::Config::from_front(&sf.fm).model_info(m),
                None => crate::context::models::lookup(m),
            };
            if known.is_none() && (args.window.is_none() || encoding.is_none()) {
                return Err(crate::context::models::not_in_table(
                    m,
                    "give --window and --encoding with it",
                )
                .into());
            }
            known
        }
    };

    let lock = ws.lock()?;
    let existing = match StateFile::load(&ws.state_path) {
        Ok(s) => Some(s),
        Err(Error::NotInitialized { .. }) if std::fs::symlink_metadata(&ws.state_path).is_err() => {
            None
        }
        Err(e) => return Err(e.into()),
    };
    let created = existing.is_none();
    let mut changed = Vec::new();
    let mut sf = match existing {
        Some(s) => s,
        None => StateFile::parse(&ws.state_path, String::new())?,
    };
    let fresh = !sf.is_initialized();
    if !fresh {
        sf.require_initialized()?;
    }

    let mut updates: Vec<(&str, Option<Value>)> = Vec::new();
    let fm = sf.fm.clone();
    if fresh {
        updates.push(("ctxkeep", Some(json!(FORMAT_VERSION))));
    }
    if let Some(m) = &args.model {
        // Written into the front matter that agents read.
        let m = crate::system::redact::redact(m);
        if fm.model.as_deref() != Some(m.as_ref()) {
            updates.push(("model", Some(json!(m))));
        }
    }
    let window = args
        .window
        .or(model_info.as_ref().map(|m| m.window))
        .or(if fresh { Some(DEFAULT_WINDOW) } else { None });
    if let Some(w) = window {
        if fm.window != Some(w) {
            updates.push(("window", Some(json!(w))));
        }
    }
    let encoding = encoding
        .or(model_info.as_ref().map(|m| m.encoding))
        .or(if fresh {
            Some(Encoding::O200kBase)
        } else {
            None
        });
    if let Some(e) = encoding {
        if fm.encoding.as_deref() != Some(&e.to_string()) {
            updates.push(("encoding", Some(json!(e.to_string()))));
        }
    }
    let stages = stages.or(if fresh {
        Some(crate::context::stages::parse_stages(
            crate::context::stages::DEFAULT_STAGES,
        )?)
    } else {
        None
    });
    if let Some(st) = &stages {
        if fm.stages.as_ref() != Some(st) {
            updates.push(("stages", Some(serde_json::to_value(st)?)));
        }
    }
    let mut templates_written = Vec::new();
    if args.eject_templates {
        let dir = fm
            .templates
            .clone()
            .unwrap_or_else(|| templates::DEFAULT_DIR.to_string());
        templates_written = templates::eject(&ws.root, &dir)?
            .into_iter()
            .map(|p| p.display().to_string())
            .collect();
        if fm.templates.is_none() {
            updates.push(("templates", Some(json!(dir))));
        }
    }
    changed.extend(
        updates
            .iter()
            .map(|(k, _)| k.to_string())
            .filter(|k| k != "ctxkeep"),
    );
    sf.set_keys(&updates)?;

    if fresh {
        let tpl = Templates::load(&ws.root, sf.fm.templates.as_deref())?;
        let managed = tpl.render("state.md", json!({ "checkpoint": null, "history": [] }))?;
        if created {
            sf.body = tpl.render_page(&managed)?;
            if sf.managed_block().is_none() {
                sf.set_managed_block(&managed)?;
            }
        } else if sf.managed_block().is_none() {
            sf.set_managed_block(&managed)?;
        }
    }
    let wrote = if created {
        let text = sf.render();
        // A project's own templates make the new file: held to the reader's
        // limits as every write is (`save` checks the same).
        crate::domain::state::limits::check_text(&ws.state_path, &text, false)?;
        if !crate::system::fsutil::create_new(&ws.state_path, text.as_bytes())? {
            // Another init won the race; its file stands.
            false
        } else {
            true
        }
    } else {
        if sf.render() != sf.original {
            crate::pipeline::record::warn_about_hard_links(&ws.state_path, out);
        }
        sf.save()?
    };
    let gitignore_updated = ignore_data_dir(&ws.root).unwrap_or(false);
    let driver = if args.no_merge_driver {
        crate::domain::merge::driver::DriverSetup::default()
    } else {
        crate::domain::merge::driver::setup_driver(ws)?
    };
    drop(lock);

    let config = crate::domain::config::Config::from_front(&sf.fm);
    Ok(InitReport {
        path: ws.display_state(),
        created: created && wrote,
        fresh,
        wrote,
        changed: if fresh { Vec::new() } else { changed },
        model: config.model.clone(),
        window: config.window,
        encoding: config.encoding.to_string(),
        stages: config.stages.clone(),
        gitignore_updated,
        templates_dir: sf.fm.templates.clone(),
        templates_written,
        merge_driver_attributes_added: driver.gitattributes_updated,
        merge_driver_config_added: driver.config_updated,
    })
}

fn ignore_data_dir(root: &Path) -> anyhow::Result<bool> {
    if crate::system::git::toplevel(root).is_err() {
        return Ok(false);
    }
    let path = root.join(".gitignore");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(&path, "cannot read", e).into()),
    };
    let already = text
        .lines()
        .map(str::trim)
        .any(|l| matches!(l, ".ctxkeep" | ".ctxkeep/" | "/.ctxkeep" | "/.ctxkeep/"));
    if already {
        return Ok(false);
    }
    let mut new = text.clone();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    new.push_str("# ctxkeep's local data (live budgets, archive, events)\n.ctxkeep/\n");
    crate::system::fsutil::atomic_write(&path, new.as_bytes(), Some(text.as_bytes()))
        .with_context(|| "could not add .ctxkeep/ to .gitignore")?;
    Ok(true)
}
