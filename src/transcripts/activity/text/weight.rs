//! How much a user's prompt says about the task ([`Weight`]): a task, a nudge, a remark that
//! leans on what came before, a bare command, a tool's message; and whether the agent's reply
//! asked the user an open question, which makes the next prompt its answer.

use super::prose::{bare, prose_lines, sentences};
use super::request::{injected_element, is_prose_line, MAX_CLOSING_ASK_CHARS};
use super::words::{
    ADDITIONS, ANSWER_WORDS, BACK_REFERENCES, BARE_VALUES, DIRECTIVES, GENERIC_WORDS, GO_ON,
    IMPERATIVES, NUDGE_WORDS, OPEN_QUESTION_WORDS, OPINIONS, PROPOSALS, REACTIONS, STATEMENT_WORDS,
    WORK_LEADS,
};

/// What a user's words say about the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    /// They state the work: this is the task.
    Task,
    /// A slash command without arguments: the command carries the task, its words do not.
    /// Used only when no task is found.
    BareCommand,
    /// They only tell the agent to go on or agree ("continue", "go on", "yes please",
    /// "continue until all are done"): never the task.
    Nudge,
    /// A short answer, remark or complaint that only makes sense next to the prompt before it
    /// ("yes but why?", "fix it up", "ok, let's implement this", "go ahead with phase 1"):
    /// never the task on its own, kept as a follow-up to it.
    Remark,
    /// A message a tool put in the prompt box, one element from start to end
    /// (`<ci-monitor-event>…</ci-monitor-event>`, `<teammate-message …>…`): not the user's
    /// words, so never the task and not a follow-up either.
    Injected,
}

/// Longer requests are never nudges.
const MAX_NUDGE_WORDS: usize = 12;

/// How much `request` (as [`user_request`](super::user_request) gives it) says about the task.
pub fn weight(request: &str) -> Weight {
    let text = request.trim();
    if injected_element(text).is_some() {
        return Weight::Injected;
    }
    if let Some(command) = text.strip_prefix('/') {
        // A command alone, or with only a value ("/notify y", "/model 2", "/effort high" is
        // a word, not a value): it names what to run or set, not the work.
        match command.split_once(char::is_whitespace) {
            None if !command.is_empty() => return Weight::BareCommand,
            Some((_, args)) if is_bare_value(args.trim()) => return Weight::BareCommand,
            Some(_) => return Weight::Task,
            None => {}
        }
    }
    if is_pasted_document(text) {
        return Weight::Remark;
    }
    let words = prompt_words(text);
    let nudge =
        words.len() <= MAX_NUDGE_WORDS && words.iter().all(|w| NUDGE_WORDS.contains(&w.as_str()));
    if nudge {
        Weight::Nudge
    } else if is_remark(text, &words) {
        Weight::Remark
    } else {
        Weight::Task
    }
}

/// A pasted document is at least this long (lines or characters).
const MIN_DOCUMENT_LINES: usize = 10;
const MIN_DOCUMENT_CHARS: usize = 1500;

/// Whether a prompt is a document pasted without a word of the user's own: a long text that opens
/// as a document does (a Markdown heading, front matter, a code fence, an HTML comment) and ends
/// without a closing ask (see [`keep_closing_ask`](super::keep_closing_ask)). Material for the task
/// under way, whatever its sentences tell a reader to do, never the task.
fn is_pasted_document(text: &str) -> bool {
    let long =
        text.lines().count() >= MIN_DOCUMENT_LINES || text.chars().count() > MIN_DOCUMENT_CHARS;
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let opens_as_document = first.starts_with("# ")
        || first.starts_with("## ")
        || first == "---"
        || first.starts_with("```")
        || first.starts_with("<!--");
    let closing_ask = text
        .trim_end()
        .rsplit_once("\n\n")
        .is_some_and(|(_, last)| {
            is_prose_line(last.trim()) && last.trim().chars().count() <= MAX_CLOSING_ASK_CHARS
        });
    long && opens_as_document && !closing_ask
}

