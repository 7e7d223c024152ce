//! Secret redaction for everything agent-readable that ctxkeep writes or prints
//! (state, events, checkpoints, git output such as remote URLs, error text).
//!
//! Design (docs/reliability.md, "Secrets"; after gitleaks): a cheap keyword prefilter picks
//! the rules worth running, then one linear-time `regex` per rule. The
//! `generic` key=value rule also needs entropy >= 3.5 and no placeholder
//! stopword. Over-redaction is acceptable; a leak is not.
//!
//! A secret is replaced by `[REDACTED:<rule>]`. The marker itself never
//! matches a rule, so redaction is idempotent.

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

use regex::{Captures, Regex};

/// One secret found in a text: the rule that matched and the byte range of
/// the secret (only the password of a URL, only the value of a key=value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub start: usize,
    pub end: usize,
}

/// Stable rule names, in priority order: when findings of several rules
/// overlap, they are merged and the earliest rule in this list names them.
pub const RULES: [&str; 13] = [
    "private-key",
    "aws",
    "github",
    "gitlab",
    "anthropic",
    "openai",
    "slack",
    "google",
    "stripe",
    "jwt",
    "authorization",
    "url-credentials",
    "generic",
];

const PRIVATE_KEY: usize = 0;
const AWS: usize = 1;
const GITHUB: usize = 2;
const GITLAB: usize = 3;
const ANTHROPIC: usize = 4;
const OPENAI: usize = 5;
const SLACK: usize = 6;
const GOOGLE: usize = 7;
const STRIPE: usize = 8;
const JWT: usize = 9;
const AUTHORIZATION: usize = 10;
const URL_CREDENTIALS: usize = 11;
const GENERIC: usize = 12;

/// Literal keywords (case-sensitive) whose presence makes a provider rule
/// worth running. Every match of a rule's regex contains one of its keywords.
const KEYWORDS: &[(&str, usize)] = &[
    ("PRIVATE KEY", PRIVATE_KEY),
    ("AKIA", AWS),
    ("ASIA", AWS),
    ("ABIA", AWS),
    ("ACCA", AWS),
    ("A3T", AWS),
    ("ghp_", GITHUB),
    ("gho_", GITHUB),
    ("ghu_", GITHUB),
    ("ghs_", GITHUB),
    ("ghr_", GITHUB),
    ("github_pat_", GITHUB),
    ("glpat-", GITLAB),
    ("gldt-", GITLAB),
    ("glrt-", GITLAB),
    ("glptt-", GITLAB),
    ("glsoat-", GITLAB),
    ("glcbt-", GITLAB),
    ("glft-", GITLAB),
    ("glimt-", GITLAB),
    ("glagent-", GITLAB),
    ("glffct-", GITLAB),
    ("GR1348941", GITLAB),
    ("sk-ant-", ANTHROPIC),
    ("T3BlbkFJ", OPENAI),
    ("sk-proj-", OPENAI),
    ("sk-svcacct-", OPENAI),
    ("sk-admin-", OPENAI),
    ("xox", SLACK),
    ("hooks.slack.com", SLACK),
    ("AIza", GOOGLE),
    ("k_live_", STRIPE),
    ("k_test_", STRIPE),
    ("eyJ", JWT),
    ("://", URL_CREDENTIALS),
];

/// Per provider rule, one literal alternation of its keywords. `is_match`
/// stops at the first hit and the regex crate scans literals with SIMD, so a
/// keyword-dense input costs no more than ordinary text.
static KEYWORD_RES: LazyLock<Vec<(usize, Regex)>> = LazyLock::new(|| {
    (0..GENERIC)
        .filter(|&rule| rule != AUTHORIZATION)
        .map(|rule| {
            let alts: Vec<String> = KEYWORDS
                .iter()
                .filter(|(_, r)| *r == rule)
                .map(|(k, _)| regex::escape(k))
                .collect();
            (rule, Regex::new(&alts.join("|")).expect("keyword regex"))
        })
        .collect()
});

/// The generic rule's keywords, case-insensitive. Ordinary prose often has
/// one ("key", "access"), so the generic regex also gates on the operator.
const GENERIC_KEYWORDS: &str = r"key|api|token|secret|pass|pwd|auth|credential|access";

static GENERIC_KEYWORD_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("(?i){GENERIC_KEYWORDS}")).expect("generic keywords"));

