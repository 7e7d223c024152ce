//! The next step an agent states in its replies: the list of what remains it lays out, what a
//! "Next steps" heading or label heads, else a sentence saying what comes next.

use super::prose::{bare, cut, has_word, is_list_item, prose_lines, sentences};
use super::words::{
    ABOUT_TO, LOOKING, NEXT_LABELS, NEXT_WORDS, NOT_INTENT, PLAN_CUES, REMAINING_WORDS,
    TURN_END_WORDS,
};

/// The next step is cut to this many characters (the cut marker included).
pub const MAX_NEXT_STEP_CHARS: usize = 600;

/// The next step an agent states in `text` (one of its replies): the list it lays out of what
/// remains, what follows a heading or label naming what comes next or what remains ("## Next
/// Up", "Remaining steps: 1. … 2. …", "Still needed:"), else a sentence that says so ("Next,
/// run clippy.", "I still need to …"); cut to [`MAX_NEXT_STEP_CHARS`]. A heading on its own is
/// no step, and neither is narration of the step in hand. None when the text states none.
pub fn stated_next_step(text: &str) -> Option<String> {
    let lines = prose_lines(text);
    listed_steps(&lines)
        .or_else(|| heading_step(&lines))
        .or_else(|| labelled_step(&lines))
        .or_else(|| intent_sentence(&lines, &NEXT_WORDS))
        .or_else(|| intent_sentence(&lines, &REMAINING_WORDS))
        .map(|s| cut(&s, MAX_NEXT_STEP_CHARS))
}

/// The next step stated in a reply the agent's turn ended with: [`stated_next_step`], else
/// its sentence saying what it will do. On the way to a call the same sentence narrates the
/// step in hand and is no step.
pub fn stated_at_turn_end(text: &str) -> Option<String> {
    stated_next_step(text).or_else(|| {
        intent_sentence(&prose_lines(text), &TURN_END_WORDS).map(|s| cut(&s, MAX_NEXT_STEP_CHARS))
    })
}