/// Whether a command's arguments are only a value: a yes/no or on/off word, a number, one
/// character.
fn is_bare_value(args: &str) -> bool {
    !args.contains(char::is_whitespace)
        && (args.chars().count() <= 1
            || BARE_VALUES.contains(&args.to_lowercase().as_str())
            || args.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// [`weight`], for a prompt that comes right after the agent asked the user an open question
/// (`agent_asked`, see [`asks_open_question`]): a prompt that then asks for no work in so many
/// words (see [`asks_for_work`]) is the answer, a follow-up to the task under way, whatever
/// its length ("So the most private option is the user's own key. How would you find it?").
pub fn weight_after(request: &str, agent_asked: bool) -> Weight {
    let w = weight(request);
    let text = request.trim();
    let words = prompt_words(text);
    if w == Weight::Task
        && agent_asked
        && words.len() <= MAX_ANSWER_WORDS
        && !asks_for_work(&text.to_lowercase(), &words)
    {
        return Weight::Remark;
    }
    w
}

/// An answer this long is a new request, whatever it says.
const MAX_ANSWER_WORDS: usize = 150;

/// Whether a prompt only asks a question and sets no work: its first line (the user's own
/// words, before any pasted output) is a question of at most [`MAX_REACTION_WORDS`] words,
/// and nothing in the prompt asks for work in so many words (see [`asks_for_work`]): "why
/// do we see dupes here?" with a pasted menu below it, "yes but why?". Such a prompt leaves
/// what the agent said remains standing; "can you fix it?" or "why? fix it" does not.
pub fn asks_no_work(prompt: &str) -> bool {
    let text = prompt.trim();
    let first = text.lines().next().unwrap_or("").trim();
    let first_words = prompt_words(first);
    !first_words.is_empty()
        && first_words.len() <= MAX_REACTION_WORDS
        && is_question(first)
        && !asks_for_work(&text.to_lowercase(), &prompt_words(text))
}

/// Whether an agent's reply ends by asking the user an open question: its last line of prose
/// is a question opening with one of [`OPEN_QUESTION_WORDS`]. An offer ("Want me to push?",
/// "Should I commit?") is not one: the user's next words may set new work.
pub fn asks_open_question(reply: &str) -> bool {
    let lines = prose_lines(reply);
    let Some(last) = lines.iter().rev().map(|l| bare(l)).find(|l| !l.is_empty()) else {
        return false;
    };
    if !last.ends_with('?') {
        return false;
    }
    let sentence = sentences(last).last().map_or(last, |(_, s)| s);
    let first = sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_lowercase();
    OPEN_QUESTION_WORDS.contains(&first.as_str())
}

/// Whether a prompt asks the agent for work in so many words: a sentence opening with a
/// directive ("can you …", "let's …", "I want …", "please …") or an imperative verb, after
/// any leading "ok", "so", "and", "now". Inside a question ("How would you find my key?") the
/// same words ask nothing.
fn asks_for_work(lower: &str, words: &[String]) -> bool {
    if words.iter().any(|w| w == "please") {
        return true;
    }
    lower.split(['.', '!', '?', '\n', ';']).any(|sentence| {
        let mut rest = sentence.trim_start_matches(|c: char| !c.is_alphanumeric());
        loop {
            let first = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '\''))
                .next()
                .unwrap_or("");
            if first.is_empty() || !WORK_LEADS.contains(&first) {
                break;
            }
            rest = rest[first.len()..].trim_start_matches(|c: char| !c.is_alphanumeric());
        }
        let first = rest
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .next()
            .unwrap_or("");
        DIRECTIVES.iter().any(|d| rest.starts_with(d)) || IMPERATIVES.contains(&first)
    })
}

/// Whether a prompt is a question: it ends with a question mark.
fn is_question(text: &str) -> bool {
    text.trim_end().ends_with('?')
}

/// A prompt's words, lowercased.
fn prompt_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Longer prompts stand on their own; shorter ones may be remarks (a short question is one).
const MAX_REMARK_WORDS: usize = 15;
/// A back-reference ("fix it", "make this faster") marks a remark only this short.
const MAX_REFERRING_WORDS: usize = 10;

