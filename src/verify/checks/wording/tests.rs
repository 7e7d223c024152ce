use super::cold_read::*;
use super::next_action::*;
use super::placeholders::*;
use super::*;

/// The word lists are data files anyone may edit: an entry a check compares with a
/// lower-cased word must be one (else it never matches), and each is there once.
#[test]
fn word_lists_hold_lowercase_words_once() {
    let compared_with_words: [(&str, &[&str]); 10] = [
        ("vague_words", &VAGUE_WORDS),
        ("action_verbs", &ACTION_VERBS),
        ("lead_ins", &LEAD_INS),
        ("english_markers", &ENGLISH_MARKERS),
        ("foreign_markers", &FOREIGN_MARKERS),
        ("generic_activity", &GENERIC_ACTIVITY),
        ("says_of_what", &SAYS_OF_WHAT),
        ("pointing_followers", &POINTING_FOLLOWERS),
        ("clause_verbs", &CLAUSE_VERBS),
        ("product_nouns", &PRODUCT_NOUNS),
    ];
    for (name, list) in compared_with_words {
        assert!(!list.is_empty(), "{name}");
        for (i, entry) in list.iter().enumerate() {
            assert_eq!(words(entry), [*entry], "{name}: {entry:?}");
            assert!(!list[..i].contains(entry), "{name}: {entry:?} twice");
        }
    }
    for (name, list) in [
        ("stand_ins", &*STAND_INS),
        ("template_text", &*TEMPLATE_TEXT),
        ("cold_words", &*COLD_WORDS),
    ] {
        for (i, entry) in list.iter().enumerate() {
            assert_eq!(*entry, entry.to_lowercase(), "{name}: {entry:?}");
            assert!(!list[..i].contains(entry), "{name}: {entry:?} twice");
        }
    }
    // Comment lines are no phrases.
    assert!(!COLD_PHRASES.is_empty());
    assert!(COLD_PHRASES.iter().all(|p| !p.starts_with('#')));
}

#[test]
fn masking_keeps_offsets_and_skips_unclosed_quotes() {
    assert_eq!(mask_quoted("run `a b` now"), "run       now");
    let curly = "say \"hi\" and “x”";
    assert_eq!(mask_quoted(curly).len(), curly.len());
    assert_eq!(mask_quoted(curly).trim_end(), "say      and");
    assert_eq!(mask_quoted("5\" screen"), "5\" screen");
}

#[test]
fn slot_prefilter_passes_every_line_the_slot_regex_matches() {
    let slots = [
        "fill {{ var }} here",
        "{% if x %}",
        "write <task name> now",
        "call {name}",
        "[insert the reason]",
        "Date: [DATE]",
        "on YYYY-MM-DD",
        "by DD/MM/YYYY",
        "MM.DD.YYYY",
        "[Your answer here]",
    ];
    for line in slots {
        assert!(SLOT.is_match(line), "{line}");
        assert!(could_hold_slot(line), "{line}");
    }
    for line in [
        "run the gate again",
        "Vec<String> stays",
        "fix a[i]",
        "mm-dd",
    ] {
        assert!(!SLOT.is_match(line) || could_hold_slot(line), "{line}");
    }
    assert!(!could_hold_slot("measure checkpoint: run cargo test"));
}

