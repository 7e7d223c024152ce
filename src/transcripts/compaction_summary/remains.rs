//! What remains by the agent's own compaction summary: its pending tasks, current work and
//! next step, taken from the sections agents write them under (Claude Code's numbered
//! "Pending Tasks" / "Current Work" / "Optional Next Step", Markdown or bold headings of the
//! same names, Gemini CLI's `<current_plan>` in its state snapshot). Kept in the record as the
//! agent wrote them, redacted and bounded: recorded text, never ctxkeep's own instructions.

/// Each part is cut to this many characters.
pub const MAX_PENDING_CHARS: usize = 1200;
pub const MAX_CURRENT_CHARS: usize = 600;
pub const MAX_NEXT_CHARS: usize = 600;

pub use crate::transcripts::activity::SummaryRemains as Remains;

const PENDING: &[&str] = &[
    "pending tasks",
    "pending work",
    "remaining tasks",
    "open tasks",
];
const CURRENT: &[&str] = &["current work", "current state", "work in progress"];
const NEXT: &[&str] = &["optional next step", "next steps", "next step"];

/// The parts of `summary` about what remains, or None when it has none of them.
pub fn of(summary: &str, at: &str) -> Option<Remains> {
    let part = |names: &[&str], max: usize| {
        section(summary, names)
            .or_else(|| tagged(summary, names))
            .map(|s| {
                crate::transcripts::activity::text::cut(
                    crate::system::redact::redact(&s).as_ref(),
                    max,
                )
            })
    };
    let r = Remains {
        at: at.to_string(),
        pending: part(PENDING, MAX_PENDING_CHARS).or_else(|| {
            tagged(summary, &["current_plan"]).map(|s| {
                crate::transcripts::activity::text::cut(
                    crate::system::redact::redact(&s).as_ref(),
                    MAX_PENDING_CHARS,
                )
            })
        }),
        current_work: part(CURRENT, MAX_CURRENT_CHARS),
        next_step: part(NEXT, MAX_NEXT_CHARS),
    };
    (r.pending.is_some() || r.current_work.is_some() || r.next_step.is_some()).then_some(r)
}

/// A heading line: Markdown (`## Pending Tasks`), numbered (`7. Pending Tasks:`) or bold
/// (`**Pending Tasks**`); its words without the marks, lowercased.
fn heading(line: &str) -> Option<String> {
    let t = line.trim();
    if t.is_empty() || t.chars().count() > 80 {
        return None;
    }
    let marked = t.starts_with('#') || t.starts_with("**");
    let rest = t.trim_start_matches(['#', '*', ' ']);
    let numbered = rest
        .split_once(['.', ')'])
        .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    // An indented or bulleted line is a list item, not a heading.
    if line.starts_with([' ', '\t', '-']) || !(marked || numbered) {
        return None;
    }
    let words = rest
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ')' || c == ' ')
        .trim_end_matches(['*', ':', ' '])
        .to_lowercase();
    Some(words)
}

/// The text under the first heading that starts with one of `names`, up to the next heading
/// (or, for a numbered heading, the next numbered one).
fn section(summary: &str, names: &[&str]) -> Option<String> {
    let lines: Vec<&str> = summary.lines().collect();
    let start = lines
        .iter()
        .position(|l| heading(l).is_some_and(|h| names.iter().any(|n| h.starts_with(n))))?;
    let mut out: Vec<&str> = Vec::new();
    // Text on the heading's own line after its colon belongs to it.
    if let Some((_, after)) = lines[start].split_once(':') {
        let after = after.trim().trim_start_matches('*').trim();
        if !after.is_empty() {
            out.push(after);
        }
    }
    // A section written indented ends at the first paragraph that is not: the summary's
    // own closing words, not part of it.
    let indented = lines[start + 1..]
        .iter()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.starts_with([' ', '\t']));
    // Under a Markdown or bold heading, a numbered line is a list item, not the next part.
    let marked = |l: &str| l.trim_start().starts_with(['#', '*']);
    let by_marks = marked(lines[start]);
    let mut blank = false;
    for l in &lines[start + 1..] {
        let ends = heading(l).is_some() && (!by_marks || marked(l));
        if ends || (indented && blank && !l.starts_with([' ', '\t'])) {
            break;
        }
        blank = l.trim().is_empty();
        out.push(l);
    }
    let text = out.join("\n").trim().to_string();
    (!text.is_empty() && !is_none_said(&text)).then_some(text)
}