/// Whether a short prompt leans on the conversation before it (see [`Weight::Remark`]): it
/// opens with an answer or a go-ahead, or it points back ("it", "this") with no word of its
/// own that names the work (a file, a thing, an identifier).
fn is_remark(text: &str, words: &[String]) -> bool {
    if words.is_empty() {
        return false;
    }
    let lower = text.to_lowercase();
    if reacts_without_asking_for_work(&lower, words) || refines_the_task(text, words) {
        return true;
    }
    // A question that asks for no work ("how does the SVG pick the font for every icon?")
    // asks about the work under way, at any length a question has.
    if is_question(text)
        && (3..=MAX_REACTION_WORDS).contains(&words.len())
        && !asks_for_work(&lower, words)
    {
        return true;
    }
    if words.len() > MAX_REMARK_WORDS {
        return false;
    }
    if ANSWER_WORDS.contains(&words[0].as_str()) || GO_ON.iter().any(|g| lower.starts_with(g)) {
        return true;
    }
    // "and create a PR", "also the desktop app please": an addition to the task under way.
    if ADDITIONS.contains(&words[0].as_str()) {
        return true;
    }
    // A short question asks about the work under way ("we added that test in this PR,
    // yeah?"); a one- or two-word one ("status?") may still be the request.
    if words.len() >= 3 && text.ends_with('?') {
        return true;
    }
    let names_something = names_something(text);
    let generic = |w: &String| {
        let w = w.as_str();
        BACK_REFERENCES.contains(&w) || GENERIC_WORDS.contains(&w) || NUDGE_WORDS.contains(&w)
    };
    words.len() <= MAX_REFERRING_WORDS
        && !names_something
        && words.iter().any(|w| BACK_REFERENCES.contains(&w.as_str()))
        && words.iter().all(generic)
}

/// Whether a prompt names its object: a path, a file, an identifier, a number.
fn names_something(text: &str) -> bool {
    text.split_whitespace().any(|w| {
        let w = w.trim_end_matches(['.', ',', '!', '?', ';', ':', ')']);
        w.contains(['/', '`', '_', '.', '-', ':', '#', '\\'])
            || w.chars().skip(1).any(char::is_uppercase)
            || w.chars().any(|c| c.is_ascii_digit())
    })
}

/// A reaction this long is a new request in disguise, whatever it opens with.
const MAX_REACTION_WORDS: usize = 60;

/// A prompt that reacts to the previous answer and sets no work of its own, at any length up
/// to [`MAX_REACTION_WORDS`]: it opens with an interjection and asks a question about what
/// happened ("ah I messed up …, so the numbers are off now?"), or it weighs a case against
/// what was just done ("when someone rebases later it's not feasible to …"), and in neither
/// asks for anything.
fn reacts_without_asking_for_work(lower: &str, words: &[String]) -> bool {
    if words.len() > MAX_REACTION_WORDS || DIRECTIVES.iter().any(|d| lower.contains(d)) {
        return false;
    }
    if REACTIONS.contains(&words[0].as_str()) && lower.contains('?') {
        return true;
    }
    // An opinion on what was just proposed ("I think by file is too much"); one that asks for a
    // change says "should" and is a task.
    let opinion = OPINIONS.iter().any(|o| lower.starts_with(o));
    if opinion && words.len() <= MAX_REMARK_WORDS && !words.iter().any(|w| w == "should") {
        return true;
    }
    // "If it fails, revert it" / "when done then commit": a clause that leads to an instruction.
    let hypothetical = matches!(words[0].as_str(), "when" | "if")
        || lower.starts_with("what if")
        || lower.starts_with("what about");
    hypothetical
        && words.len() <= MAX_REMARK_WORDS
        && !lower.contains(',')
        && !words.iter().any(|w| w == "then")
        && words.iter().any(|w| STATEMENT_WORDS.contains(&w.as_str()))
}

/// Whether a prompt (as [`user_request`](super::user_request) gives it, or as a follow-up is
/// stored) refines the task under way (see [`refines_the_task`]).
pub(crate) fn refines(text: &str) -> bool {
    let words = prompt_words(text);
    !words.is_empty() && refines_the_task(text, &words)
}

/// How many words may stand between "your" and the proposal it names.
const MAX_WORDS_BEFORE_PROPOSAL: usize = 3;

