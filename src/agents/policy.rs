//! How an agent's hooks behave where agents differ, as one value per agent (its spec's
//! `policy`): a few small enums, each naming what the agent does, and the questions the hook
//! service asks of them. The service asks a question ("does a drop in usage mean a
//! compaction here?") and never combines the answers itself, so what an agent's events mean
//! is decided here, once.

use serde_json::{json, Value};

/// What the hook service asks about one agent's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub start: StartContext,
    pub pre_compact: PreCompact,
    pub compaction: CompactionSeen,
    pub summary: SummaryReadable,
    pub tool_calls: ToolCallRecorded,
    pub reply: ContextReply,
    pub pre_tool: PreToolContext,
}

impl Policy {
    /// What most agents do; each agent's spec states only where it differs.
    pub const USUAL: Policy = Policy {
        start: StartContext::AtStart,
        pre_compact: PreCompact {
            fires: PreCompactFires::WhenCompacting,
            output: PreCompactOutput::Unread,
        },
        compaction: CompactionSeen::ByEvents,
        summary: SummaryReadable::AtPostCompact,
        tool_calls: ToolCallRecorded::BeforeHook,
        reply: ContextReply::HookSpecificOutput,
        pre_tool: PreToolContext::Read,
    };

    /// Whether what a pre-tool hook answers reaches the model; where it does not, a line
    /// for the model waits for the next after-tool event.
    pub fn pre_tool_context_read(&self) -> bool {
        self.pre_tool == PreToolContext::Read
    }

    /// Whether the session start's context waits for the first real prompt.
    pub fn defers_start_context(&self) -> bool {
        self.start == StartContext::AtFirstPrompt
    }

    /// Whether a prompt or tool event may owe the model a session start's context: one
    /// deferred to it, or one left by a compaction that only a drop in usage showed.
    pub fn start_may_wait_for_prompt(&self) -> bool {
        self.defers_start_context() || self.compaction != CompactionSeen::ByEvents
    }

    /// Whether a pre-compaction event not asked for by the user (`asked`: manual or idle)
    /// must first be judged: the agent fires it before nearly every model call.
    pub fn doubts_pre_compact(&self, asked: bool) -> bool {
        self.pre_compact_before_every_call() && !asked
    }

    /// Whether the pre-compaction event fires before every model call (the agent compacts
    /// only at one of them).
    pub fn pre_compact_before_every_call(&self) -> bool {
        self.pre_compact.fires == PreCompactFires::BeforeEveryModelCall
    }

    /// Whether what the pre-compaction hook prints as plain text is the agent's summarizer's
    /// instructions (ctxkeep answers with its brief).
    pub fn briefs_summarizer(&self) -> bool {
        self.pre_compact.output == PreCompactOutput::ToSummarizer
    }

    /// Whether a reading is a compaction the agent reported no event for: `dropped` (the usage
    /// dropped from near the limit to under half), and `transcript_compacted` (the transcript
    /// recorded a compaction since the reading before).
    pub fn compaction_detected(&self, dropped: bool, transcript_compacted: bool) -> bool {
        match self.compaction {
            CompactionSeen::ByEvents => false,
            CompactionSeen::ByDrop => dropped,
            CompactionSeen::ByDropTheTranscriptRecords => dropped && transcript_compacted,
        }
    }

    /// Whether, at a compaction seen by a drop, the agent's last token count before it is where it
    /// compacts (elsewhere the transcript states that token count itself).
    pub fn learns_point_from_last_reading(&self) -> bool {
        self.compaction == CompactionSeen::ByDrop
    }

    /// Whether the summary can be read only after the restored session has started.
    pub fn summary_follows_start(&self) -> bool {
        self.summary == SummaryReadable::AfterRestoredStart
    }

    /// Whether an after-tool hook waits briefly for its call to reach the transcript (never in
    /// a subagent, whose calls go to another file).
    pub fn waits_for_call(&self, in_subagent: bool) -> bool {
        self.tool_calls == ToolCallRecorded::MayFollowHook && !in_subagent
    }
}

/// Whether the context a pre-tool hook answers reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreToolContext {
    /// With the tool's result.
    Read,
    /// Not at all (Gemini CLI's `BeforeTool` takes none; Qwen Code logs it only).
    Unread,
}

/// When the context a session start gives reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartContext {
    /// With the session start's own reply.
    AtStart,
    /// With the first real prompt: the agent would put it in front of the user's first
    /// prompt, turning a headless slash command into text.
    AtFirstPrompt,
}

