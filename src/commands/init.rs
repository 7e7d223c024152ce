//! `ctxkeep init`: create project-state.md and .ctxkeep/ (or update the
//! given settings of an existing file).

use super::{Ctx, Outcome};
use crate::cli::InitArgs;
use crate::domain::workspace::Workspace;
use crate::install::init::{self, Settings};
use crate::system::error::Error;

pub fn run(args: InitArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), true)?;
    // Validate every flag before touching anything.
    let stages = args
        .stages
        .as_deref()
        .map(crate::context::stages::parse_stages)
        .transpose()?;
    let encoding = args.encoding;
    if args.window == Some(0) {
        return Err(Error::Usage("--window must be a positive number of tokens".into()).into());
    }
    let window_given = args.window.is_some();
    let settings = Settings {
        model: args.model,
        window: args.window,
        encoding,
        stages,
        eject_templates: args.eject_templates,
        no_merge_driver: args.no_merge_driver,
    };
    let report = init::init(&ws, settings, &ctx.out)?;
    let (fresh, wrote) = (report.fresh, report.wrote);
    ctx.out.json(&report)?;
    let out = &ctx.out;
    if report.created {
        out.info(&format!(
            "created {} (window {} tokens, {}, stages {})",
            report.path,
            crate::system::output::thousands(report.window),
            report.encoding,
            stage_list(&report.stages)
        ));
    } else if fresh && wrote {
        out.info(&format!(
            "added ctxkeep front matter to {}; your text is unchanged",
            report.path
        ));
    } else if !report.changed.is_empty() {
        // A window that followed the model is said, with its token count: a
        // wrong one makes every percent wrong.
        let from_model = match (&report.model, window_given) {
            (Some(m), false) if report.changed.iter().any(|k| k == "window") => format!(
                " (window {} tokens, {m}'s in the model table)",
                crate::system::output::thousands(report.window)
            ),
            _ => String::new(),
        };
        out.info(&format!(
            "updated {} in {}{from_model}",
            report.changed.join(", "),
            report.path
        ));
    } else {
        out.info(&format!(
            "{} is already initialized; nothing changed",
            report.path
        ));
    }
    for p in &report.templates_written {
        out.info(&format!("wrote template {p}"));
    }
    if report.gitignore_updated {
        out.info("added .ctxkeep/ to .gitignore");
    }
    if report.merge_driver_attributes_added {
        out.info("named ctxkeep's merge driver for project-state.md in .gitattributes (commit it)");
    }
    if report.merge_driver_config_added {
        out.info("defined the merge driver in this clone's git config (merge.ctxkeep.driver)");
    }
    Ok(Outcome::Ok)
}

fn stage_list(stages: &[crate::context::stages::Stage]) -> String {
    stages
        .iter()
        .map(|s| format!("{}%:{}", crate::system::output::fmt_num(s.at), s.action))
        .collect::<Vec<_>>()
        .join(",")
}
