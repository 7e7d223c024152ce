//! A shell text's structure: its simple commands (split at `;`, `&`, `|`, newlines, parentheses
//! and backquotes outside quotes) and the command substitutions taken out of them.

/// Splits a shell text into its simple commands (at `;`, `&`, `|`, newlines,
/// parentheses and backquotes outside quotes), and takes out the command
/// substitutions (`$(…)`, `` `…` ``), which stand as `$_` in their command.
pub(super) fn split(text: &str) -> (Vec<String>, Vec<String>) {
    let chars: Vec<char> = text.chars().collect();
    let mut parts = Vec::new();
    let mut nested = Vec::new();
    let mut part = String::new();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (Some('\''), '\'') => {
                quote = None;
                part.push(c);
            }
            (Some('\''), _) => part.push(c),
            (_, '\\') => {
                part.push(c);
                if let Some(&next) = chars.get(i + 1) {
                    part.push(next);
                    i += 1;
                }
            }
            (_, '$') if chars.get(i + 1) == Some(&'(') => {
                let (inner, end) = balanced(&chars, i + 2);
                nested.push(inner);
                part.push_str("$_");
                i = end;
            }
            (_, '`') => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '`')
                    .map_or(chars.len(), |at| i + 1 + at);
                nested.push(chars[i + 1..end.min(chars.len())].iter().collect());
                part.push_str("$_");
                i = end;
            }
            (Some('"'), '"') => {
                quote = None;
                part.push(c);
            }
            (Some(_), _) => part.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                part.push(c);
            }
            (None, '\n' | ';' | '&' | '|' | '(' | ')') => parts.push(std::mem::take(&mut part)),
            (None, _) => part.push(c),
        }
        i += 1;
    }
    parts.push(part);
    parts.retain(|p| !p.trim().is_empty());
    (parts, nested)
}

/// The text from `start` to its closing parenthesis (nesting counted), and
/// where that parenthesis is.
fn balanced(chars: &[char], start: usize) -> (String, usize) {
    let mut depth = 1;
    let mut quote: Option<char> = None;
    for (at, &c) in chars.iter().enumerate().skip(start) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    return (chars[start..at].iter().collect(), at);
                }
            }
            _ => {}
        }
    }
    (
        chars[start.min(chars.len())..].iter().collect(),
        chars.len(),
    )
}