/// Each rule's regex, compiled on first use: ctxkeep runs once per hook, and
/// compiling all twelve would cost more than most inputs take to scan.
static PATTERNS: [OnceLock<Regex>; 13] = [const { OnceLock::new() }; 13];

/// The authorization rule's keywords, case-insensitive: a header's name, a
/// scheme, curl's `-u`/`--user` (`-U`, `--proxy-user`).
const AUTH_KEYWORDS: [&str; 3] = ["authorization", "bearer", "-u"];

static AUTH_KEYWORD_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("(?i)authorization|bearer|-u").expect("auth keywords"));

fn has_auth_keyword(text: &str) -> bool {
    if text.len() > SHORT_TEXT || !text.is_ascii() {
        return AUTH_KEYWORD_RE.is_match(text);
    }
    auth_keyword_in(text, &Held::of(text).lowered())
}

/// [`has_auth_keyword`] for a short ASCII text whose bytes, lowered, are `held`.
fn auth_keyword_in(text: &str, held: &Held) -> bool {
    let lower = text.to_ascii_lowercase();
    AUTH_KEYWORDS
        .iter()
        .any(|k| held.may_hold(k) && lower.contains(k))
}

/// The bytes a short text holds, as a set: a keyword with a byte the text lacks cannot occur in
/// it, so its substring search (a searcher built per keyword, per text) is skipped. The answer
/// is `contains`'s; a hook redacts a few short texts per event, each against ~50 keywords. A
/// text longer than [`HELD_MAX`] holds most keywords' bytes: it is searched for every keyword.
struct Held([u64; 4]);

/// The longest text whose bytes are gathered before its keyword searches.
const HELD_MAX: usize = 1024;

impl Held {
    fn of(text: &str) -> Held {
        if text.len() > HELD_MAX {
            return Held([u64::MAX; 4]);
        }
        let mut set = [0u64; 4];
        for &b in text.as_bytes() {
            set[usize::from(b >> 6)] |= 1 << (b & 63);
        }
        Held(set)
    }

    /// The set of the text lowered (ASCII): `A`-`Z` (bits 1-26 of the second word) held as
    /// `a`-`z` too (bits 33-58).
    fn lowered(&self) -> Held {
        let mut set = self.0;
        set[1] |= (set[1] & 0x07FF_FFFE) << 32;
        Held(set)
    }

    /// Whether every byte of `keyword` is in the text.
    fn may_hold(&self, keyword: &str) -> bool {
        keyword
            .bytes()
            .all(|b| self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0)
    }
}

fn pattern(rule: usize) -> &'static Regex {
    PATTERNS[rule].get_or_init(|| Regex::new(&pattern_source(rule)).expect("redaction regex"))
}

