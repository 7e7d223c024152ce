//! The plan an agent set out in plan mode (Claude Code's `ExitPlanMode` call: its input's
//! `plan`, a Markdown document), kept as its outline: the plan's title, the sections that
//! hold steps (a `##` heading over a list or over sub-headings), and the steps its last
//! section lists (where a plan ends with its checks and rollout: what remains once the work
//! is in). Code blocks, tables and prose are left out: a few items, a few hundred characters,
//! not the document.

use serde::{Deserialize, Serialize};

use super::text;

/// At most this many steps are kept (the closing steps first, then the sections).
pub const MAX_PLAN_STEPS: usize = 10;
/// At most this many of them are the last section's steps.
pub const MAX_CLOSING_STEPS: usize = 5;
/// A step (or the title) is cut to this many characters.
pub const MAX_PLAN_STEP_CHARS: usize = 120;
/// The steps together stay within this many characters.
pub const MAX_PLAN_CHARS: usize = 700;

/// The plan the agent set out in plan mode, as its outline (recorded text: redacted, bounded).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanModePlan {
    /// When the agent set it out (the transcript line's time, RFC 3339 seconds), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// The plan's first heading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its sections that hold steps, then the steps of its last section, in the plan's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
}

/// One section of the plan: its heading and what it holds.
#[derive(Default)]
struct Section {
    heading: Option<String>,
    /// Its top-level list items (numbered or bulleted), outside code blocks.
    items: Vec<String>,
    /// It has sub-headings (`###` and deeper): steps of their own.
    has_subsections: bool,
}

/// The outline of a plan-mode plan; None when it has no title and no steps.
pub fn outline(plan: &str, at: Option<String>) -> Option<PlanModePlan> {
    let mut title: Option<String> = None;
    let mut sections: Vec<Section> = vec![Section::default()];
    let mut in_code = false;
    for line in plan.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_code = !in_code;
            continue;
        }
        if in_code || t.is_empty() || t.starts_with('|') {
            continue;
        }
        if let Some((level, heading)) = heading(t) {
            match level {
                1 if title.is_none() => title = Some(heading.to_string()),
                1 | 2 => sections.push(Section {
                    heading: Some(heading.to_string()),
                    ..Section::default()
                }),
                _ => {
                    if let Some(s) = sections.last_mut() {
                        s.has_subsections = true;
                    }
                }
            }
            continue;
        }
        // Top-level items only: an indented item details the one above it.
        if line.starts_with([' ', '\t']) {
            continue;
        }
        if let Some(item) = list_item(t) {
            if let Some(s) = sections.last_mut() {
                s.items.push(item.to_string());
            }
        }
    }
    let closing_at = sections.iter().rposition(|s| !s.items.is_empty());
    let mut heads: Vec<String> = Vec::new();
    let mut closing: Vec<String> = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        if Some(i) == closing_at {
            closing = s
                .items
                .iter()
                .take(MAX_CLOSING_STEPS)
                .map(|x| step(x))
                .collect();
        } else if let Some(h) = &s.heading {
            if s.has_subsections || !s.items.is_empty() {
                heads.push(step(h));
            }
        }
    }
    // The closing steps are what remains last: they keep their place over the sections.
    let mut budget = MAX_PLAN_CHARS;
    let mut kept_closing = Vec::new();
    for c in closing {
        if c.chars().count() > budget {
            break;
        }
        budget -= c.chars().count();
        kept_closing.push(c);
    }
    let room = MAX_PLAN_STEPS.saturating_sub(kept_closing.len());
    let mut kept_heads = Vec::new();
    for h in heads.into_iter().take(room) {
        if h.chars().count() > budget {
            break;
        }
        budget -= h.chars().count();
        kept_heads.push(h);
    }
    kept_heads.extend(kept_closing);
    let title = title.map(|t| step(&t));
    (title.is_some() || !kept_heads.is_empty()).then_some(PlanModePlan {
        at,
        title,
        steps: kept_heads,
    })
}

/// A Markdown heading's level and text (`## Fase 1: Server` → 2, "Fase 1: Server").
fn heading(t: &str) -> Option<(usize, &str)> {
    let level = t.chars().take_while(|&c| c == '#').count();
    let rest = t[level..].strip_prefix(' ')?;
    let rest = rest.trim().trim_end_matches('#').trim();
    (level > 0 && !rest.is_empty()).then_some((level, rest))
}

