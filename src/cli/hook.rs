//! `ctxkeep hook` and `ctxkeep statusline`: what agents run on every event, and the fast
//! reading of the hook's command line.

use clap::{Args, Parser, ValueEnum};

use std::path::PathBuf;

use super::{Cli, Command, GlobalArgs, LOCK_TIMEOUT_SECS};
use crate::agents::Agent;

/// `ctxkeep hook AGENT [JSON]` alone, with the global options: what every agent hook runs on
/// each prompt and tool call, parsed without building the whole command line (that was a
/// third of a hook's work). The same argument definitions as [`Cli`]'s; whatever this does not
/// accept is handed to [`Cli`], which says what is wrong.
#[derive(Debug, Parser)]
#[command(
    name = "ctxkeep hook",
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct HookCli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(flatten)]
    pub hook: HookArgs,
}

impl HookCli {
    /// The command line as [`Cli`] would have parsed it, when it is `ctxkeep hook …` with
    /// nothing this parser cannot read.
    pub fn parse_fast(args: &[std::ffi::OsString]) -> Option<Cli> {
        if args.get(1).is_none_or(|a| a != "hook") {
            return None;
        }
        if let Some(cli) = HookCli::parse_plain(&args[2..]) {
            return Some(cli);
        }
        let rest = args[..1].iter().chain(&args[2..]);
        let h = HookCli::try_parse_from(rest).ok()?;
        Some(Cli {
            global: h.global,
            command: Command::Hook(h.hook),
        })
    }

    /// The command line agents' hooks write, read by hand (clap's parser costs a tenth of a
    /// hook's work): an agent's id or alias, the payload, `--strict` and `--plugin`, with no
    /// global option on it and none in the environment but the state file's path. Whatever
    /// else it holds goes to clap.
    fn parse_plain(rest: &[std::ffi::OsString]) -> Option<Cli> {
        if std::env::var_os("CTXKEEP_ASCII").is_some()
            || std::env::var_os("CTXKEEP_LOCK_TIMEOUT").is_some()
        {
            return None;
        }
        let state = match std::env::var_os("CTXKEEP_STATE") {
            Some(v) if v.is_empty() => return None,
            v => v.map(PathBuf::from),
        };
        let (mut agent, mut payload, mut strict, mut plugin) = (None, None, false, false);
        for arg in rest {
            let arg = arg.to_str()?;
            match arg {
                "--strict" if !strict => strict = true,
                "--plugin" if !plugin => plugin = true,
                _ if arg.starts_with('-') => return None,
                _ if agent.is_none() => {
                    let named = |a: &Agent| a.spec().id == arg || a.spec().aliases.contains(&arg);
                    agent = Some(Agent::ALL.into_iter().find(named)?);
                }
                _ if payload.is_none() => payload = Some(arg.to_string()),
                _ => return None,
            }
        }
        Some(Cli {
            global: GlobalArgs {
                json: false,
                quiet: false,
                state,
                ascii: false,
                lock_timeout: LOCK_TIMEOUT_SECS,
            },
            command: Command::Hook(HookArgs {
                agent: agent?,
                payload,
                strict,
                plugin,
            }),
        })
    }
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent whose hook runs this command.
    #[arg(value_enum)]
    pub agent: Agent,

    /// The event's JSON as an argument instead of stdin (Codex's `notify` passes it this way).
    #[arg(value_name = "JSON")]
    pub payload: Option<String>,

    /// On an internal error exit 2, which blocks the agent's action (e.g. a compaction
    /// without its checkpoint), instead of failing open with exit 0.
    #[arg(long)]
    pub strict: bool,

    /// Run from ctxkeep's plugin for the agent (Claude Code's): do nothing, silently, in a
    /// folder without project-state.md, or when the project's settings carry ctxkeep's own
    /// hooks for the agent (those run instead, so no event is handled twice).
    #[arg(long)]
    pub plugin: bool,
}

/// Every agent of the registry as a command-line value: its name, and its
/// aliases (`claude`, `codex-cli`, `gemini-cli`, …) accepted too.
impl ValueEnum for Agent {
    fn value_variants<'a>() -> &'a [Self] {
        &Agent::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let spec = self.spec();
        Some(clap::builder::PossibleValue::new(spec.id).aliases(spec.aliases.iter().copied()))
    }
}

#[derive(Debug, Args)]
pub struct StatuslineArgs {
    /// Your own status-line command: run with the same input (through `sh -c`), its output
    /// printed first and ctxkeep's gauge after it on the same line.
    #[arg(long, value_name = "COMMAND")]
    pub with: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    fn hook_line(rest: &[&str]) -> Vec<std::ffi::OsString> {
        ["ctxkeep", "hook"]
            .iter()
            .chain(rest)
            .map(std::ffi::OsString::from)
            .collect()
    }

    #[test]
    fn the_hook_line_read_by_hand_is_what_clap_reads() {
        let plain_env = std::env::var_os("CTXKEEP_ASCII").is_none()
            && std::env::var_os("CTXKEEP_LOCK_TIMEOUT").is_none()
            && std::env::var_os("CTXKEEP_STATE").is_none_or(|v| !v.is_empty());
        let mut names: Vec<&str> = Vec::new();
        for a in Agent::ALL {
            names.push(a.spec().id);
            names.extend(a.spec().aliases.iter().copied());
        }
        for name in names {
            let payload = r#"{"session_id":"s","hook_event_name":"Stop"}"#;
            let lines: [&[&str]; 6] = [
                &[name],
                &[name, payload],
                &[name, payload, "--strict"],
                &["--plugin", name, payload],
                &["--strict", "--plugin", name, ""],
                &[name, "--plugin", payload],
            ];
            for rest in lines {
                let args = hook_line(rest);
                let by_hand = HookCli::parse_plain(&args[2..]);
                assert_eq!(by_hand.is_some(), plain_env, "{rest:?}");
                let by_clap = Cli::try_parse_from(&args).unwrap();
                if let Some(h) = by_hand {
                    assert_eq!(format!("{h:?}"), format!("{by_clap:?}"), "{rest:?}");
                }
            }
        }
        // Anything else is clap's: global options, unknown agents, a second payload.
        let id = Agent::ALL[0].spec().id;
        let upper = id.to_uppercase();
        let others: [&[&str]; 8] = [
            &[id, "--json"],
            &["-q", id],
            &[id, "--state", "x.md"],
            &["--strict", "--strict", id],
            &[id, "{}", "{}"],
            &["nobody", "{}"],
            &[&upper, "{}"],
            &["--", id],
        ];
        for rest in others {
            assert!(
                HookCli::parse_plain(&hook_line(rest)[2..]).is_none(),
                "{rest:?}"
            );
        }
    }
}