// Patterns use ASCII classes and `(?-u:\b)` so the lazy DFA never has to give
// up on non-ASCII text (a Unicode `\b` forces the slow engines).
fn pattern_source(rule: usize) -> String {
    // A token's edge: a word boundary, or a `_` joining it to a word (`notes_ghp_…`,
    // `bd-12_sk-ant-…` in a file name), which `\b` alone does not see as an edge; `accept`
    // leaves the `_` out of what is redacted.
    let b = r"(?:(?-u:\b)|_)";
    let pats: [String; 13] = [
        // private-key: only the BEGIN line here; `private_keys` finds the end.
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----".to_string(),
        // aws access key id
        format!(r"{b}(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{{16}}{b}"),
        // github classic tokens and fine-grained PATs
        format!(r"{b}(?:gh[pousr]_[0-9A-Za-z]{{36,255}}|github_pat_[0-9A-Za-z_]{{82}}){b}"),
        // gitlab personal, deploy, runner, trigger ... tokens, runner registration
        format!(
            r"{b}(?:gl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|agent|ffct)-[0-9A-Za-z_-]{{20,}}|GR1348941[0-9A-Za-z_-]{{20,}})"
        ),
        // anthropic: api03, admin01, oat01, ort01 ...
        format!(r"{b}sk-ant-[a-z]{{2,6}}[0-9]{{2}}-[0-9A-Za-z_-]{{40,}}"),
        // openai: legacy and project/service-account/admin keys
        format!(
            r"{b}sk-(?:proj-|svcacct-|admin-)?[0-9A-Za-z_-]{{20,}}T3BlbkFJ[0-9A-Za-z_-]{{20,}}|{b}sk-(?:proj|svcacct|admin)-[0-9A-Za-z_-]{{40,}}"
        ),
        // slack tokens; for webhooks only the secret path is redacted
        format!(
            r"{b}xox[baprse]-[0-9A-Za-z-]{{10,}}|hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/]{{43,56}})"
        ),
        // google api key
        format!(r"{b}AIza[0-9A-Za-z_-]{{35}}"),
        // stripe secret and restricted keys
        format!(r"{b}[sr]k_(?:live|test)_[0-9A-Za-z]{{24,}}"),
        // jwt
        format!(r"{b}eyJ[0-9A-Za-z_-]{{10,}}\.eyJ[0-9A-Za-z_-]{{10,}}\.[0-9A-Za-z_-]{{10,}}"),
        // authorization: the credentials of an `Authorization:` header (any
        // scheme, quoted as in JSON or a shell), of a bare `Bearer` token, and
        // the password of curl's `-u user:pass` (`--user`, `-U`,
        // `--proxy-user`). One capture group per branch: the secret.
        format!(
            r#"(?i)(?:{b}(?:proxy-)?authorization(?:\\?["'])?[ \t]{{0,5}}[:=][ \t]{{0,5}}(?:\\?["'])?(?:[a-z-]{{2,20}}[ \t]{{1,5}})?([A-Za-z0-9._~+/=-]{{8,1024}})|{b}bearer[ \t]{{1,5}}([A-Za-z0-9._~+/=-]{{8,1024}})|(?:^|[\s"'=])(?-i:-u[ \t]{{0,5}}|-U[ \t]{{0,5}}|--(?:proxy-)?user(?:[ \t]{{1,5}}|=))(?:\\?["'])?[^\s:"'@/\\]{{1,100}}:([^\s"'\\]{{3,200}}))"#
        ),
        // url credentials: only the password (group 1); the user may be empty
        // (`redis://:pw@host`)
        format!(r"{b}[a-zA-Z][a-zA-Z0-9+.-]{{1,20}}://[^\s/:@]{{0,100}}:([^\s/@]{{3,200}})@"),
        // generic key=value: keyword, identifier rest, optional closing quote,
        // operator, then a quoted value of printable ASCII without spaces
        // (groups 1, 2) or a bare token-like value (group 3). ASCII classes
        // keep the bounded repetitions small enough for the fast engines.
        format!(
            r#"(?i)(?:{GENERIC_KEYWORDS})[0-9a-z_.-]{{0,20}}(?:\\?['"])?[ \t]{{0,5}}(?:=|:=|:|=>)[ \t\r\n]{{0,5}}(?:\\?"([\x21\x23-\x5b\x5d-\x7e]{{10,150}})\\?"|\\?'([\x21-\x26\x28-\x5b\x5d-\x7e]{{10,150}})\\?'|(?:\\?['"`])?([0-9a-z_.=+/-]{{10,150}}))"#
        ),
    ];
    pats[rule].clone()
}

static PK_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----").expect("pem end")
});

/// The base64 lines after a BEGIN with no END (a truncated paste), also
/// with JSON-escaped `\n`. Anchored: applied to the text after the header.
static PK_TAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\A(?:(?:\s|\\n)*[A-Za-z0-9+/=]{16,})*").expect("pem tail"));

/// Private key blocks: from BEGIN through the first END after it or, when
/// there is no END, through the base64 lines that follow. One regex with a
/// lazy `.*?END` would rescan to the end of the text for every BEGIN without
/// an END (quadratic); here the next END is searched once and remembered.
fn private_keys(text: &str, out: &mut Vec<(usize, usize, usize)>, stop_at_first: bool) {
    // `Some(None)`: no END at or after the last searched position.
    let mut next_end: Option<Option<(usize, usize)>> = None;
    let mut searched_from = 0;
    let mut pos = 0;
    while let Some(begin) = pattern(PRIVATE_KEY).find_at(text, pos) {
        let after = begin.end();
        let end = match next_end {
            Some(Some((s, _))) if s >= after => next_end.flatten(),
            Some(None) if searched_from <= after => None,
            _ => {
                searched_from = after;
                let found = PK_END.find_at(text, after).map(|m| (m.start(), m.end()));
                next_end = Some(found);
                found
            }
        };
        let stop = match end {
            Some((_, e)) => e,
            None => after + PK_TAIL.find(&text[after..]).map_or(0, |m| m.end()),
        };
        out.push((PRIVATE_KEY, begin.start(), stop));
        if stop_at_first {
            return;
        }
        pos = stop;
    }
}

