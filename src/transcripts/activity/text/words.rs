//! The word lists the text rules match, kept as data: one file each under `words/`, built into
//! the binary (`include_str!`) and split into entries once, the first time a rule asks.
//!
//! The format is `system::word_list`'s.

use std::ops::Deref;
use std::sync::OnceLock;

/// A word list: its file's text, split into entries on first use.
pub(super) struct Words {
    text: &'static str,
    entries: OnceLock<Vec<&'static str>>,
}

impl Words {
    const fn new(text: &'static str) -> Words {
        Words {
            text,
            entries: OnceLock::new(),
        }
    }
}

impl Deref for Words {
    type Target = [&'static str];

    fn deref(&self) -> &[&'static str] {
        self.entries
            .get_or_init(|| crate::system::word_list::entries(self.text))
    }
}

/// Sentences that only ctxkeep's resume prompt (templates/resume.md) renders: a user line
/// carrying one of them is ctxkeep's own restore, not the user's request.
pub(super) static RESUME_MARKERS: Words = Words::new(include_str!("words/resume_markers.txt"));
/// Blocks agents and hooks wrap around injected context; never the user's words.
pub(super) static WRAPPERS: Words = Words::new(include_str!("words/wrappers.txt"));
/// Line beginnings of text that is not a request: shell-mode echoes, interruptions, agents'
/// own nudges and instruction files, ctxkeep's own instructions.
pub(super) static NOT_A_REQUEST: Words = Words::new(include_str!("words/not_a_request.txt"));
/// Slash commands that drive the agent's interface rather than ask for work.
pub(super) static UI_COMMANDS: Words = Words::new(include_str!("words/ui_commands.txt"));
/// Words that only tell the agent to go on, agree, or point at the work already under way. A
/// short request made of nothing else is a nudge; one more word ("continue with the parser")
/// makes it a task.
pub(super) static NUDGE_WORDS: Words = Words::new(include_str!("words/nudge_words.txt"));
/// A command's argument that is only a value: yes/no and on/off words and their kin.
pub(super) static BARE_VALUES: Words = Words::new(include_str!("words/bare_values.txt"));
/// Openings of an open question, one that asks the user for their view rather than a yes or a
/// no ("What would you like to clarify?", "Which approach?", "What's your preference?").
pub(super) static OPEN_QUESTION_WORDS: Words =
    Words::new(include_str!("words/open_question_words.txt"));
/// Verbs that, opening a sentence, ask the agent for work ("Add a flag.", "fix it up").
pub(super) static IMPERATIVES: Words = Words::new(include_str!("words/imperatives.txt"));
/// Words a sentence may open with before the words that ask for work ("ok, let's …",
/// "so fix it").
pub(super) static WORK_LEADS: Words = Words::new(include_str!("words/work_leads.txt"));
/// First words of an answer, a reaction or a complaint.
pub(super) static ANSWER_WORDS: Words = Words::new(include_str!("words/answer_words.txt"));
/// First words of a short prompt that adds to the task under way.
pub(super) static ADDITIONS: Words = Words::new(include_str!("words/additions.txt"));
/// Beginnings that tell the agent to go on with what it proposed ("go ahead with phase 1").
pub(super) static GO_ON: Words = Words::new(include_str!("words/go_on.txt"));
/// Words that point back at what was said before rather than name the work.
pub(super) static BACK_REFERENCES: Words = Words::new(include_str!("words/back_references.txt"));
/// Verbs and qualifiers that, around a back-reference, name no work of their own ("fix it
/// up", "make this faster", "commit that too").
pub(super) static GENERIC_WORDS: Words = Words::new(include_str!("words/generic_words.txt"));
/// Interjections that open a reaction to what was just done ("ah, I messed up …").
pub(super) static REACTIONS: Words = Words::new(include_str!("words/reactions.txt"));
/// Phrases that ask the agent for work; a prompt holding one is not a mere reaction.
pub(super) static DIRECTIVES: Words = Words::new(include_str!("words/directives.txt"));
/// Openings of an opinion on what the agent just said or proposed.
pub(super) static OPINIONS: Words = Words::new(include_str!("words/opinions.txt"));
/// Words of a statement about how things are ("it's not feasible", "that won't work").
pub(super) static STATEMENT_WORDS: Words = Words::new(include_str!("words/statement_words.txt"));
/// What an agent proposed, named as its own ("your better option", "your second approach").
pub(super) static PROPOSALS: Words = Words::new(include_str!("words/proposals.txt"));
/// Headings and labels under which agents list what comes next.
pub(super) static NEXT_LABELS: Words = Words::new(include_str!("words/next_labels.txt"));
/// Sentence beginnings that state the next step in so many words.
pub(super) static NEXT_WORDS: Words = Words::new(include_str!("words/next_words.txt"));
/// Sentence beginnings that say what remains. Not "I'll …", "I need to …", "Let me …" or
/// "Now …": those narrate the step being taken this moment ("I need to add the private
/// function.", "Now I'll rewrite the renderer."), not the work that remains.
pub(super) static REMAINING_WORDS: Words = Words::new(include_str!("words/remaining_words.txt"));
/// Beginnings that look like intent but are not a step of the work.
pub(super) static NOT_INTENT: Words = Words::new(include_str!("words/not_intent.txt"));
/// Sentence beginnings that, in the words a turn ends with (no call after them), say what the
/// agent will do next: "Waiting on CI. I'll address any feedback once it completes."
pub(super) static TURN_END_WORDS: Words = Words::new(include_str!("words/turn_end_words.txt"));
/// Words in a line that introduces the work still ahead ("Remaining for gqc.6:", "Next, I
/// will:", "Still to do:", "TODO:", "The open threads from the last retro still stand:").
pub(super) static PLAN_CUES: Words = Words::new(include_str!("words/plan_cues.txt"));
/// Openings of a sentence in which the agent sets out what it is about to change.
pub(super) static ABOUT_TO: Words = Words::new(include_str!("words/about_to.txt"));
/// Verbs of looking, not changing: "Let me check these files:" lists what it reads.
pub(super) static LOOKING: Words = Words::new(include_str!("words/looking.txt"));

#[cfg(test)]
mod tests {
    use super::*;

