//! git's conflict markers in a text: where they are, and each side's text.
//!
//! A region is a line starting `<<<<<<<`, then a line `=======`, then a line
//! starting `>>>>>>>` (with diff3's `|||||||` base section allowed before the
//! `=======`). A lone `=======` (a setext heading) or a marker line without
//! the rest is not a region.

/// One conflict region: 1-based file lines, first and last inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub first: usize,
    pub last: usize,
}

/// Which side's text to keep for every region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Ours,
    Base,
    Theirs,
}

fn marker(line: &str, m: &str) -> bool {
    let bare = line.trim_end_matches(['\n', '\r']);
    bare.strip_prefix(m)
        .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
}

fn separator(line: &str) -> bool {
    line.trim_end_matches(['\n', '\r'])
        .trim_end_matches([' ', '\t'])
        == "======="
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Out,
    Ours,
    Base,
    Theirs,
}

/// Walks the lines, calling `each(state, line)`; returns the regions.
fn walk<'a>(text: &'a str, mut each: impl FnMut(Option<Side>, &'a str)) -> Vec<Region> {
    // A region counts only once it is closed; until then its lines are
    // held back and given out as ordinary text if it never closes.
    let mut regions = Vec::new();
    let mut state = State::Out;
    let mut pending: Vec<(Option<Side>, &str)> = Vec::new();
    let mut first = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let n = i + 1;
        match state {
            State::Out if marker(line, "<<<<<<<") => {
                state = State::Ours;
                first = n;
                pending.clear();
                pending.push((None, line));
                continue;
            }
            State::Out => each(None, line),
            State::Ours if marker(line, "|||||||") => {
                state = State::Base;
                pending.push((None, line));
            }
            State::Ours | State::Base if separator(line) => {
                state = State::Theirs;
                pending.push((None, line));
            }
            State::Ours => pending.push((Some(Side::Ours), line)),
            State::Base => pending.push((Some(Side::Base), line)),
            State::Theirs if marker(line, ">>>>>>>") => {
                regions.push(Region { first, last: n });
                // The marker lines themselves are dropped.
                for (s, l) in pending.drain(..) {
                    if let Some(s) = s {
                        each(Some(s), l);
                    }
                }
                state = State::Out;
            }
            State::Theirs => pending.push((Some(Side::Theirs), line)),
        }
    }
    if state != State::Out {
        for (_, l) in pending.drain(..) {
            each(None, l);
        }
    }
    regions
}

/// The conflict regions of `text`, in order.
pub fn regions(text: &str) -> Vec<Region> {
    walk(text, |_, _| {})
}

/// `lines 12–31` or `lines 12–31, 40–45`.
pub fn describe(regions: &[Region]) -> String {
    let list: Vec<String> = regions
        .iter()
        .map(|r| format!("{}–{}", r.first, r.last))
        .collect();
    format!("lines {}", list.join(", "))
}

/// `text` with every region replaced by one side's lines. `None` for
/// `Side::Base` when a region has no base section (not diff3 style).
pub fn pick(text: &str, side: Side) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let regions = walk(text, |s, line| {
        if s.is_none_or(|s| s == side) {
            out.push_str(line);
        }
    });
    // Every region must have had a base section.
    (side != Side::Base || count_base_sections(text) >= regions.len()).then_some(out)
}

fn count_base_sections(text: &str) -> usize {
    let mut n = 0;
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        if marker(line, "<<<<<<<") {
            inside = true;
        } else if inside && marker(line, "|||||||") {
            n += 1;
            inside = false;
        } else if marker(line, ">>>>>>>") {
            inside = false;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> other\nb\n";

    #[test]
    fn finds_regions_and_sides() {
        assert_eq!(regions(TEXT), vec![Region { first: 2, last: 6 }]);
        assert_eq!(describe(&regions(TEXT)), "lines 2–6");
        assert_eq!(pick(TEXT, Side::Ours).unwrap(), "a\nours\nb\n");
        assert_eq!(pick(TEXT, Side::Theirs).unwrap(), "a\ntheirs\nb\n");
        assert_eq!(pick(TEXT, Side::Base), None);
        let diff3 = "<<<<<<< ours\nx\n||||||| base\nbase\n=======\ny\n>>>>>>> theirs\n";
        assert_eq!(pick(diff3, Side::Base).unwrap(), "base\n");
        assert_eq!(pick(diff3, Side::Ours).unwrap(), "x\n");
    }

    #[test]
    fn lone_markers_and_headings_are_text() {
        assert!(regions("Title\n=======\n").is_empty());
        let open = "<<<<<<< HEAD\nx\n";
        assert!(regions(open).is_empty());
        assert_eq!(pick(open, Side::Ours).unwrap(), open);
        assert!(regions("<<<<<<<x\n=======\n>>>>>>> y\n").is_empty());
    }
}