/// Substrings (lower-case) that mark a generic value as a placeholder or a
/// reference rather than a secret. `changeme_placeholder` has entropy 3.52,
/// so entropy alone does not reject it.
const STOPWORDS: &[&str] = &[
    "example",
    "changeme",
    "change_me",
    "change-me",
    "placeholder",
    "dummy",
    "sample",
    "redacted",
    "xxxxx",
    "*****",
    "your_",
    "your-",
    "yourkey",
    "yoursecret",
    "yourtoken",
    "yourpass",
    "insert",
    "replace",
    "todo",
    "fixme",
    "foobar",
    "lorem",
    "notasecret",
    "not_a_secret",
    "process.env",
    "os.environ",
    "getenv",
];

const MARKER_PREFIX: &str = "[REDACTED:";

fn marker(rule: &str) -> String {
    format!("{MARKER_PREFIX}{rule}]")
}

/// Shannon entropy in bits per byte.
fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for &b in s.as_bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether a value found next to a generic keyword looks like a real secret.
/// `context` is the keyword/identifier text before the operator.
fn generic_value_is_secret(context: &str, value: &str) -> bool {
    if value.len() < 10 || value.len() > 150 || value.contains(MARKER_PREFIX) {
        return false;
    }
    if entropy(value) < 3.5 {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if STOPWORDS.iter().any(|w| lower.contains(w)) {
        return false;
    }
    // Identifiers and dotted names (`config.settings.api_base_url`) are not
    // secrets, except after a password-like keyword, where a letters-only
    // passphrase is still a secret.
    let ctx = context.to_ascii_lowercase();
    let password_like = ["pass", "pwd", "secret"].iter().any(|k| ctx.contains(k));
    let letters_only = value
        .bytes()
        .all(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'.' | b'-'));
    !letters_only || password_like
}

/// Whether the credentials after `Authorization:`, `Bearer` or `-u user:`
/// are a secret rather than a reference (`$TOKEN`, `<token>`), a placeholder
/// or a word ("Bearer authentication"), or a numeric id (`docker -u 1000:1000`).
fn credential_is_secret(value: &str, password: bool) -> bool {
    let lower = value.to_ascii_lowercase();
    if value.contains(MARKER_PREFIX)
        || value.starts_with(['$', '%', '<', '{', '['])
        || value.bytes().all(|b| b.is_ascii_digit())
        || STOPWORDS.iter().any(|w| lower.contains(w))
    {
        return false;
    }
    if password {
        return true;
    }
    // A word is not a token: letters alone count only when long and of both cases.
    let has_digit = value.bytes().any(|b| b.is_ascii_digit());
    let mixed = value.bytes().any(|b| b.is_ascii_uppercase())
        && value.bytes().any(|b| b.is_ascii_lowercase());
    has_digit || (mixed && value.len() >= 16)
}

/// Post-filter for a raw match. Returns the secret's byte range, or `None`
/// when the candidate is rejected.
fn accept(rule: usize, text: &str, caps: &Captures<'_>) -> Option<(usize, usize)> {
    let whole = caps.get(0)?;
    let secret = (1..caps.len()).find_map(|i| caps.get(i)).unwrap_or(whole);
    match rule {
        URL_CREDENTIALS => {
            let pw = secret.as_str();
            // Already redacted: `scheme://user:[REDACTED:x]@host`.
            if pw.starts_with(MARKER_PREFIX) && pw.ends_with(']') && pw.matches('[').count() == 1 {
                return None;
            }
        }
        // Group 3 is a `-u user:pass` password: any word can be one.
        AUTHORIZATION if !credential_is_secret(secret.as_str(), caps.get(3).is_some()) => {
            return None;
        }
        GENERIC => {
            let context = &text[whole.start()..secret.start()];
            if !generic_value_is_secret(context, secret.as_str()) {
                return None;
            }
            // `api.example.com:8443/v1/users` is a host, a port and a path.
            let value = secret.as_str();
            let port_len = value.bytes().take_while(u8::is_ascii_digit).count();
            if text[..secret.start()].ends_with(':')
                && (1..=5).contains(&port_len)
                && matches!(value.as_bytes().get(port_len), None | Some(b'/'))
            {
                return None;
            }
        }
        _ => {}
    }
    let (mut start, mut end) = (secret.start(), secret.end());
    // The `_` an edge took (see `pattern_source`) is the text's, not the token's.
    if secret == whole && rule < AUTHORIZATION {
        if text[start..end].starts_with('_') {
            start += 1;
        }
        if matches!(rule, AWS | GITHUB) && end > start && text[start..end].ends_with('_') {
            end -= 1;
        }
    }
    Some((start, end))
}

