//! The replay over the project's own captures of the real CLIs (`tests/fixtures/agents/`): the
//! rebuilt order is the order the CLI fired its hooks in, every hook answers in its agent's
//! shape, and today's results hold. A change to what the hooks do changes `CAPTURES`, nothing
//! else.

use std::path::PathBuf;

use super::report::{self, Kind};
use super::run::{replay_file, Run};
use super::Agent;

/// What one capture gives today.
struct Expected {
    dir: &'static str,
    agent: Agent,
    /// The capture resumed its conversation in the same transcript without leaving a mark there
    /// (Codex): the ends and starts in between are left out of the reference order.
    hidden_restarts: bool,
    hook_calls: usize,
    injections: usize,
    resume_prompts: usize,
    /// What a compaction's summary left out given back instead of the prompt (or the note given
    /// while the summary cannot be read yet).
    give_backs: usize,
    loop_warnings: usize,
    stage_instructions: usize,
    /// Injections holding more than one stage instruction.
    stacked: usize,
    repeated_lines: usize,
    /// Checkpoints written, by trigger, and those skipped as repeating the last.
    checkpoints: &'static [(&'static str, usize)],
    skipped: usize,
    /// The trigger of the checkpoint current at each compaction's `PreCompact`.
    at_compactions: &'static [&'static str],
    /// `compaction_audit` events: the facts each audit found missing from the summary (None:
    /// the summary could not be read).
    audits: &'static [Option<usize>],
}

const CAPTURES: &[Expected] = &[
    Expected {
        dir: "claude-code-2.1.332",
        agent: Agent::ClaudeCode,
        // Claude Code marks a hook in the transcript only when it printed something, and a
        // resume of a conversation that saw the checkpoint is given nothing.
        hidden_restarts: true,
        // With the PreToolUse of its ten tool calls, wired since the snapshots before
        // destructive commands (none of them is one: they answer at once).
        hook_calls: 31,
        injections: 4,
        resume_prompts: 1,
        // The compaction's restore is a note with the nonce at SessionStart(compact) (Claude
        // Code's summary arrives with PostCompact); what the summary left out follows with the
        // next tool call's result.
        give_backs: 2,
        // Three failures in a row at lines 55, 59 and 63, warned in the third one's own hook
        // (its outcome is in the payload).
        loop_warnings: 1,
        // The stand-in's 195,000 tokens at line 96 are 19.5 % of `claude-opus-5-5`'s
        // 1,000,000-token window: no stage (before the window came from the model, the table took
        // it for a 200k model and all four stages fired there at once).
        stage_instructions: 0,
        stacked: 0,
        // The three failures of one command are one line (×3) since issue 26.
        repeated_lines: 0,
        // With no stage, the compaction's `PreCompact` writes the checkpoint; the last run's end
        // writes its own, the session having run commands since (until issue 42 it was skipped
        // as "nothing new": only the files, plan, step and what was left open were compared).
        checkpoints: &[("pre-compact", 1), ("session-end", 1)],
        skipped: 0,
        at_compactions: &["pre-compact"],
        // Seven facts of the pre-compact checkpoint are not in the stand-in's short summary.
        audits: &[Some(7)],
    },
    Expected {
        dir: "codex-0.171.0",
        agent: Agent::Codex,
        hidden_restarts: true,
        // With the run's final SessionEnd, wired since issue 26, the compacting run's two
        // patches before the compaction and its call after it, and the PreToolUse of its nine
        // calls, wired since the snapshots before destructive commands.
        hook_calls: 29,
        injections: 3,
        // The compaction's summary is in the rollout by PostCompact: what it left out is given
        // back at SessionStart(compact).
        resume_prompts: 1,
        give_backs: 1,
        // The capture cuts the outputs before their exit code: no failure is seen.
        loop_warnings: 0,
        stage_instructions: 1,
        stacked: 0,
        repeated_lines: 0,
        // The session end writes its own: the call after the compaction is new since the
        // pre-compact checkpoint (skipped as "nothing new" until issue 42).
        checkpoints: &[("pre-compact", 1), ("session-end", 1)],
        skipped: 0,
        at_compactions: &["pre-compact"],
        audits: &[Some(2)],
    },
    Expected {
        dir: "gemini-0.61.0",
        agent: Agent::Gemini,
        hidden_restarts: false,
        // With the BeforeTool of its seven shell calls, wired since the snapshots before
        // destructive commands.
        hook_calls: 36,
        injections: 2,
        resume_prompts: 1,
        give_backs: 0,
        loop_warnings: 0,
        // Four stages crossed at once: one instruction, for the highest.
        stage_instructions: 1,
        stacked: 0,
        repeated_lines: 0,
        // No pre-compact checkpoint before a run's first model call any more (two before issue
        // 26). Since issue 42 a checkpoint is skipped only when it would record the same: the
        // command run before the compaction is new at the stage crossed (line 53), the
        // compression's own reading (line 58) lists only that command, and the last run's end
        // lists both again. The capture cuts the resumed runs' prompts and messages, so the
        // commands are all that moves.
        checkpoints: &[("pre-compact", 1), ("session-end", 2), ("stage-98", 1)],
        skipped: 10,
        // The compression's own checkpoint, now written (it was the first run's end's).
        at_compactions: &["pre-compact"],
        // The capture cuts the compressed message list, snapshot and all.
        audits: &[None],
    },
];

