//! `ctxkeep relay`: headless agent sessions one after another, each
//! resuming from the latest checkpoint, until a stop condition; one line
//! per session on stderr, the whole run as one document with `--json`.

use super::{Ctx, Outcome};
use crate::agents::Agent;
use crate::cli::RelayArgs;
use crate::domain::workspace::Workspace;
use crate::pipeline::relay::{self, AgentSpec, Builtin, Plan, SessionReport, Stop};
use crate::system::error::Error;
use crate::system::output::thousands;

pub fn run(args: RelayArgs, ctx: &Ctx) -> anyhow::Result<Outcome> {
    let ws = Workspace::resolve(&ctx.locate(), false)?;
    let dry_run = args.dry_run;
    let plan = plan(args)?;
    if dry_run {
        let report = relay::dry_run(&ws, &plan)?;
        ctx.out.json(&report)?;
        let mut text = format!("first prompt: {}\n", report.first_prompt);
        for c in &report.commands {
            text.push_str(c);
            text.push('\n');
        }
        ctx.out.data(&text)?;
        for problem in &report.problems {
            ctx.out.warn(problem);
        }
        return Ok(match report.problems.is_empty() {
            true => Outcome::Ok,
            false => Outcome::No,
        });
    }
    let out = ctx.out;
    let report = relay::run(&ws, &plan, &out, &mut |s| out.info(&line(s)))?;
    ctx.out.json(&report)?;
    let n = report.sessions.len();
    ctx.out.info(&format!(
        "relay: stopped after {n} session{}: {} (exit {})",
        if n == 1 { "" } else { "s" },
        report.reason,
        report.exit_code
    ));
    Ok(match report.stopped {
        Stop::Until | Stop::UntilPhase => Outcome::Ok,
        Stop::Interrupted => Outcome::Interrupted,
        Stop::Stuck | Stop::MaxSessions | Stop::MaxTime => Outcome::No,
    })
}