/// Which rules can match at all, from the keyword prefilter.
fn candidate_rules(text: &str) -> [bool; 13] {
    let mut on = [false; 13];
    let short_ascii = text.len() <= SHORT_TEXT && text.is_ascii();
    let held = Held::of(text);
    let lowered = held.lowered();
    on[AUTHORIZATION] = match short_ascii {
        true => auth_keyword_in(text, &lowered),
        false => has_auth_keyword(text),
    };
    // A short text (a hook's message, a path, a state file) is searched
    // directly: compiling the keyword regexes costs a millisecond, more
    // than 35 substring searches over 64 KiB, in a process that runs once
    // per hook.
    if text.len() <= SHORT_TEXT {
        for (keyword, rule) in KEYWORDS {
            on[*rule] = on[*rule] || (held.may_hold(keyword) && text.contains(keyword));
        }
        // `(?i)` folds a few non-ASCII letters (the Kelvin sign) into ASCII
        // ones; such text takes the regex.
        on[GENERIC] = if text.is_ascii() {
            generic_operator_follows(text, &lowered)
        } else {
            GENERIC_KEYWORD_RE.is_match(text)
        };
        on[URL_CREDENTIALS] = on[URL_CREDENTIALS] && has_url_userinfo(text);
        return on;
    }
    for (rule, re) in KEYWORD_RES.iter() {
        on[*rule] = re.is_match(text);
    }
    on[URL_CREDENTIALS] = on[URL_CREDENTIALS] && has_url_userinfo(text);
    on[GENERIC] = GENERIC_KEYWORD_RE.is_match(text);
    on
}

/// Whether some `://` in `text` is followed, before white space or a `/`,
/// by a `:` and then an `@`: what the URL-credentials regex needs (its user
/// and password hold neither white space nor `/`). Every state file links
/// ctxkeep's home page, and compiling that regex (its bounded Unicode
/// classes) cost more than the rest of a checkpoint's secret scan.
fn has_url_userinfo(text: &str) -> bool {
    text.match_indices("://").any(|(i, _)| {
        let rest = &text[i + 3..];
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '/')
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        authority
            .find(':')
            .is_some_and(|colon| authority[colon..].contains('@'))
    })
}

/// Up to this many bytes, `candidate_rules` uses plain substring search.
const SHORT_TEXT: usize = 64 * 1024;