#[test]
fn word_prefilters_pass_every_line_their_regexes_match() {
    let cold = [
        "as we discussed",
        "discussed above",
        "we just discussed",
        "we were talking about",
        "like we talked about",
        "just agreed",
        "the approach we settled",
        "the decision we made",
        "as decided",
        "as I mentioned",
        "mentioned earlier",
        "like you suggested",
        "noted above",
        "see above",
        "the above",
        "above-mentioned",
        "the output above",
        "same as before",
        "as we did before",
        "like last time",
        "this chat",
        "earlier in our thread",
        "in this session",
        "our discussion",
        "my previous reply",
        "previous message",
        "where we left off",
        "you know what I mean",
        "what the user meant",
        "what you asked for",
        "the bug we hit",
        "the crash I ran into",
        "the bugs from yesterday",
        "since the prior session",
        "fix the remaining errors first",
        "AS  WE\tDISCUSSED",
    ];
    for line in cold {
        assert!(COLD.is_match(line), "{line}");
        assert!(may_hold_any(line, &COLD_WORDS), "{line}");
    }
    assert!(THAT_THING.is_match("fix That bug") && may_hold_any("fix That bug", &["that"]));
    for line in [
        "agreed on the Call",
        "in a previous meeting",
        "from the thread",
    ] {
        assert!(CONVERSATION_PLACE.is_match(line), "{line}");
        assert!(may_hold_any(line, CONVERSATION_WORDS), "{line}");
    }
    for text in [
        "(no changes)",
        "Unchanged",
        "same as BEFORE",
        "N/C",
        "sin cambios",
    ] {
        assert!(NO_CHANGE.is_match(text), "{text}");
        assert!(may_hold_any(text, NO_CHANGE_WORDS), "{text}");
    }
    for line in ["see shell_3", "via task-50", "by pid#12"] {
        assert!(RUNTIME_HANDLE.is_match(line), "{line}");
        assert!(HANDLE_NAMES.iter().any(|n| line.contains(n)), "{line}");
    }
    assert!(waiting("Waiting for CI") && waiting("ON HOLD") && waiting("レビュー待ち"));
    assert!(!may_hold_any("run the gate again", &COLD_WORDS));
    // Under Unicode case folding the Kelvin sign is a `k`: such text takes the regex.
    assert!(COLD.is_match("you \u{212A}now what I mean"));
    assert!(may_hold_any("you \u{212A}now what I mean", &COLD_WORDS));
}

#[test]
fn english_detection() {
    assert!(reads_as_english("the parser needs tests"));
    assert!(!reads_as_english("Ejecutar cargo test y corregir el fallo"));
    assert!(!reads_as_english("src/state.rs の CRLF テストを直す"));
    assert!(!reads_as_english("Den Test für CRLF reparieren"));
}

/// The cheap looks that spare compiling IDLE and MARKER never rule out a text the regex
/// matches: the idle and marker texts the checks know, in any case, and any ASCII text.
#[test]
fn idle_and_marker_regexes_are_skipped_only_where_they_cannot_match() {
    for text in [
        "idle: pull/push loop",
        "  -- IDLING",
        "Standby",
        "stand   by for review",
        "(nothing to do)",
        "Nothing left",
        "no further action needed",
        "NO WORK PENDING",
    ] {
        assert!(IDLE.is_match(text), "{text}");
        assert!(may_idle(text), "{text}");
    }
    assert!(!may_idle("run the gate again") && !may_idle("fix idle handling"));
    assert!(
        may_idle("\u{17F}tandby"),
        "the long s folds to s: such text takes the regex"
    );
    for line in [
        "TBD",
        "tba later",
        "the TBA slot",
        "TODO:",
        "FIXME",
        "xxx",
        "what now???",
    ] {
        assert!(MARKER.is_match(line), "{line}");
        assert!(may_hold_any(line, MARKER_WORDS), "{line}");
    }
    assert!(!may_hold_any("run the gate again", MARKER_WORDS));
}

mod prefilters {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn a_text_the_regex_matches_is_never_ruled_out(
            text in "[ -~\t]{0,6}(idle|IdLiNg|standby|stand  by|nothing to do|no action needed|tbd|TBA|todo|FIXME|xXx|\\?\\?\\?|run|no)?[ -~\t]{0,12}",
        ) {
            if IDLE.is_match(text.trim()) {
                prop_assert!(may_idle(text.trim()));
            }
            for line in text.lines() {
                if MARKER.is_match(line) {
                    prop_assert!(may_hold_any(line, MARKER_WORDS));
                }
            }
        }
    }
}
