//! `ctxkeep gc [--dry-run]`: applies the retention by hand.

use super::{Ctx, Outcome};
use crate::cli::GcArgs;
use crate::domain::config::Config;
use crate::domain::state::StateFile;
use crate::domain::workspace::Workspace;
use crate::handoff::retention::{self, Collected, Mode};
use crate::system::output::thousands;

pub fn run(args: GcArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let sf = StateFile::load(&ws.state_path)?;
    sf.require_initialized()?;
    let config = Config::from_front(&sf.fm);
    // Without `.ctxkeep/` there is nothing to collect; do not create it.
    let collected = if !ws.data_dir.is_dir() {
        Collected {
            dry_run: args.dry_run,
            ..Default::default()
        }
    } else if args.dry_run {
        retention::collect(&ws, &config, Mode::DryRun)?
    } else {
        let lock = ws.lock_only()?;
        retention::collect(&ws, &config, Mode::Apply(&lock))?
    };
    ctx.out.json(&collected)?;
    ctx.out.data(&human(&collected, &config))?;
    Ok(Outcome::Ok)
}

fn human(c: &Collected, config: &Config) -> String {
    let verb = |done: &str, would: &str| {
        if c.dry_run {
            would.to_string()
        } else {
            done.to_string()
        }
    };
    let mut s = String::new();
    if c.is_empty() {
        s.push_str(&verb("nothing to collect", "nothing would be collected"));
        return s;
    }
    if !c.checkpoints_removed.is_empty() {
        let days = config
            .retention_days
            .map(|d| format!(", {d} days"))
            .unwrap_or_default();
        s.push_str(&format!(
            "{} {} archived checkpoint(s) (retention: {} checkpoints{days}): {}\n",
            verb("removed", "would remove"),
            c.checkpoints_removed.len(),
            config.retention,
            c.checkpoints_removed.join(", ")
        ));
    }
    if let Some(bytes) = c.events_rotated_bytes {
        s.push_str(&format!(
            "{} events.jsonl ({} bytes, limit {}) to events.jsonl.1\n",
            verb("rotated", "would rotate"),
            thousands(bytes),
            thousands(config.events_max_bytes)
        ));
    }
    if c.sessions_removed > 0 {
        s.push_str(&format!(
            "{} the {} oldest session record(s) from the chain (keeping {})\n",
            verb("dropped", "would drop"),
            c.sessions_removed,
            config.sessions_kept
        ));
    }
    if !c.agent_records_removed.is_empty() {
        s.push_str(&format!(
            "{} {} agent session record(s) outside the project, not written for {} days:\n",
            verb("removed", "would remove"),
            c.agent_records_removed.len(),
            crate::agents::records::KEPT_DAYS
        ));
        for r in &c.agent_records_removed {
            s.push_str(&format!("  {r}\n"));
        }
    }
    if !c.snapshots_removed.is_empty() {
        s.push_str(&format!(
            "{} the snapshot(s) of uncommitted work of {} with their checkpoints (refs/ctxkeep/snapshots/)\n",
            verb("dropped", "would drop"),
            c.snapshots_removed.join(", ")
        ));
    }
    if !c.submodule_snapshots_removed.is_empty() {
        s.push_str(&format!(
            "{} the submodules' own snapshots they held: {}\n",
            verb("dropped", "would drop"),
            c.submodule_snapshots_removed.join(", ")
        ));
    }
    for t in &c.temp_files_removed {
        s.push_str(&format!(
            "{} stale temp file {t}\n",
            verb("removed", "would remove")
        ));
    }
    s
}