/// What a Markdown heading that names the work ahead ("## Next Up", "## What to Think About
/// Next", "### Remaining") heads, up to the next heading or rule: each paragraph's first
/// sentence (a list with its introduction), joined by "; ". The heading's own words are not
/// a step.
fn heading_step(lines: &[&str]) -> Option<String> {
    let at = lines.iter().position(|l| {
        l.starts_with('#') && {
            let lower = bare(l).to_lowercase();
            PLAN_CUES.iter().any(|c| has_word(&lower, c))
        }
    })?;
    let body: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with('#') && !is_rule(l))
        .copied()
        .collect();
    let mut parts: Vec<String> = Vec::new();
    for paragraph in body.split(|l| l.is_empty()).filter(|p| !p.is_empty()) {
        if parts.len() == MAX_LISTED_STEPS {
            break;
        }
        let items = list_after(paragraph, 0);
        let part = if items.is_empty() {
            let text = paragraph
                .iter()
                .map(|l| strip_tags(bare(l)).replace("**", ""))
                .collect::<Vec<_>>()
                .join(" ");
            let first = sentences(&text).first().map(|(_, s)| s.to_string());
            first.unwrap_or(text)
        } else if is_list_item(paragraph[0]) {
            items.join("; ")
        } else {
            format!("{} {}", bare(paragraph[0]), items.join("; "))
        };
        let part = part.trim().to_string();
        if !part.is_empty() {
            parts.push(part);
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `---`, `***`, `___`: a Markdown rule, which ends a section.
fn is_rule(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 3
        && (t.chars().all(|c| c == '-')
            || t.chars().all(|c| c == '*')
            || t.chars().all(|c| c == '_'))
}

/// `text` without inline HTML tags (`<sub>`, `</sub>`), their content kept.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        let tag = rest[open + 1..]
            .find('>')
            .map(|e| &rest[open + 1..open + 1 + e]);
        match tag {
            Some(t)
                if !t.is_empty()
                    && t.trim_start_matches('/')
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric()) =>
            {
                out.push_str(&rest[..open]);
                rest = &rest[open + t.len() + 2..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// At most this many items of a stated list are kept.
const MAX_LISTED_STEPS: usize = 8;

/// The last list in `lines` introduced by a line that names the work ahead and ends with a
/// colon: the introduction without its colon, then the items joined by "; ". A plan the agent
/// lays out beats any one sentence of it.
fn listed_steps(lines: &[&str]) -> Option<String> {
    listed_steps_cued(lines).map(|(steps, _)| steps)
}

/// [`listed_steps`], and whether the list's introduction names the work ahead (false: it sets
/// out the change in hand, "Now let me add the call. The insertion points are:").
fn listed_steps_cued(lines: &[&str]) -> Option<(String, bool)> {
    let mut found = None;
    for (i, line) in lines.iter().enumerate() {
        if is_list_item(line) {
            continue;
        }
        let intro = bare(line);
        let lower = intro.to_lowercase();
        let cued = PLAN_CUES.iter().any(|c| has_word(&lower, c));
        if !intro.ends_with(':') || !(cued || sets_out_a_change(&lower)) {
            continue;
        }
        let items = list_after(lines, i + 1);
        // Without a cue, one item is a detail of the sentence, not a plan.
        if items.is_empty() || (!cued && items.len() < 2) {
            continue;
        }
        let intro = intro.trim_end_matches(':').trim();
        found = Some((format!("{intro}: {}", items.join("; ")), cued));
    }
    found
}

/// Whether the step `text` states is the change in hand laid out as a list (see
/// [`listed_steps_cued`]) rather than what remains: it is the next step, but the plan's open
/// items still say what remains after it.
pub fn states_the_step_in_hand(text: &str) -> bool {
    listed_steps_cued(&prose_lines(text)).is_some_and(|(_, cued)| !cued)
}

/// Whether an introduction opens with the agent setting out a change ("Now let me add the
/// call after each handler parses its input. The insertion points are:"): its list is the
/// plan for it.
fn sets_out_a_change(lower: &str) -> bool {
    ABOUT_TO.iter().any(|a| {
        lower.strip_prefix(a).is_some_and(|rest| {
            let verb = rest.split_whitespace().next().unwrap_or("");
            !verb.is_empty() && !LOOKING.contains(&verb) && !rest.starts_with("also ")
        })
    })
}

/// The list items from `lines[from]` on (one blank line may come first), without their marks.
fn list_after(lines: &[&str], from: usize) -> Vec<String> {
    let mut items = Vec::new();
    let mut at = from;
    if lines.get(at).is_some_and(|l| l.is_empty()) {
        at += 1;
    }
    while let Some(line) = lines.get(at).filter(|l| is_list_item(l)) {
        if items.len() == MAX_LISTED_STEPS {
            break;
        }
        let t = line.trim_start();
        let t = t
            .split_once(". ")
            .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            .map_or(t, |(_, rest)| rest);
        let item = bare(t).trim();
        if !item.is_empty() {
            items.push(item.to_string());
        }
        at += 1;
    }
    items
}

/// A numbered list written on one line ("1. Make X 2. Rerun Y 3. Commit"), its items joined
/// by "; "; any other text as it is.
fn inline_items(text: &str) -> String {
    if !text.starts_with("1. ") || !text.contains(" 2. ") {
        return text.to_string();
    }
    let mut items: Vec<String> = Vec::new();
    let mut n = 1;
    let mut rest = &text[3..];
    loop {
        n += 1;
        let marker = format!(" {n}. ");
        match rest.find(&marker) {
            Some(at) => {
                items.push(rest[..at].trim().to_string());
                rest = &rest[at + marker.len()..];
            }
            None => {
                items.push(rest.trim().to_string());
                break;
            }
        }
    }
    items.join("; ")
}

/// What follows a "Next steps" heading or label, its list items joined.
fn labelled_step(lines: &[&str]) -> Option<String> {
    for (i, line) in lines.iter().enumerate() {
        // The label opens the line or a sentence of it ("Done. Remaining steps: 1. …").
        let b = bare(line);
        let b = b
            .match_indices(". ")
            .map(|(at, _)| &b[at + 2..])
            .find(|rest| {
                let lower = rest.to_lowercase();
                lower.split_once(':').is_some_and(|(label, _)| {
                    label.split_whitespace().count() <= 5
                        && PLAN_CUES.iter().any(|c| has_word(label, c))
                })
            })
            .unwrap_or(b);
        let lower = b.to_lowercase();
        let label_len = match NEXT_LABELS.iter().find(|l| lower.starts_with(*l)) {
            Some(label) => label.len(),
            // "Remaining steps:", "Still needed for the release:", "Left to do:": a short
            // label naming the work ahead, ended by a colon.
            None => match lower.split_once(':') {
                Some((label, _))
                    if label.split_whitespace().count() <= 5
                        && PLAN_CUES.iter().any(|c| has_word(label, c)) =>
                {
                    label.len()
                }
                _ => continue,
            },
        };
        // A heading, or a label ending in a colon; not a sentence that starts with the words.
        let Some(after) = b.get(label_len..) else {
            continue;
        };
        let after = after.trim_start_matches(['*', '_', ' ']);
        let label_colon = lower[..label_len].ends_with(':');
        if !(after.is_empty() || label_colon || after.starts_with(':')) {
            continue;
        }
        let mut parts: Vec<String> = Vec::new();
        let rest = bare(after.trim_start_matches([':', '*', ' ']));
        if !rest.is_empty() {
            parts.push(inline_items(rest));
        }
        for next in &lines[i + 1..] {
            if next.starts_with('#') {
                break;
            }
            if next.is_empty() {
                if parts.is_empty() {
                    continue;
                }
                break;
            }
            parts.push(bare(next).to_string());
        }
        if parts.is_empty() {
            continue;
        }
        let mut out = String::new();
        for p in parts.iter().filter(|p| !p.is_empty()) {
            if !out.is_empty() {
                out.push_str(if out.ends_with(':') { " " } else { "; " });
            }
            out.push_str(p);
        }
        return Some(out);
    }
    None
}

/// The first sentence beginning with one of `starts`, and the rest of its paragraph.
fn intent_sentence(lines: &[&str], starts: &[&str]) -> Option<String> {
    for paragraph in lines.split(|l| l.is_empty()) {
        // A heading names a part of the reply, not a step ("## Next Up").
        let paragraph: Vec<&str> = paragraph
            .iter()
            .filter(|l| !l.starts_with('#'))
            .copied()
            .collect();
        let text = paragraph.iter().map(|l| bare(l)).collect::<Vec<_>>().join(
            if paragraph.iter().any(|l| is_list_item(l)) {
                "; "
            } else {
                " "
            },
        );
        for (from, sentence) in sentences(&text) {
            let lower = sentence.to_lowercase();
            let lower = lower
                .trim_start_matches("ok, ")
                .trim_start_matches("okay, ")
                .trim_start_matches("so ")
                .trim_start_matches("first, ");
            if starts.iter().any(|s| lower.starts_with(s))
                && !NOT_INTENT.iter().any(|n| lower.starts_with(n))
            {
                let found = text[from..].trim();
                // A sentence that announces a list the paragraph does not hold says nothing,
                // and neither do two words.
                if found.ends_with(':') || found.split_whitespace().count() < 3 {
                    continue;
                }
                return Some(found.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_naming_what_is_still_open_introduces_the_remaining_list() {
        for said in [
            "Nothing new. The open threads still stand:\n\n- Push Lore\n- Archive praxis-rdx",
            "Outstanding:\n- Push Lore\n- Archive praxis-rdx",
        ] {
            let step = stated_next_step(said).unwrap();
            assert!(step.ends_with("Push Lore; Archive praxis-rdx"), "{step:?}");
        }
    }

    #[test]
    fn the_next_step_an_agent_states() {
        assert_eq!(
            stated_next_step(
                "The split works. Next I will make parse_table recurse into nested tables."
            ),
            Some("Next I will make parse_table recurse into nested tables.".into())
        );
        // "Next" wins over an earlier "let me".
        assert_eq!(
            stated_next_step("Let me look. Tests pass.\n\nNext, run clippy and commit."),
            Some("Next, run clippy and commit.".into())
        );
        // Narration of the step in hand is not what remains.
        for narration in [
            "The root layout has no flash. I'll add a flash display inline. Let me also check the helpers.",
            "I need to add the `reload_transcript/1` private function.",
            "Now I'll do a comprehensive rewrite of the renderer with the new layout.",
            "Let me run the tests again.",
        ] {
            assert_eq!(stated_next_step(narration), None, "{narration:?}");
        }
        // A "Next steps" heading: its list, joined.
        assert_eq!(
            stated_next_step(
                "## Summary\nDone with 4te.3.\n\n### Next Steps\nThe remaining tasks are:\n- 4te.4: trace Ash\n- 4te.5: trace LiveView\n\nThey are ready."
            ),
            Some("The remaining tasks are: 4te.4: trace Ash; 4te.5: trace LiveView".into())
        );
        assert_eq!(
            stated_next_step("Next step: run `cargo test`"),
            Some("run `cargo test`".into())
        );
        // Nothing stated; a courtesy is not a step; code is not prose.
        assert_eq!(stated_next_step("All 297 tests pass."), None);
        assert_eq!(
            stated_next_step("Done. Let me know if you need more."),
            None
        );
        assert_eq!(stated_next_step("```\nlet me = 1;\n```"), None);
        assert_eq!(stated_next_step("Next.js is configured."), None);
        let long = format!("Next, {}", "rewrite the parser ".repeat(40));
        assert_eq!(
            stated_next_step(&long).unwrap().chars().count(),
            MAX_NEXT_STEP_CHARS
        );
    }

    #[test]
    fn a_stated_list_beats_a_sentence_and_filler_is_no_step() {
        assert_eq!(
            stated_next_step(
                "Tests pass for N=1. Let me check the rest.\n\nStill needed for gqc.6:\n1. tests for N>0 and N=0\n2. `mix credo --strict`\n3. commit and push"
            ),
            Some("Still needed for gqc.6: tests for N>0 and N=0; `mix credo --strict`; commit and push".into())
        );
        assert_eq!(
            stated_next_step(
                "Done with the parser.\n\nRemaining steps:\n- wire the flag\n- update the docs"
            ),
            Some("Remaining steps: wire the flag; update the docs".into())
        );
        // Narration of the moment is not what remains.
        assert_eq!(stated_next_step("Let me be more honest."), None);
        assert_eq!(stated_next_step("Let me verify there are no errors."), None);
        assert_eq!(
            stated_next_step(
                "Now check if there's a handler that might crash. Let me search for it."
            ),
            None
        );
        // A sentence cut before its list is not a step; with its list it is.
        assert_eq!(
            stated_next_step("I'll wire it in. The key insertion points are:"),
            None
        );
        assert_eq!(
            stated_next_step("Next, I'll do these:\n- add the hook\n- run the tests"),
            Some("Next, I'll do these: add the hook; run the tests".into())
        );
        // A change set out with its list of places is the plan; a list of what it looks at is not.
        assert_eq!(
            stated_next_step(
                "Now let me add `logging.Init(id)` after each handler parses stdin. The key insertion points are:\n\n1. `handleStart()` after the id is read\n2. `handleEnd()` before it returns"
            ),
            Some("Now let me add `logging.Init(id)` after each handler parses stdin. The key insertion points are: `handleStart()` after the id is read; `handleEnd()` before it returns".into())
        );
        assert_eq!(
            stated_next_step("Let me check these files:\n- src/a.rs\n- src/b.rs"),
            None
        );
        // The change in hand laid out is the next step, not what remains after it.
        assert!(states_the_step_in_hand(
            "Now let me add the call. The insertion points are:\n1. `start()`\n2. `end()`"
        ));
        assert!(!states_the_step_in_hand(
            "Done.\n\nRemaining steps:\n- wire the flag\n- update the docs"
        ));
    }

    #[test]
    fn a_stated_remaining_list_on_one_line_or_under_a_heading_is_the_step() {
        for said in [
            "The lexer change is in.\n\nRemaining steps: 1. Make parse_table recurse into inline tables in src/ast.rs 2. Rerun cargo test ast 3. Commit and push",
            "The lexer change is in. Remaining steps: 1. Make parse_table recurse into inline tables in src/ast.rs 2. Rerun cargo test ast 3. Commit and push",
            "The lexer change is in.\n\nRemaining steps:\n1. Make parse_table recurse into inline tables in src/ast.rs\n2. Rerun cargo test ast\n3. Commit and push",
        ] {
            let step = stated_next_step(said).unwrap();
            assert!(
                step.ends_with("Make parse_table recurse into inline tables in src/ast.rs; Rerun cargo test ast; Commit and push"),
                "{step:?}"
            );
        }
        assert_eq!(
            stated_next_step("All three tests pass.\n\nStill needed: a changelog entry"),
            Some("a changelog entry".into())
        );
        // A heading naming what comes next: what it heads, never its own words.
        assert_eq!(
            stated_next_step(
                "Committed.\n\n## Next Up\n\n**Phase 14: Sharing** — share folders\n\n`/plan-phase 14`\n\n<sub>`/clear` first</sub>\n\n---\n\nAlso available: more"
            ),
            Some("Phase 14: Sharing — share folders; `/plan-phase 14`; `/clear` first".into())
        );
        assert_eq!(
            stated_next_step(
                "## What I Learned\n\nA lot.\n\n## What to Think About Next\n\n**Commits aren't pushed.** Two commits wait.\n\n**The registry has stale names.** It breaks next time."
            ),
            Some("Commits aren't pushed.; The registry has stale names.".into())
        );
        assert_eq!(stated_next_step("## Next Up"), None);
    }
}
