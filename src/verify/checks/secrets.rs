//! CK7xx secrets: project-state.md is committed and read by agents, so
//! anything the redaction rules match is an error, wherever it is.

use super::{Finding, Locator, Severity};
use crate::domain::state::StateFile;

pub fn check(sf: &StateFile, loc: &Locator) -> Vec<Finding> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for hit in crate::system::redact::find(&sf.original) {
        let line = loc.line_of_offset(hit.start);
        let rule = hit.rule.to_string();
        if seen.contains(&(line, rule.clone())) {
            continue;
        }
        seen.push((line, rule.clone()));
        let field = loc.field_at(line);
        // Never echo the secret itself: the report may end up in CI logs.
        out.push(
            Finding::new(
                "CK701",
                Severity::Error,
                field.as_deref(),
                format!(
                    "a secret ({rule}) in `{}`; remove it from the file and its git history, and rotate it",
                    field.as_deref().unwrap_or("project-state.md")
                ),
            )
            .at(Some(line)),
        );
    }
    out
}