/// `<name>…</name>` with a name made of `names` (spaces as underscores).
fn tagged(summary: &str, names: &[&str]) -> Option<String> {
    names.iter().find_map(|n| {
        let tag = n.replace(' ', "_");
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        let start = summary.find(&open)? + open.len();
        let end = summary[start..].find(&close)? + start;
        let text = summary[start..end].trim().to_string();
        (!text.is_empty() && !is_none_said(&text)).then_some(text)
    })
}

/// "None.", "No pending tasks", "N/A": the part says nothing remains.
fn is_none_said(text: &str) -> bool {
    let t = text
        .trim()
        .trim_start_matches(['-', '*', ' '])
        .trim_end_matches('.')
        .to_lowercase();
    t == "none" || t == "n/a" || t.starts_with("no pending") || t.starts_with("none ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUMMARY: &str = "Analysis:\nThe user asked for a parser.\n\nSummary:\n1. Primary Request and Intent:\n   Make the widget parser accept blank lines.\n\n7. Pending Tasks:\n   - Tests for N>0 and N=0\n   - Run `mix credo --strict`\n\n8. Current Work:\n   Editing lib/widget/parser.ex to skip blank lines.\n\n9. Optional Next Step:\n   Run the widget tests and fix the first failure.\n";

    #[test]
    fn the_numbered_sections_of_a_summary_are_read() {
        let closing = format!("{SUMMARY}\nIf you need more, read the whole transcript.\n");
        let r = of(&closing, "2026-11-27T10:00:00Z").unwrap();
        assert_eq!(
            r.pending.as_deref(),
            Some("- Tests for N>0 and N=0\n   - Run `mix credo --strict`")
        );
        assert_eq!(
            r.current_work.as_deref(),
            Some("Editing lib/widget/parser.ex to skip blank lines.")
        );
        assert_eq!(
            r.next_step.as_deref(),
            Some("Run the widget tests and fix the first failure.")
        );
    }

    #[test]
    fn markdown_headings_gemini_plans_and_nothing_left() {
        let r = of(
            "## Current Work\nWiring the CLI flag.\n\n## Next Steps\n1. Add the test\n2. Commit\n",
            "t",
        )
        .unwrap();
        assert_eq!(r.current_work.as_deref(), Some("Wiring the CLI flag."));
        assert_eq!(r.next_step.as_deref(), Some("1. Add the test\n2. Commit"));
        let g = of(
            "<overall_goal>x</overall_goal>\n<current_plan>\n1. [DONE] a\n2. [TODO] b\n</current_plan>",
            "t",
        )
        .unwrap();
        assert_eq!(g.pending.as_deref(), Some("1. [DONE] a\n2. [TODO] b"));
        assert_eq!(of("7. Pending Tasks:\n   None.\n", "t"), None);
        assert_eq!(of("All done, nothing else.", "t"), None);
    }

    #[test]
    fn secrets_in_a_summary_are_redacted_and_parts_bounded() {
        let long = format!(
            "7. Pending Tasks:\n - set token ghp_{} in CI\n - {}\n",
            "a".repeat(36),
            "x ".repeat(2000)
        );
        let r = of(&long, "t").unwrap();
        let p = r.pending.unwrap();
        assert!(!p.contains(&"a".repeat(36)), "{p}");
        assert_eq!(p.chars().count(), MAX_PENDING_CHARS);
    }
}