    /// Every list, with its file's name.
    fn all() -> Vec<(&'static str, &'static Words)> {
        vec![
            ("resume_markers", &RESUME_MARKERS),
            ("wrappers", &WRAPPERS),
            ("not_a_request", &NOT_A_REQUEST),
            ("ui_commands", &UI_COMMANDS),
            ("nudge_words", &NUDGE_WORDS),
            ("bare_values", &BARE_VALUES),
            ("open_question_words", &OPEN_QUESTION_WORDS),
            ("imperatives", &IMPERATIVES),
            ("work_leads", &WORK_LEADS),
            ("answer_words", &ANSWER_WORDS),
            ("additions", &ADDITIONS),
            ("go_on", &GO_ON),
            ("back_references", &BACK_REFERENCES),
            ("generic_words", &GENERIC_WORDS),
            ("reactions", &REACTIONS),
            ("directives", &DIRECTIVES),
            ("opinions", &OPINIONS),
            ("statement_words", &STATEMENT_WORDS),
            ("proposals", &PROPOSALS),
            ("next_labels", &NEXT_LABELS),
            ("next_words", &NEXT_WORDS),
            ("remaining_words", &REMAINING_WORDS),
            ("not_intent", &NOT_INTENT),
            ("turn_end_words", &TURN_END_WORDS),
            ("plan_cues", &PLAN_CUES),
            ("about_to", &ABOUT_TO),
            ("looking", &LOOKING),
        ]
    }

    #[test]
    fn every_word_list_is_read_whole_without_blanks_or_repeats() {
        for (name, list) in all() {
            assert!(!list.is_empty(), "{name}: no entries");
            for (i, entry) in list.iter().enumerate() {
                assert!(!entry.trim().is_empty(), "{name}: an empty entry");
                assert!(!list[..i].contains(entry), "{name}: {entry:?} twice");
            }
        }
        // Quoted entries keep their blanks; comments and blank lines are not entries.
        assert!(NEXT_WORDS.contains(&"next "));
        assert!(NOT_A_REQUEST.contains(&"# AGENTS.md instructions for"));
        assert!(!NUDGE_WORDS.iter().any(|w| w.starts_with('#')));
    }

    #[test]
    fn every_file_under_words_is_a_list_the_rules_read() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/transcripts/activity/text/words");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let mut read: Vec<String> = all().iter().map(|(f, _)| format!("{f}.txt")).collect();
        read.sort();
        assert_eq!(files, read);
    }
}
