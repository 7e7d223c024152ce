//! The reply: what a hook prints for the agent, rendered from what its event answered. The
//! `hook` command prints it; the in-process harness reads the same text.

use super::{Answer, MAX_CONTEXT_CHARS};
use crate::agents::policy::ContextReply;
use crate::agents::Agent;

/// The text to print for `answer` to `event` (None: print nothing). `json`: the reply was
/// asked for as JSON (ctxkeep's OpenCode plugin reads nothing else).
pub fn render(
    answer: Option<Answer>,
    event: Option<&str>,
    agent: Agent,
    json: bool,
) -> Option<String> {
    let context_reply = agent.policy().reply;
    match (answer, event) {
        (Some(Answer::Context(context)), Some(event)) => {
            Some(reply_json(event, context, context_reply))
        }
        (Some(Answer::Plain(text)), Some(event)) if json => {
            Some(reply_json(event, text, context_reply))
        }
        // Taken as it is (Claude Code's PreCompact: the summarizer's instructions).
        (Some(Answer::Plain(text)), Some(_)) => {
            let text = crate::system::redact::redact(text.trim_end());
            Some(crate::system::recorded::escape_controls(&text).into_owned())
        }
        // Some agents (Gemini) parse stdout as JSON and want it even when empty.
        _ => empty(agent).map(str::to_string),
    }
}

/// What an agent that parses stdout as JSON is given when there is nothing to say (and when
/// the hook failed open): an empty object; None for the others.
pub fn empty(agent: Agent) -> Option<&'static str> {
    agent.settings().json_always.then_some("{}")
}

/// The reply that adds `context` to the model's context, where the agent reads it.
fn reply_json(event: &str, context: String, reply: ContextReply) -> String {
    // Everything ctxkeep prints for an agent is redacted (the prompt is
    // already; stage text quotes the user's config).
    // No control character reaches the model raw either (a recorded
    // command's escape sequences).
    let context = crate::system::redact::redact(&context);
    let mut context = crate::system::recorded::escape_controls(&context).into_owned();
    crate::system::output::cut_to_chars(&mut context, MAX_CONTEXT_CHARS);
    reply.wrap(event, context).to_string()
}