/// A list item's text: `- x`, `* x`, `+ x`, `1. x`, `2) x`, a task box dropped.
fn list_item(t: &str) -> Option<&str> {
    let rest = if let Some(r) = t.strip_prefix(['-', '*', '+']) {
        r.strip_prefix(' ')?
    } else {
        let digits = t.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        t[digits..].strip_prefix(['.', ')'])?.strip_prefix(' ')?
    };
    let rest = rest
        .trim_start_matches("[ ] ")
        .trim_start_matches("[x] ")
        .trim();
    (!rest.is_empty()).then_some(rest)
}

/// A step as recorded: emphasis marks dropped, redacted, cut.
fn step(raw: &str) -> String {
    let plain = raw.replace("**", "");
    text::cut(
        crate::system::redact::redact(plain.trim()).as_ref(),
        MAX_PLAN_STEP_CHARS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan in the shape plan mode writes: a title, context prose, a code block, phases
    /// with sub-steps, a table of files and a closing list of checks.
    const PLAN: &str = "# Move the rate limiter behind the gateway\n\n## Context\n\nThe limiter runs in each worker, so limits are per process.\n\n## Design\n\n```\nclient --> gateway --> worker\n```\n\n## Phase 1: Gateway\n\n### 1.1 Add the `limiter` crate\n\n- Add `governor = \"0.6\"` to `gateway/Cargo.toml`\n\n## Phase 2: Workers\n\n1. **Remove** `worker/src/limit.rs`\n2. Drop the `--limit` flag\n   - keep it parsed for one release\n\n## Files\n\n| File | Change |\n|---|---|\n| `gateway/src/main.rs` | wire the layer |\n\n## Verification\n\n1. `cargo test -p gateway` passes\n2. Deploy: `fly deploy --app gateway`\n3. Watch the 429 rate for a day\n";

    #[test]
    fn the_outline_is_the_title_the_sections_with_steps_and_the_closing_steps() {
        let p = outline(PLAN, Some("2026-03-06T20:00:40Z".into())).unwrap();
        assert_eq!(
            p.title.as_deref(),
            Some("Move the rate limiter behind the gateway")
        );
        assert_eq!(
            p.steps,
            [
                "Phase 1: Gateway",
                "Phase 2: Workers",
                "`cargo test -p gateway` passes",
                "Deploy: `fly deploy --app gateway`",
                "Watch the 429 rate for a day",
            ]
        );
        assert_eq!(p.at.as_deref(), Some("2026-03-06T20:00:40Z"));
    }

    #[test]
    fn a_plain_list_is_its_own_steps_and_code_never_counts() {
        let p = outline(
            "1. Parse the header\n2. Check the seal\n```sh\n# not a heading\n- not an item\n```\n3. Write the report",
            None,
        )
        .unwrap();
        assert_eq!(p.title, None);
        assert_eq!(
            p.steps,
            ["Parse the header", "Check the seal", "Write the report"]
        );
        assert_eq!(outline("Just some prose.\n\n```\n# x\n```", None), None);
    }

    #[test]
    fn the_outline_is_bounded_and_redacted() {
        let mut plan = String::from("# Big\n");
        for n in 0..30 {
            plan.push_str(&format!("## Phase {n}: {}\n- step\n", "word ".repeat(40)));
        }
        plan.push_str(
            "## Checks\n- export API_TOKEN=sk-abcdefghijklmnopqrstuvwxyz012345 then run\n",
        );
        let p = outline(&plan, None).unwrap();
        assert!(p.steps.len() <= MAX_PLAN_STEPS, "{:?}", p.steps);
        let chars: usize = p.steps.iter().map(|s| s.chars().count()).sum();
        assert!(chars <= MAX_PLAN_CHARS, "{chars}");
        assert!(p
            .steps
            .iter()
            .all(|s| s.chars().count() <= MAX_PLAN_STEP_CHARS));
        let last = p.steps.last().unwrap();
        assert!(last.starts_with("export API_TOKEN="), "{last}");
        assert!(
            !last.contains("sk-abcdefghijklmnopqrstuvwxyz012345"),
            "{last}"
        );
    }
}
