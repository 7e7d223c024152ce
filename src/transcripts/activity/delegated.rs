//! Files a subagent changed, as far as its parent's transcript shows them.
//!
//! A subagent's own transcript is not always at hand (it may be elsewhere, or gone), but the
//! parent keeps the task it handed over and the report it got back. When the task names files
//! by path and the report, stating changes, names those same files, they were changed by the
//! session: nothing else is taken (a file only the task names may have been left alone).

/// Words with which a report states that it changed something.
const CHANGE_WORDS: &[&str] = &[
    "changed",
    "changes",
    "modified",
    "updated",
    "edited",
    "replaced",
    "removed",
    "deleted",
    "created",
    "rewrote",
    "rewritten",
    "fixed",
    "renamed",
];

/// The paths `task` names that `report` names again (by file name, or by the name without its
/// extension), when `report` says it changed something; in the order the task names them.
pub fn changed_files(task: &str, report: &str) -> Vec<String> {
    let report_lower = report.to_lowercase();
    let states_changes = report_lower
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| CHANGE_WORDS.contains(&w));
    if !states_changes {
        return Vec::new();
    }
    let mut found: Vec<String> = Vec::new();
    for path in named_paths(task) {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(&path);
        let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
        if (names(report, name) || names(report, stem)) && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// Whether `text` holds `word` as a whole word (not inside a longer identifier).
fn names(text: &str, word: &str) -> bool {
    // A stem this short ("io", "a") names too many things to tell.
    if word.chars().count() < 4 {
        return false;
    }
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// Tokens of `text` that are file paths: a directory part and a file name with an extension.
fn named_paths(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '(' | ')' | ','))
        .map(|t| t.trim_end_matches(['.', ':', ';', '!', '?']))
        .map(str::to_string)
        .filter(|t| {
            let Some((dir, name)) = t.rsplit_once(['/', '\\']) else {
                return false;
            };
            let ext = name.rsplit_once('.');
            !dir.is_empty()
                && !t.contains("://")
                && ext.is_some_and(|(s, e)| {
                    !s.is_empty() && !e.is_empty() && e.chars().all(char::is_alphanumeric)
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &str = "Remove the old theme from these files.\n\
        **Files to modify:**\n\
        1. `App/Views/LoginView.swift` — old colors\n\
        2. `App/Views/SettingsView.swift`\n\
        3. `App/Theme/Palette.swift` — keep as is unless needed\n";

    #[test]
    fn files_the_task_names_and_the_report_says_it_changed() {
        let report = "Summary of changes:\n- colors replaced in LoginView and SettingsView.swift";
        assert_eq!(
            changed_files(TASK, report),
            vec!["App/Views/LoginView.swift", "App/Views/SettingsView.swift"]
        );
    }

    #[test]
    fn nothing_from_a_report_that_changed_nothing() {
        let report = "LoginView uses the old colors; SettingsView and Palette too.";
        assert!(changed_files(TASK, report).is_empty());
    }

    #[test]
    fn a_name_inside_a_longer_identifier_is_not_the_file() {
        let report = "Updated LoginViewModel only.";
        assert!(changed_files(TASK, report).is_empty());
    }

    #[test]
    fn windows_paths_and_urls() {
        let task = r"Fix C:\src\app\main.rs and see https://example.com/doc.html";
        let report = "Fixed main.rs.";
        assert_eq!(changed_files(task, report), vec![r"C:\src\app\main.rs"]);
    }
}
