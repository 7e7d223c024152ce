//! What a session's own token counts teach about its window and where its agent
//! compacts (docs/agents.md, "Where each agent's window and compaction point
//! come from"):
//!
//! * A token count past the window the session assumed, without a compaction, is
//!   evidence the window is larger: the smallest window a model of the same
//!   family has that holds it, else "unknown". Said once (a `window_evidence`
//!   event), kept until the model changes.
//! * A compaction is learned from the agent's own token count (`preTokens`, the
//!   last usage before Codex's `compacted`), never from ctxkeep's last
//!   reading, and only when it came under load: it is noted when a hook
//!   reads it, and judged at the first reading after it, when the model then in
//!   use is known. A manual or idle one, one on another model than the one
//!   after it (a `/model` switch forces a compaction at once), and one above
//!   the window teach nothing and are logged as such.

use serde_json::{json, Value};

use crate::agents::Agent;
use crate::domain::session::{SeenCompaction, Session};
use crate::transcripts::usage::Usage;

/// Window sources that are the agent's own word for this session: a token count
/// past them is shown as 100 %, never a reason to doubt them.
const EXACT_SOURCES: [&str; 3] = ["option", "status-line", "agent"];

/// Applies the evidence rule to `s` (its token count and window just set, its
/// `window_source` from this reading); `was_unknown`: the window was
/// already unknown before this reading (nothing new to say). Returns the
/// event's fields when there is something to say.
pub fn window_evidence(s: &mut Session, was_unknown: bool) -> Option<Value> {
    let tokens = s.tokens()?;
    if tokens <= s.window() {
        return None;
    }
    let source = s.window_source().unwrap_or_default().to_string();
    if EXACT_SOURCES.contains(&source.as_str()) {
        return None;
    }
    let assumed = s.window();
    let larger = s
        .model()
        .and_then(|m| crate::context::models::larger_window(m, tokens));
    match larger {
        Some(w) => {
            s.window_proved(w);
        }
        None => {
            s.window_unknown();
            if was_unknown {
                return None;
            }
        }
    }
    Some(json!({
        "session": s.id(), "model": s.model(), "tokens": tokens, "assumed": assumed,
        "assumed_from": source, "window": larger,
    }))
}

/// Notes the compaction a reading shows (once per compaction: a later hook
/// reading the same boundary changes nothing). The trigger is the agent's
/// in its transcript, else `hook_trigger` (what the event reading it says),
/// else what the pre-compaction hook said.
pub fn note_compaction(s: &mut Session, usage: &Usage, hook_trigger: Option<&str>) {
    let Some(pre) = usage.pre_tokens else {
        return;
    };
    if s.compaction_seen().is_some_and(|c| c.pre_tokens == pre) {
        return;
    }
    let hooked = hook_trigger
        .map(str::to_string)
        .or_else(|| s.after_compaction().and_then(|a| a.trigger.clone()));
    // The agent's own word wins unless it only says "auto" where its hook
    // said more (an idle compaction).
    let trigger = match usage.compaction_trigger.clone() {
        Some(t) if t != "auto" => Some(t),
        t => hooked.or(t),
    };
    let model = usage.model.clone().or(s.model().map(str::to_string));
    s.compaction_noted(SeenCompaction {
        pre_tokens: pre,
        trigger,
        model,
        judged: false,
    });
}

/// The verdict on a noted compaction.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// It teaches nothing: the `compaction_not_learned` event's fields (with `why`).
    NotLearned(Value),
    /// It teaches where the agent compacts: `tokens` on `model`, to remember, and the
    /// `compaction_learned` event's fields, logged once it is remembered.
    Learned {
        model: Option<String>,
        tokens: u64,
        fields: Value,
    },
}