/// A prompt that refines the task under way rather than setting one, at any length up to
/// [`MAX_REACTION_WORDS`]: a go-ahead whose verb's object points back at the work already
/// named ("let's store it in metadata", "go ahead and put this behind a flag"), or a request about what the agent
/// proposed ("a full example for your better calculation option"). Without the prompt that
/// set the task it says nothing of what the work is; it is kept as a follow-up to that one.
fn refines_the_task(text: &str, words: &[String]) -> bool {
    let lower = text.to_lowercase();
    if words.len() > MAX_REACTION_WORDS {
        return false;
    }
    // "let's store it …", "go ahead and put this …": the go-ahead's verb takes a back-reference.
    let go_ahead_on_it = GO_ON
        .iter()
        .find(|g| lower.starts_with(**g))
        .is_some_and(|g| {
            let mut rest = lower[g.len()..]
                .split(|c: char| !(c.is_alphanumeric() || c == '\''))
                .filter(|w| !w.is_empty())
                .skip_while(|w| *w == "and");
            let _verb = rest.next();
            rest.next().is_some_and(|w| BACK_REFERENCES.contains(&w))
        });
    // One that names its own object ("refactor src/parser.rs your way") sets work of its own.
    let about_its_proposal = !names_something(text)
        && words.iter().enumerate().any(|(i, w)| {
            w == "your"
                && words[i + 1..]
                    .iter()
                    .take(MAX_WORDS_BEFORE_PROPOSAL)
                    .any(|n| PROPOSALS.contains(&n.as_str()))
        });
    go_ahead_on_it || about_its_proposal
}

#[cfg(test)]
mod tests {
    use super::super::user_request;
    use super::*;

    #[test]
    fn a_question_asks_no_work_unless_it_also_asks_for_some() {
        for prompt in [
            "why do we see dupes here?\n❯ /retro\n──────\n  /retro   Reflect on recent work (user)",
            "yes but why?",
            "we added that missing test in this PR yeah?",
        ] {
            assert!(asks_no_work(prompt), "{prompt}");
        }
        for prompt in [
            "can you check if we got the right amount of lines?",
            "why do we see dupes here? remove the copies",
            "why?\nplease fix it",
            "Delete the duplicate retro command",
            "ah I messed up, the data is off now I guess? but github shows 627 right.",
        ] {
            assert!(!asks_no_work(prompt), "{prompt}");
        }
    }

    #[test]
    fn nudges_are_not_the_task() {
        for nudge in [
            "continue",
            "Continue.",
            "go on",
            "keep going!",
            "continue please",
            "continue until all are done",
            "proceed",
            "Carry on.",
            "yes, go ahead",
            "ok",
            "check again",
            "continue implementation",
            "continue with the remaining tasks",
            "Continue where you left off",
            "...",
        ] {
            assert_eq!(weight(nudge), Weight::Nudge, "{nudge:?}");
        }
        for task in [
            "Work on bead spotter-dov",
            "continue with the parser refactor",
            "fix the CRLF test",
            "status?",
            "/review src",
            "go on and also rename the flag to --strict",
        ] {
            assert_eq!(weight(task), Weight::Task, "{task:?}");
        }
        assert_eq!(weight("/init"), Weight::BareCommand);
        assert_eq!(
            weight(&"continue ".repeat(13)),
            Weight::Task,
            "too long to be one"
        );
    }

    #[test]
    fn answers_remarks_and_go_aheads_are_not_the_task() {
        for remark in [
            "yes but you still DID not, so WHY?",
            "fix it up",
            "ok, let's implement this",
            "go ahead with phase 1",
            "No, keep the old flag as an alias",
            "make this faster",
            "Why is that still failing?",
            "commit that too",
            "we added that missing test in this PR, yeah?",
        ] {
            assert_eq!(weight(remark), Weight::Remark, "{remark:?}");
        }
        // Reactions to what was just done, longer than a short remark: no work asked for.
        for remark in [
            "oh no, I ran the migration twice by accident and now every count looks doubled in the weekly report, is that going to fix itself?",
            "hmm I deleted the branch before it was merged, so the history is gone now, right? or does the remote still keep it",
            "when two users save the same draft at once the second save isn't safe anymore",
            "if somebody renames the folder later that link won't resolve",
            "I think one entry per line is too much",
            "i guess the cache was stale",
        ] {
            assert_eq!(weight(remark), Weight::Remark, "{remark:?}");
        }
        // Refinements of the task under way: they lean on the prompt that set it.
        for remark in [
            "let's keep it in the job's metadata, can you show a complete yaml sample for the cheaper retry option you described?",
            "go ahead and put this behind a feature flag, default off, and mention the flag in the changelog when you are done",
            "can you write out a full request and response for your second approach, with the headers we would send?",
        ] {
            assert_eq!(weight(remark), Weight::Remark, "{remark:?}");
        }
        for task in [
            // A go-ahead that names its own work, and "your" that is not the agent's proposal.
            "let's add a retry with backoff to the upload client and cover it with a test that fails twice first",
            "please rename your local branch variables in the release script to snake_case and update the docs for it",
            "rewrite src/parse/table.rs following your second approach, with a test for inline tables",
        ] {
            assert_eq!(weight(task), Weight::Task, "{task:?}");
        }
        for task in [
            "oh and please also rename the flag to --strict and update every test that still uses the old name, is that ok?",
            "ah, one more thing: move the config loading into its own module with tests for every key we accept today",
            "if the build is not green, revert the last commit",
            "when the user is not logged in redirect them to the login page",
            "when the user isn't logged in, then show the login page",
            "I think the importer should skip empty rows",
            "I think we need a retry around the upload, with a test that makes it fail twice first",
            "oh wait, what happens to the cache when two workers write the same key at once? can you add a lock around it",
        ] {
            assert_eq!(weight(task), Weight::Task, "{task:?}");
        }
        for task in [
            "Fix the flaky retry test in src/net.rs",
            "Add a --json flag to the status command",
            "make the parser accept CRLF line endings",
            "Now release version 2.1",
            "Write a lexer and test it",
            // Long enough to stand on its own, whatever its first word.
            "yes, and then move the whole config loading into its own module, with tests for every key we accept today",
        ] {
            assert_eq!(weight(task), Weight::Task, "{task:?}");
        }
    }

