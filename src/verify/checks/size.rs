//! CK6xx size: the prompt `resume` would print from this checkpoint must
//! fit the token budget, counted with the configured encoding.

use super::{Finding, Locator, Severity, Subject};
use crate::domain::checkpoint::Checkpoint;
use crate::domain::config::Config;
use crate::handoff::chain::SessionRecord;
use crate::handoff::prompt::{render_prompt_for, Rendered};

pub fn check(c: &Checkpoint, s: &Subject, loc: &Locator) -> anyhow::Result<Vec<Finding>> {
    let config = Config::from_front(&s.sf.fm);
    let budget = s.max_tokens.unwrap_or(config.resume_max_tokens);
    let source = if s.max_tokens.is_some() {
        "--max-tokens"
    } else {
        "resume_max_tokens"
    };
    let Rendered {
        tokens, omitted, ..
    } = render_prompt_for(
        s.ws,
        s.sf,
        c,
        &config,
        budget,
        // resume's prompt carries a nonce line; count one.
        Some(&SessionRecord::placeholder(c)),
    )?;
    let line = loc.field_line("id");
    let mut out = Vec::new();
    if tokens > budget {
        out.push(
            Finding::new(
                "CK601",
                Severity::Error,
                Some("checkpoint"),
                format!(
                    "the resume prompt takes {tokens} tokens ({}) even with everything optional left out, more than {source} {budget}; shorten the phase, task and next action",
                    config.encoding
                ),
            )
            .at(line),
        );
    } else if !omitted.is_empty() {
        out.push(
            Finding::new(
                "CK602",
                Severity::Warning,
                Some("checkpoint"),
                format!(
                    "the resume prompt fits {source} {budget} only without {}, so a fresh session will not see them; shorten them or raise `resume_max_tokens`",
                    omitted.join(", ")
                ),
            )
            .at(line),
        );
    }
    Ok(out)
}
