//! Files the agent's harness put into the conversation without a tool call: the `@path`
//! references of a slash command's expanded text (Claude Code reads each into the context, as
//! for an `@` mention in a prompt, which newer versions record as a `file` attachment line).
//! They are reads, never changes.

/// The files `text` (a command's expansion) references as `@path`: a word that starts with
/// `@`, whose path has a folder or starts with `.` and whose last part has an extension
/// (`@.planning/STATE.md`, `@./docs/guide.md`, `@src/lib.rs`). Not an e-mail address, a
/// package scope (`@types/node`), a decorator (`@Override`), an import alias (`@/components/x.ts`)
/// or a mention (`@alice`).
pub fn referenced_files(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else {
            continue;
        };
        let path = path.trim_end_matches([',', ';', ':', ')', '.', '`', '"', '\'']);
        if is_referenced_path(path) && !out.iter().any(|p| p == path) {
            out.push(path.to_string());
        }
    }
    out
}

fn is_referenced_path(path: &str) -> bool {
    if path.is_empty()
        || path.starts_with('/')
        || path.contains([
            '@', '$', '`', '*', '?', '{', '}', '(', '<', '>', '|', '=', '\\',
        ])
        || path.contains("://")
    {
        return false;
    }
    let last = path.rsplit('/').next().unwrap_or("");
    let has_extension = last.rfind('.').is_some_and(|i| {
        i > 0 && i + 1 < last.len() && last[i + 1..].chars().all(char::is_alphanumeric)
    });
    (path.contains('/') || path.starts_with('.')) && has_extension
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commands_at_references_are_the_files_it_attaches() {
        // The shape of a real slash command's expansion (an `isMeta` user text).
        let text = "<execution_context>\n@./.claude/workflows/discuss-phase.md\n</execution_context>\n\n<context>\nPhase number: 14 (required)\n\n**Load project state:**\n@.planning/STATE.md\n\n**Load roadmap:**\n@.planning/ROADMAP.md\n</context>";
        assert_eq!(
            referenced_files(text),
            [
                "./.claude/workflows/discuss-phase.md",
                ".planning/STATE.md",
                ".planning/ROADMAP.md"
            ]
        );
        assert_eq!(
            referenced_files("See @src/lib.rs, then run."),
            ["src/lib.rs"]
        );
    }

    #[test]
    fn mentions_addresses_scopes_decorators_and_aliases_are_not_files() {
        for text in [
            "ask @alice about it",
            "mail dev@example.com",
            "npm i -D @types/node",
            "@Override public void run()",
            "import Button from '@/components/Button.tsx'",
            "@/components/Button.tsx",
            "pin @scope/pkg@1.2.3",
            "@README",
            "@{upstream}",
        ] {
            assert!(referenced_files(text).is_empty(), "{text}");
        }
    }
}