    #[test]
    fn questions_answers_commands_and_injected_messages_are_not_the_task() {
        // A question about the work under way, at any length, unless it asks for work.
        assert_eq!(
            weight("how does the SVG handle the correct font with the power line symbols and every icon that's there?"),
            Weight::Remark
        );
        assert_eq!(
            weight("can you check if we got the right amount of lines in the last commit, the one with the parser?"),
            Weight::Task
        );
        // An answer to the agent's open question asks for nothing: a follow-up.
        let answer = "this seems like it would be fairly easy to change later on if we feel the guarantees justify it. Thinking of the lazy option for this phase, and see how it goes.";
        assert_eq!(weight(answer), Weight::Task);
        assert_eq!(weight_after(answer, true), Weight::Remark);
        let answer = "So the most private option is the user's own public key. The UX here is weird. How would you find out my key if you wanted to share something with me? Looking it up by some param would be a later phase.";
        assert_eq!(weight_after(answer, true), Weight::Remark);
        assert_eq!(
            weight_after(
                "Add the retry to src/net.rs with a test that fails twice first",
                true
            ),
            Weight::Task
        );
        assert!(asks_open_question(
            "Got it.\n\nWhat would you like to clarify about key rotation?"
        ));
        assert!(!asks_open_question("Both committed. Want me to push?"));
        assert!(!asks_open_question("Done."));
        // A command with only a value sets something; with words it may set the task.
        assert_eq!(weight("/notify y"), Weight::BareCommand);
        assert_eq!(weight("/discuss-phase 14"), Weight::BareCommand);
        assert_eq!(weight("/review src/parser"), Weight::Task);
        // What a tool wrote into the prompt.
        for injected in [
            "<ci-monitor-event>CI check \"nix-format\" failed on PR #2351. Run `gh pr checks 2351` to see details, then fix the failing check.</ci-monitor-event>",
            "<teammate-message teammate_id=\"dev\">\nTask #1 is complete.\n</teammate-message>",
        ] {
            assert_eq!(weight(injected), Weight::Injected, "{injected:?}");
        }
        assert_eq!(
            weight("<div> is shown twice in index.html, fix it"),
            Weight::Task
        );
        // The user's words after a tool's message are the prompt.
        assert_eq!(
            user_request("<ci-monitor-event>CI check failed. Fix it.</ci-monitor-event>\nhmm  skip on CI runners"),
            Some("hmm  skip on CI runners".into())
        );
        // A short addition to the task under way.
        assert_eq!(weight("and create PR"), Weight::Remark);
        assert_eq!(weight("also claude-desktop please"), Weight::Remark);
    }

    #[test]
    fn a_pasted_document_is_material_not_the_task() {
        let guide = format!(
            "# Migrating the billing guide\n\n## Steps\n\n{}",
            "1. Install the new client.\n2. Run `make migrate`.\n\n".repeat(6)
        );
        assert_eq!(weight(&guide), Weight::Remark);
        let with_ask = format!("{guide}now migrate the other twelve guides the same way");
        assert_eq!(weight(&with_ask), Weight::Task);
        assert_eq!(weight("# Fix the title of the README"), Weight::Task);
    }
}