/// The start of the generic regex done by hand, for short texts: a keyword,
/// at most 20 identifier bytes, an optional (escaped) quote, at most 5
/// blanks, then `=` or `:`. Without it the regex cannot match, and "1.6 %
/// (3,200 / 200,000 tokens)" need not compile it.
fn generic_operator_follows(text: &str, held: &Held) -> bool {
    let lower = text.to_ascii_lowercase();
    let b = lower.as_bytes();
    GENERIC_KEYWORDS.split('|').any(|k| {
        held.may_hold(k)
            && lower.match_indices(k).any(|(i, _)| {
                let mut j = i + k.len();
                let ident = b[j..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
                    .count();
                if ident > 20 {
                    return false;
                }
                j += ident;
                if b.get(j) == Some(&b'\\') && matches!(b.get(j + 1), Some(b'\'' | b'"')) {
                    j += 2;
                } else if matches!(b.get(j), Some(b'\'' | b'"')) {
                    j += 1;
                }
                let blanks = b[j..]
                    .iter()
                    .take_while(|c| matches!(c, b' ' | b'\t'))
                    .count();
                blanks <= 5 && matches!(b.get(j + blanks), Some(b'=' | b':'))
            })
    })
}

fn has_generic_keyword(text: &str) -> bool {
    if text.len() > SHORT_TEXT || !text.is_ascii() {
        return GENERIC_KEYWORD_RE.is_match(text);
    }
    let lower = text.to_ascii_lowercase();
    let held = Held::of(text).lowered();
    GENERIC_KEYWORDS
        .split('|')
        .any(|k| held.may_hold(k) && lower.contains(k))
}

/// Raw findings of all rules, possibly overlapping, as (rule index, start, end).
/// With `stop_at_first`, returns after the first accepted finding.
fn scan(text: &str, stop_at_first: bool) -> Vec<(usize, usize, usize)> {
    let mut raw = Vec::new();
    if text.len() < 10 {
        return raw;
    }
    let on = candidate_rules(text);
    for (rule, _) in on.iter().enumerate().filter(|(_, on)| **on) {
        if rule == PRIVATE_KEY {
            private_keys(text, &mut raw, stop_at_first);
            if stop_at_first && !raw.is_empty() {
                return raw;
            }
            continue;
        }
        for caps in pattern(rule).captures_iter(text) {
            if let Some((s, e)) = accept(rule, text, &caps) {
                raw.push((rule, s, e));
                if stop_at_first {
                    return raw;
                }
            }
        }
    }
    raw
}

/// Every secret in `text`, sorted by position and non-overlapping.
/// Overlapping matches (an AWS key that is also a generic value, a token that
/// is a URL password) are merged; the most specific rule names the result.
pub fn find(text: &str) -> Vec<Finding> {
    let mut raw = scan(text, false);
    crate::system::sorting::sort_by_key(&mut raw, |&(rule, s, e)| (s, std::cmp::Reverse(e), rule));
    let mut out: Vec<(usize, usize, usize)> = Vec::with_capacity(raw.len());
    for (rule, s, e) in raw {
        match out.last_mut() {
            Some(last) if s < last.2 => {
                last.2 = last.2.max(e);
                last.0 = last.0.min(rule);
            }
            _ => out.push((rule, s, e)),
        }
    }
    out.into_iter()
        .map(|(rule, start, end)| Finding {
            rule: RULES[rule],
            start,
            end,
        })
        .collect()
}

/// Whether `text` holds any secret. Cheaper than `find` on a hit.
pub fn contains_secret(text: &str) -> bool {
    !scan(text, true).is_empty()
}

fn apply(text: &str, findings: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for f in findings {
        out.push_str(&text[pos..f.start]);
        out.push_str(&marker(f.rule));
        pos = f.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// `text` with every secret replaced by `[REDACTED:<rule>]`; borrowed when
/// nothing matched. Redaction is repeated until nothing matches, so the
/// result is a fixed point: `redact(redact(x)) == redact(x)`.
pub fn redact(text: &str) -> Cow<'_, str> {
    let findings = find(text);
    if findings.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = apply(text, &findings);
    // A secret hidden inside a rejected or overlapping candidate can surface
    // once its neighbour is replaced; each round removes secret bytes, and
    // in practice one extra round is the most ever needed.
    for _ in 0..8 {
        let again = find(&out);
        if again.is_empty() {
            break;
        }
        out = apply(&out, &again);
    }
    Cow::Owned(out)
}

/// Redact every string in a JSON document in place (object keys are kept).
/// A string under a secret-looking key (`"password"`, `"api_key"`) is also
/// redacted as a whole when it looks like a secret on its own.
pub fn redact_json(value: &mut serde_json::Value) {
    // One look at the whole document first (a checkpoint record holds
    // hundreds of strings): a string can only hold a secret, or sit under a
    // secret-looking key, if the document has one of the rules' keywords.
    // They have no character JSON escapes, so they show in its text as in
    // the strings. Past 64 KiB the strings are simply scanned one by one.
    if let Ok(text) = serde_json::to_string(value) {
        if text.len() <= SHORT_TEXT && !could_hold_secret(&text) {
            return;
        }
    }
    redact_json_strings(value);
}

/// Whether any rule's keyword, or a generic one, occurs in `text`.
fn could_hold_secret(text: &str) -> bool {
    KEYWORDS.iter().any(|(keyword, _)| text.contains(keyword))
        || has_generic_keyword(text)
        || has_auth_keyword(text)
}

fn redact_json_strings(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => redact_string(s, None),
        Value::Array(items) => items.iter_mut().for_each(redact_json_strings),
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                match v {
                    Value::String(s) => redact_string(s, Some(k)),
                    other => redact_json_strings(other),
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn redact_string(s: &mut String, key: Option<&str>) {
    if let Cow::Owned(new) = redact(s) {
        *s = new;
        return;
    }
    if let Some(key) = key {
        if has_generic_keyword(key)
            && !s.chars().any(char::is_whitespace)
            && generic_value_is_secret(key, s)
        {
            *s = marker(RULES[GENERIC]);
        }
    }
}

#[cfg(test)]
mod tests;

/// Manual throughput check (no timed assertions):
/// `cargo test --release --lib redact::bench -- --ignored --nocapture`
#[cfg(test)]
mod bench;
