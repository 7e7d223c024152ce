//! What a user line's text is: the user's request, or not one (injected context, an interface
//! command, a tool's message, ctxkeep's own resume prompt); and the request as stored.

use super::prose::{cut, is_list_item};
use super::words::{NOT_A_REQUEST, RESUME_MARKERS, UI_COMMANDS, WRAPPERS};
use crate::transcripts::activity::MAX_REQUEST_CHARS;

/// The name of the element `text` opens with (`<name>` or `<name attributes…>`): a letter,
/// then letters, digits, `-`, `_` or `:`.
fn opening_element(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('<')?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | ':')))?;
    let name = &rest[..end];
    (name.starts_with(|c: char| c.is_ascii_alphabetic())
        && rest[end..].starts_with(['>', ' ', '\n']))
    .then_some(name)
}

/// The words after the element a prompt opens with (`<ci-monitor-event>…</ci-monitor-event>
/// hmm, skip on CI`), when it opens with one and words follow.
fn leading_element_then_words(text: &str) -> Option<&str> {
    let close = format!("</{}>", opening_element(text)?);
    let at = text.find(&close)? + close.len();
    let words = text[at..].trim();
    (!words.is_empty()).then_some(words)
}

/// The name of the element a prompt is from start to end (`<name …>…</name>`): what a tool,
/// a monitor or another agent wrote into the prompt, not words a person typed.
pub(crate) fn injected_element(text: &str) -> Option<&str> {
    let text = text.trim();
    let name = opening_element(text)?;
    text.ends_with(&format!("</{name}>")).then_some(name)
}

/// The user's request in a user line's text, or None when the text is not one (injected
/// context, a nudge, ctxkeep's resume prompt, an interface command).
pub fn user_request(text: &str) -> Option<String> {
    let trimmed = text.trim_start();
    if let Some(cmd) = slash_command(trimmed) {
        return cmd;
    }
    if NOT_A_REQUEST.iter().any(|p| trimmed.starts_with(p)) {
        return None;
    }
    let text = strip_wrappers(text);
    // A tool's message with the user's words after it: the words are the prompt.
    let text = match injected_element(text.trim()) {
        None => leading_element_then_words(text.trim()).unwrap_or(text.trim()),
        Some(_) => text.trim(),
    };
    if text.is_empty()
        || NOT_A_REQUEST.iter().any(|p| text.starts_with(p))
        || RESUME_MARKERS.iter().any(|m| text.contains(m))
    {
        return None;
    }
    Some(text.to_string())
}

/// Claude Code's record of a slash command: `Some(Some("/name args"))`, `Some(None)` for an
/// interface command, None when the text is not one.
fn slash_command(text: &str) -> Option<Option<String>> {
    let name = tag_body(text, "command-name")?.trim();
    let name = name.trim_start_matches('/');
    if name.is_empty() {
        return None;
    }
    if UI_COMMANDS.contains(&name) {
        return Some(None);
    }
    let args = tag_body(text, "command-args").unwrap_or("").trim();
    Some(Some(if args.is_empty() {
        format!("/{name}")
    } else {
        format!("/{name} {args}")
    }))
}

/// The text between `<tag>` and `</tag>`.
fn tag_body<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&close)? + start;
    Some(&text[start..end])
}

/// `text` without the injected-context blocks (an unclosed one runs to the end).
fn strip_wrappers(text: &str) -> String {
    if !text.contains('<') {
        return text.to_string();
    }
    let mut out = text.to_string();
    for tag in WRAPPERS.iter() {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        while let Some(start) = out.find(&open) {
            let end = out[start..]
                .find(&close)
                .map_or(out.len(), |e| start + e + close.len());
            out.replace_range(start..end, "");
        }
    }
    out
}

/// The stored request: redacted, then cut, keeping its closing ask (see [`keep_closing_ask`]).
pub fn request_text(raw: &str) -> String {
    keep_closing_ask(
        crate::system::redact::redact(raw).as_ref(),
        MAX_REQUEST_CHARS,
    )
}

/// `text` cut to `max` characters; when it is longer and ends with a short line of the user's
/// own words after pasted material (a document, a page, a log, then "add these three and open
/// a PR"), that line is kept after the cut start: the ask is not lost behind the paste.
pub fn keep_closing_ask(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_string();
    }
    let Some((_, last)) = text.rsplit_once("\n\n") else {
        return cut(text, max);
    };
    let last = last.trim();
    let chars = last.chars().count();
    if !is_prose_line(last) || chars > MAX_CLOSING_ASK_CHARS {
        return cut(text, max);
    }
    let head = cut(text, max.saturating_sub(chars + 5));
    format!("{head} […] {last}")
}

/// A closing ask longer than this is part of what was pasted.
pub(super) const MAX_CLOSING_ASK_CHARS: usize = 250;

/// Whether `line` reads as one line of a person's words: one line of three words or more,
/// opening with a letter, without the marks of a list, a table, a log or code.
pub(super) fn is_prose_line(line: &str) -> bool {
    !line.contains('\n')
        && line.split_whitespace().count() >= 3
        && line.starts_with(char::is_alphabetic)
        && !line.contains(['|', '=', '{', '}', '<', '>', '\t', '['])
        && !is_list_item(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_material_keeps_the_users_closing_ask() {
        let page = "prime-agent - A self-improving agent.\n\n* Source: source\n* License: MIT\n\n"
            .repeat(20);
        let prompt =
            format!("{page}add prime agent and t3code in the packages repo and create a PR");
        let kept = request_text(&prompt);
        assert!(kept.chars().count() <= MAX_REQUEST_CHARS, "{kept}");
        assert!(
            kept.starts_with("prime-agent - A self-improving agent."),
            "{kept}"
        );
        assert!(
            kept.ends_with("[…] add prime agent and t3code in the packages repo and create a PR"),
            "{kept}"
        );
        // A log's last line is not an ask; a short prompt is kept whole.
        let log = format!(
            "the logs still leak:\n\n{}",
            "Feb 9 09:00:08 |DEBU| hook invoked session_id=abc\n\n".repeat(20)
        );
        assert!(!request_text(&log).contains("[…]"));
        assert_eq!(request_text("fix the parser"), "fix the parser");
    }

    #[test]
    fn agents_preambles_and_summaries_are_not_requests() {
        assert_eq!(
            user_request("<session_context>\nThis is the CLI. We are setting up the context.\n</session_context>"),
            None
        );
        assert_eq!(
            user_request("<state_snapshot>\n<overall_goal>x</overall_goal>\n</state_snapshot>"),
            None
        );
        assert_eq!(
            user_request("ctxkeep: context is at 81 % (…); stage stage-80 (warn) reached."),
            None
        );
    }

    #[test]
    fn wrapped_context_is_not_a_request() {
        assert_eq!(
            user_request("<system-reminder>note</system-reminder>\n  fix it "),
            Some("fix it".into())
        );
        assert_eq!(user_request("<system-reminder>only context"), None);
        assert_eq!(user_request("[Request interrupted by user]"), None);
        assert_eq!(
            user_request("<command-name>/review</command-name><command-args>src</command-args>"),
            Some("/review src".into())
        );
        assert_eq!(user_request("<command-name>/clear</command-name>"), None);
    }
}