/// The flags resolved into a plan: the rotation in order (`--agent`s, then
/// `--agent-cmd`s), each built-in agent with its pass-through arguments.
fn plan(args: RelayArgs) -> anyhow::Result<Plan> {
    let builtins: Vec<Builtin> = args
        .agent
        .iter()
        .map(|&a| {
            Builtin::new(a).ok_or_else(|| {
                Error::Usage(format!(
                    "{a} has no headless mode for relay to run; use --agent-cmd"
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    let mut rotation: Vec<AgentSpec> = builtins
        .iter()
        .map(|b| AgentSpec::builtin(*b, extra_args(&args.agent_args, *b)))
        .collect();
    rotation.extend(args.agent_cmd.iter().map(|c| AgentSpec::shell(c)));
    if rotation.is_empty() {
        return Err(Error::Usage("relay: give at least one --agent or --agent-cmd".into()).into());
    }
    if builtins.is_empty() && !args.agent_args.is_empty() {
        return Err(Error::Usage(
            "--agent-args is for --agent; put the arguments in --agent-cmd".into(),
        )
        .into());
    }
    name_rotation(&mut rotation);
    let prompt = (!args.prompt.is_empty()).then(|| args.prompt.join(" "));
    Ok(Plan {
        rotation,
        prompt: prompt.filter(|p| !p.trim().is_empty()),
        until: args.until.filter(|c| !c.trim().is_empty()),
        until_timeout: args
            .until_timeout
            .as_deref()
            .map(|t| relay::parse_duration_of("--until-timeout", t))
            .transpose()?
            .unwrap_or(relay::DEFAULT_UNTIL_TIMEOUT),
        until_phase: args.until_phase.filter(|p| !p.trim().is_empty()),
        max_sessions: args.max_sessions,
        max_time: args
            .max_time
            .as_deref()
            .map(relay::parse_duration)
            .transpose()?,
    })
}

/// One name per distinct agent of the rotation, so that the chain tells
/// them apart: the same agent given twice keeps its name, another one with
/// a name already taken gets `#2`, `#3`, ...
fn name_rotation(rotation: &mut [AgentSpec]) {
    let mut named: Vec<AgentSpec> = Vec::new();
    for spec in rotation.iter_mut() {
        if let Some(same) = named
            .iter()
            .find(|n| n.program == spec.program && n.args == spec.args)
        {
            spec.name = same.name.clone();
            continue;
        }
        let base = spec.name.clone();
        let taken = named
            .iter()
            .filter(|n| n.name == base || n.name.starts_with(&format!("{base}#")))
            .count();
        if taken > 0 {
            spec.name = format!("{base}#{}", taken + 1);
        }
        named.push(spec.clone());
    }
}

/// `--agent-args` for one agent: the values without `AGENT=`, and those
/// with its name (or its program's), split on spaces.
fn extra_args(values: &[String], agent: Builtin) -> Vec<String> {
    values
        .iter()
        .filter_map(|v| match v.split_once('=') {
            Some((name, rest)) if is_agent_name(name) => {
                (name == agent.name() || name == agent.program()).then_some(rest)
            }
            _ => Some(v.as_str()),
        })
        .flat_map(|v| v.split_whitespace().map(str::to_string))
        .collect()
}

fn is_agent_name(name: &str) -> bool {
    Agent::ALL
        .into_iter()
        .filter_map(Builtin::new)
        .any(|b| name == b.name() || name == b.program())
}

/// One session's line on stderr.
fn line(s: &SessionReport) -> String {
    let mut why = s.ended.label().to_string();
    if let Some(d) = &s.detail {
        why.push_str(&format!(" ({d})"));
    }
    let from = match &s.from_agent {
        Some(f) => format!(" (from {f})"),
        None => String::new(),
    };
    let tokens = match s.tokens {
        Some(t) => format!("{} tokens", thousands(t)),
        None => "tokens unknown".into(),
    };
    let checkpoint = match (&s.checkpoint, s.checkpoint_by) {
        (Some(c), "none") => format!("{c} (unchanged)"),
        (Some(c), by) => format!("{c} by {by}"),
        (None, _) => "no checkpoint".into(),
    };
    let p = &s.progress;
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "relay: session {} {}{from}: {why}, exit {} after {} · {tokens} · {checkpoint} · {}, {}, {} · log {}",
        s.number,
        s.agent,
        s.exit_code,
        elapsed(s.seconds),
        plural(p.commits, "commit", "commits"),
        plural(p.plan_done as u64, "plan item done", "plan items done"),
        plural(p.files as u64, "file changed", "files changed"),
        s.log
    )
}

fn elapsed(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..60 => format!("{seconds:.1}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_distinct_agent_of_the_rotation_has_its_own_name() {
        let mut rotation = vec![
            AgentSpec::builtin(Builtin::new(Agent::ClaudeCode).unwrap(), vec![]),
            AgentSpec::shell("./fake.sh fast"),
            AgentSpec::builtin(Builtin::new(Agent::ClaudeCode).unwrap(), vec![]),
            AgentSpec::shell("./fake.sh slow"),
            AgentSpec::shell("/bin/fake.sh"),
            AgentSpec::builtin(
                Builtin::new(Agent::ClaudeCode).unwrap(),
                vec!["--model".into(), "opus".into()],
            ),
        ];
        name_rotation(&mut rotation);
        let names: Vec<&str> = rotation.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "claude-code",
                "fake.sh",
                "claude-code",
                "fake.sh#2",
                "fake.sh#3",
                "claude-code#2"
            ]
        );
    }

    #[test]
    fn agent_args_go_to_every_agent_or_to_the_one_named() {
        let values = [
            "--verbose".to_string(),
            "codex=--full-auto  -m o3".to_string(),
            "claude=--model opus".to_string(),
            "--flag=value".to_string(),
        ];
        assert_eq!(
            extra_args(&values, Builtin::new(Agent::Codex).unwrap()),
            ["--verbose", "--full-auto", "-m", "o3", "--flag=value"]
        );
        assert_eq!(
            extra_args(&values, Builtin::new(Agent::ClaudeCode).unwrap()),
            ["--verbose", "--model", "opus", "--flag=value"]
        );
    }
}