fn capture(dir: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(dir)
}

fn replay(e: &Expected) -> Run {
    replay_file(&capture(e.dir).join("transcript.jsonl"), Some(e.agent))
}

/// `hook-order.txt` as the replay can know it: without events it does not rebuild
/// (`SubagentStop`) and, where the transcript hides them, the ends and starts of resumed runs.
fn reference_order(e: &Expected) -> Vec<String> {
    let text = std::fs::read_to_string(capture(e.dir).join("hook-order.txt")).unwrap();
    let all: Vec<&str> = text.lines().filter(|l| *l != "SubagentStop").collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let restart =
            all[i].starts_with("SessionEnd-") && all.get(i + 1) == Some(&"SessionStart-resume");
        if e.hidden_restarts && restart {
            i += 2;
            continue;
        }
        out.push(all[i].to_string());
        i += 1;
    }
    out
}

#[test]
fn the_replayed_hooks_fire_in_the_order_the_real_clis_fired_them() {
    for e in CAPTURES {
        let t = super::Transcript::read(&capture(e.dir).join("transcript.jsonl"));
        assert_eq!(super::Agent::detect(&t), e.agent, "{}", e.dir);
        let replay = super::reconstruct(e.agent, &t);
        let order: Vec<String> = replay.events.iter().map(|ev| ev.label()).collect();
        assert_eq!(order, reference_order(e), "{}", e.dir);
        // A hook never sees less of the transcript than one before it, nor more than there is.
        let cuts: Vec<usize> = replay.events.iter().map(|ev| ev.cut).collect();
        assert!(cuts.windows(2).all(|w| w[0] <= w[1]), "{}: {cuts:?}", e.dir);
        assert!(cuts.iter().all(|c| *c <= t.lines.len()), "{}", e.dir);
    }
}

#[test]
fn a_tools_hook_sees_the_transcript_before_its_result_and_the_outcome_in_its_payload() {
    let e = &CAPTURES[0];
    let t = super::Transcript::read(&capture(e.dir).join("transcript.jsonl"));
    let replay = super::reconstruct(e.agent, &t);
    let failures: Vec<_> = replay
        .events
        .iter()
        .filter(|ev| ev.name == "PostToolUseFailure")
        .collect();
    assert_eq!(failures.len(), 3);
    for ev in failures {
        // The result is the line the event is about, and not yet in the transcript.
        assert_eq!(ev.cut + 1, ev.line);
        let result = t.value(ev.cut).unwrap();
        assert!(result.to_string().contains("tool_result"), "{result}");
        assert_eq!(ev.str("error"), Some("Exit code 3\nwidget check failed"));
        assert_eq!(ev.str("tool_name"), Some("Bash"));
    }
    // As the real hook payload says (hooks/PostToolUseFailure-Bash.json).
    let real: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(capture(e.dir).join("hooks/PostToolUseFailure-Bash.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(real["error"], "Exit code 3\nwidget check failed");
}

#[test]
fn every_hook_answers_in_its_agents_shape_where_the_model_reads_it() {
    for e in CAPTURES {
        let run = replay(e);
        let s = report::summarize(&run);
        assert_eq!(s.failures, Vec::<String>::new(), "{}", e.dir);
        assert_eq!(
            s.misplaced, 0,
            "{}: an injection the model never reads",
            e.dir
        );
        assert!(
            run.ran().all(|step| run.wired.contains(&step.event.name)),
            "{}",
            e.dir
        );
    }
}

#[test]
fn todays_results_on_the_captures() {
    for e in CAPTURES {
        let run = replay(e);
        let s = report::summarize(&run);
        let got = (
            s.hook_calls,
            s.injections,
            s.count(Kind::Resume),
            s.count(Kind::GiveBack),
            s.count(Kind::Loop),
            s.count(Kind::Stage),
            s.stacked,
            s.repeated,
        );
        let want = (
            e.hook_calls,
            e.injections,
            e.resume_prompts,
            e.give_backs,
            e.loop_warnings,
            e.stage_instructions,
            e.stacked,
            e.repeated_lines,
        );
        assert_eq!(
            got, want,
            "{}: (hook calls, injections, resume prompts, give-backs, loop warnings, stage instructions, stacked, repeated lines)",
            e.dir
        );
        let checkpoints: Vec<(&str, usize)> = s
            .checkpoints
            .iter()
            .map(|(k, n)| (k.as_str(), *n))
            .collect();
        assert_eq!(
            (checkpoints.as_slice(), s.skipped_checkpoints),
            (e.checkpoints, e.skipped),
            "{}: checkpoints by trigger, skipped",
            e.dir
        );
        let at: Vec<String> = report::audits(&run)
            .into_iter()
            .map(|a| a.checkpoint_trigger.unwrap_or_default())
            .collect();
        assert_eq!(
            at, e.at_compactions,
            "{}: checkpoint at each compaction",
            e.dir
        );
        let audits: Vec<Option<usize>> = run
            .ran()
            .flat_map(|s| s.logged("compaction_audit"))
            .map(|a| {
                a["unreadable"]
                    .is_null()
                    .then(|| a["missing"].as_array().map_or(0, Vec::len))
            })
            .collect();
        assert_eq!(audits, e.audits, "{}: facts missing at each audit", e.dir);
    }
}