/// Judges the noted compaction at the first reading after it (`compacted`:
/// this reading is still at the compaction): learned, or recorded as teaching
/// nothing. Marks it judged; remembering a learned point is the caller's.
pub fn judge(s: &mut Session, agent: Agent, compacted: bool) -> Option<Verdict> {
    if compacted || s.tokens().is_none() {
        return None;
    }
    let window = s.window();
    let model_now = s.model().map(str::to_string);
    let seen = s.compaction_judged()?;
    let switched = matches!(
        (&seen.model, &model_now),
        (Some(a), Some(b)) if !crate::context::models::same_model(a, b)
    );
    let why = match seen.trigger.as_deref() {
        Some("auto") if switched => Some("model-switch"),
        Some("auto") if seen.pre_tokens > window => Some("above-window"),
        Some("auto") => None,
        Some("manual") => Some("manual"),
        Some("idle") => Some("idle"),
        _ => Some("trigger-unknown"),
    };
    let mut fields = json!({
        "session": s.id(), "agent": agent, "model": seen.model, "tokens": seen.pre_tokens,
        "trigger": seen.trigger,
    });
    if let Some(why) = why {
        fields["why"] = json!(why);
        fields["model_after"] = json!(model_now);
        return Some(Verdict::NotLearned(fields));
    }
    Some(Verdict::Learned {
        model: seen.model,
        tokens: seen.pre_tokens,
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(tokens: u64, window: u64, source: &str, model: &str) -> Session {
        let mut s = Session::new("s", window);
        s.usage_read(
            Some(tokens),
            window,
            "claude-code",
            None,
            Some(model.into()),
        );
        s.window_from(source);
        s
    }

    #[test]
    fn usage_past_an_assumed_window_proves_a_larger_one_once() {
        let mut s = session(297_000, 200_000, "front-matter", "claude-opus-4-6");
        let said = window_evidence(&mut s, false).unwrap();
        assert_eq!(said["window"], 1_000_000);
        assert_eq!(
            (s.window(), s.percent(), s.window_source()),
            (1_000_000, Some(29.7), Some("evidence"))
        );
        // Below the window it now knows: nothing more to say.
        assert!(window_evidence(&mut s, false).is_none());
    }

    #[test]
    fn an_exact_window_is_never_doubted_and_percents_stop_at_100() {
        let mut s = session(210_000, 200_000, "status-line", "claude-opus-4-6");
        assert!(window_evidence(&mut s, false).is_none());
        assert_eq!(s.percent(), Some(100.0));
    }

    #[test]
    fn past_every_known_window_the_window_is_unknown() {
        let mut s = session(1_200_000, 200_000, "model", "claude-opus-4-6");
        assert!(window_evidence(&mut s, false).is_some());
        assert_eq!(s.window_source(), Some("unknown"));
        assert_eq!((s.percent(), s.limit_percent()), (None, None));
        let mut again = session(1_200_001, 200_000, "model", "claude-opus-4-6");
        assert!(window_evidence(&mut again, true).is_none(), "said once");
    }

    fn compaction(trigger: &str, pre: u64, model: &str) -> Usage {
        let mut u = Usage::empty("claude-code");
        u.compacted = true;
        u.compaction_trigger = Some(trigger.into());
        u.pre_tokens = Some(pre);
        u.model = Some(model.into());
        u
    }

    fn workspace(dir: &std::path::Path) -> Workspace {
        std::fs::create_dir_all(dir.join(".ctxkeep")).unwrap();
        Workspace::in_dir(dir)
    }

    use crate::domain::workspace::Workspace;

    /// Judges as the pipeline does: a learned point is remembered, then logged.
    fn judge(
        ws: &Workspace,
        s: &mut Session,
        agent: Agent,
        compacted: bool,
    ) -> Option<(&'static str, Value)> {
        match super::judge(s, agent, compacted)? {
            Verdict::NotLearned(fields) => Some(("compaction_not_learned", fields)),
            Verdict::Learned {
                model,
                tokens,
                fields,
            } => crate::context::compaction::Learned::record(
                &ws.compactions_path(),
                agent.as_str(),
                model.as_deref(),
                tokens,
            )
            .is_ok()
            .then_some(("compaction_learned", fields)),
        }
    }

    /// Notes `usage`, then judges it at a reading of `after` tokens on `model_after`.
    fn judged(ws: &Workspace, usage: &Usage, model_after: &str) -> Option<(&'static str, Value)> {
        let mut s = session(149_997, 200_000, "model", "claude-opus-4-6");
        note_compaction(&mut s, usage, None);
        note_compaction(&mut s, usage, None);
        assert!(
            judge(ws, &mut s, Agent::ClaudeCode, true).is_none(),
            "not yet"
        );
        s.usage_read(
            Some(30_000),
            200_000,
            "claude-code",
            None,
            Some(model_after.into()),
        );
        let verdict = judge(ws, &mut s, Agent::ClaudeCode, false);
        assert!(
            judge(ws, &mut s, Agent::ClaudeCode, false).is_none(),
            "once"
        );
        verdict
    }

    #[test]
    fn only_an_automatic_compaction_on_the_same_model_teaches_its_own_token_count() {
        let dir = tempfile::tempdir().unwrap();
        let ws = workspace(dir.path());
        let learned = |model: &str| {
            crate::context::compaction::Learned::load(&ws.compactions_path())
                .seen("claude-code", Some(model))
        };
        let (event, f) = judged(
            &ws,
            &compaction("auto", 173_977, "claude-opus-4-6"),
            "claude-sonnet-4-6",
        )
        .unwrap();
        assert_eq!(
            (event, f["why"].as_str()),
            ("compaction_not_learned", Some("model-switch"))
        );
        for (trigger, why) in [("manual", "manual"), ("idle", "idle")] {
            let (event, f) = judged(
                &ws,
                &compaction(trigger, 120_000, "claude-opus-4-6"),
                "claude-opus-4-6",
            )
            .unwrap();
            assert_eq!(
                (event, f["why"].as_str()),
                ("compaction_not_learned", Some(why))
            );
        }
        assert_eq!(learned("claude-opus-4-6").count, 0);
        let (event, f) = judged(
            &ws,
            &compaction("auto", 168_584, "claude-opus-4-6"),
            "claude-opus-4-6",
        )
        .unwrap();
        assert_eq!(
            (event, f["tokens"].as_u64()),
            ("compaction_learned", Some(168_584))
        );
        let seen = learned("claude-opus-4-6");
        assert_eq!((seen.point, seen.count), (Some(168_584), 1));
        assert_eq!(learned("claude-sonnet-4-6").count, 0);
    }
}