/// The pre-compaction event: how often it fires, and who reads its plain output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreCompact {
    pub fires: PreCompactFires,
    pub output: PreCompactOutput,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreCompactFires {
    /// When the agent is about to compact.
    WhenCompacting,
    /// Before nearly every model call; the agent compacts only past its limit, so an
    /// automatic one gets no checkpoint before the first model call, below the limit, or past
    /// it again when the last one compacted nothing (a manual one always does).
    BeforeEveryModelCall,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreCompactOutput {
    /// Nobody reads it.
    Unread,
    /// The agent's summarizer takes it as its instructions.
    ToSummarizer,
}

/// How a compaction becomes known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionSeen {
    /// The agent fires events around it (pre- and post-compaction, a restored start).
    ByEvents,
    /// No event follows it: a drop in usage between two readings is the compaction.
    ByDrop,
    /// No event follows it: a drop counts only when the transcript also recorded a
    /// compaction since the reading before, so a token count that is merely smaller (a
    /// conversation resumed in another process) is not taken for one.
    ByDropTheTranscriptRecords,
}

/// When the summary the agent wrote at a compaction can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryReadable {
    /// By the post-compaction event.
    AtPostCompact,
    /// Only after the restored session has started (its start comes before the
    /// post-compaction event): the start gets a short note, and what the summary left out
    /// follows at the next prompt or tool event.
    AfterRestoredStart,
}

/// When the reply that made a tool call reaches the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallRecorded {
    /// Before the call's hook runs.
    BeforeHook,
    /// On the agent's own schedule, sometimes after the call's hook has run: the hook waits
    /// briefly for the call's id, or it would read the token count from before that reply.
    MayFollowHook,
}

/// Where the agent reads the context a hook adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextReply {
    /// `additionalContext` inside `hookSpecificOutput`, with the event's name.
    HookSpecificOutput,
    /// `additionalContext` at the top of the reply.
    TopLevel,
}

impl ContextReply {
    /// The reply to `event` that adds `context`.
    pub fn wrap(self, event: &str, context: String) -> Value {
        match self {
            ContextReply::TopLevel => json!({ "additionalContext": context }),
            ContextReply::HookSpecificOutput => {
                json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": context } })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(compaction: CompactionSeen) -> Policy {
        Policy {
            compaction,
            ..Policy::USUAL
        }
    }

    #[test]
    fn a_drop_is_a_compaction_only_where_no_event_reports_one() {
        assert!(!with(CompactionSeen::ByEvents).compaction_detected(true, true));
        assert!(with(CompactionSeen::ByDrop).compaction_detected(true, false));
        assert!(!with(CompactionSeen::ByDrop).compaction_detected(false, true));
    }

    #[test]
    fn where_the_transcript_records_compactions_a_drop_alone_is_none() {
        let p = with(CompactionSeen::ByDropTheTranscriptRecords);
        assert!(!p.compaction_detected(true, false));
        assert!(p.compaction_detected(true, true));
        assert!(!p.learns_point_from_last_reading());
        assert!(with(CompactionSeen::ByDrop).learns_point_from_last_reading());
    }

    #[test]
    fn a_start_may_wait_for_a_prompt_when_deferred_or_left_by_a_drop() {
        assert!(!Policy::USUAL.start_may_wait_for_prompt());
        assert!(with(CompactionSeen::ByDrop).start_may_wait_for_prompt());
        let deferred = Policy {
            start: StartContext::AtFirstPrompt,
            ..Policy::USUAL
        };
        assert!(deferred.defers_start_context() && deferred.start_may_wait_for_prompt());
    }

    #[test]
    fn only_an_often_fired_pre_compaction_not_asked_for_is_doubted() {
        let often = Policy {
            pre_compact: PreCompact {
                fires: PreCompactFires::BeforeEveryModelCall,
                output: PreCompactOutput::Unread,
            },
            ..Policy::USUAL
        };
        assert!(often.doubts_pre_compact(false));
        assert!(!often.doubts_pre_compact(true));
        assert!(!Policy::USUAL.doubts_pre_compact(false));
    }

    #[test]
    fn a_late_call_is_waited_for_outside_subagents_only() {
        let late = Policy {
            tool_calls: ToolCallRecorded::MayFollowHook,
            ..Policy::USUAL
        };
        assert!(late.waits_for_call(false));
        assert!(!late.waits_for_call(true));
        assert!(!Policy::USUAL.waits_for_call(false));
    }

    #[test]
    fn the_context_goes_where_the_agent_reads_it() {
        let nested = ContextReply::HookSpecificOutput.wrap("PostToolUse", "x".into());
        assert_eq!(nested["hookSpecificOutput"]["hookEventName"], "PostToolUse");
        assert_eq!(nested["hookSpecificOutput"]["additionalContext"], "x");
        let top = ContextReply::TopLevel.wrap("PostToolUse", "x".into());
        assert_eq!(top, json!({ "additionalContext": "x" }));
    }
}
