#[test]
fn url_userinfo_prefilter_passes_every_url_with_credentials() {
    use super::{has_url_userinfo, pattern, URL_CREDENTIALS};
    for text in [
        "postgres://admin:hunter22@db:5432/app",
        "redis://:s3cret@cache",
        "see https://x.org then ftp://u:pw1@host",
        "https://github.com/a/b and smtp://me:pa55@mail",
    ] {
        assert!(pattern(URL_CREDENTIALS).is_match(text), "{text}");
        assert!(has_url_userinfo(text), "{text}");
    }
    for text in [
        "kept by [ctxkeep](https://github.com/ctxkeep/ctxkeep)",
        "https://host/path:with@colon",
        "mail me@x.org at https://x.org:8080",
    ] {
        assert!(!pattern(URL_CREDENTIALS).is_match(text), "{text}");
        assert!(!has_url_userinfo(text), "{text}");
    }
}

use super::*;
use proptest::prelude::*;

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Deterministic pseudo-random text, so fake keys are real-shaped without
/// any key appearing literally in this file.
fn fake(n: usize, alphabet: &[u8], seed: u64) -> String {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            alphabet[((x >> 33) % alphabet.len() as u64) as usize] as char
        })
        .collect()
}

fn pem() -> String {
    let body: Vec<String> = (0..4)
        .map(|i| {
            fake(
                64,
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                i,
            )
        })
        .collect();
    format!(
        "-----BEGIN RSA {}-----\n{}\n-----END RSA {}-----",
        "PRIVATE KEY",
        body.join("\n"),
        "PRIVATE KEY"
    )
}

/// (rule, secret) pairs: each secret must be found, exactly, by that rule.
fn corpus() -> Vec<(&'static str, String)> {
    vec![
        ("aws", format!("AKIA{}", "IOSFODNN7EXAMPLE")),
        (
            "aws",
            format!("ASIA{}", fake(16, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 1)),
        ),
        ("github", format!("ghp_{}", fake(36, ALNUM, 2))),
        ("github", format!("ghs_{}", fake(36, ALNUM, 3))),
        (
            "github",
            format!("github_pat_{}_{}", fake(22, ALNUM, 4), fake(59, ALNUM, 5)),
        ),
        ("gitlab", format!("glpat-{}", fake(20, ALNUM, 6))),
        (
            "anthropic",
            format!("sk-ant-api03-{}AA", fake(93, ALNUM, 7)),
        ),
        (
            "anthropic",
            format!("sk-ant-admin01-{}", fake(60, ALNUM, 8)),
        ),
        ("openai", format!("sk-proj-{}", fake(74, ALNUM, 9))),
        (
            "openai",
            format!(
                "sk-{}{}FJ{}",
                fake(20, ALNUM, 10),
                "T3Blbk",
                fake(20, ALNUM, 11)
            ),
        ),
        (
            "slack",
            format!(
                "xoxb-{}-{}-{}",
                fake(11, b"0123456789", 12),
                fake(13, b"0123456789", 13),
                fake(24, ALNUM, 14)
            ),
        ),
        ("google", format!("AIza{}", fake(35, ALNUM, 15))),
        ("stripe", format!("sk_live_{}", fake(24, ALNUM, 16))),
        ("stripe", format!("rk_test_{}", fake(30, ALNUM, 17))),
        (
            "jwt",
            format!(
                "eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}",
                fake(30, ALNUM, 18),
                fake(43, ALNUM, 19)
            ),
        ),
        ("private-key", pem()),
    ]
}

fn only(text: &str) -> Finding {
    let f = find(text);
    assert_eq!(f.len(), 1, "expected one finding in {text:?}, got {f:?}");
    f[0]
}

#[test]
fn keys_joined_by_underscores_in_a_file_name_are_caught() {
    for (rule, key) in corpus() {
        if rule == "private-key" {
            continue;
        }
        for text in [
            format!("notes_{key}.txt"),
            format!("bd-a1b2_{key}_old.md"),
            format!("src/{key}_backup"),
        ] {
            let f = find(&text);
            let at = text.find(&key).unwrap();
            assert!(
                f.iter()
                    .any(|f| f.start == at && f.end >= at + key.len() && f.rule == rule),
                "{rule}: {text:?} gave {f:?}"
            );
            let shown = redact(&text);
            assert!(!shown.contains(&key), "{shown}");
            assert!(
                shown.starts_with(&text[..at]),
                "the `_` before stays: {shown}"
            );
        }
    }
}

#[test]
fn provider_keys_are_caught_in_every_context() {
    for (rule, key) in corpus() {
        let contexts = [
            format!("Deploy with {key} then restart."),
            format!("api_key: {key}\nother: 1\n"),
            format!("{{\"token\": \"{key}\", \"n\": 1}}"),
            format!("{{\"note\": \"{key}\"}}"),
            format!("curl 'https://api.example.com/v1?x=1&auth={key}&y=2'"),
            key.clone(),
            format!("{key} is the key"),
            format!("the key is {key}"),
        ];
        for text in &contexts {
            let f = only(text);
            assert_eq!(f.rule, rule, "{text:?}");
            assert_eq!(&text[f.start..f.end], key, "{text:?}");
            let red = redact(text);
            assert!(!red.contains(&key[key.len() - 8..]), "{red}");
            assert!(red.contains(&format!("[REDACTED:{rule}]")), "{red}");
            assert!(contains_secret(text));
        }
    }
}

#[test]
fn authorization_headers_bearer_tokens_and_curl_users_are_redacted() {
    let tok = fake(40, ALNUM, 40);
    let b64 = format!("{}==", fake(22, ALNUM, 41));
    let pw = fake(12, ALNUM, 42);
    let cases = [
        (
            format!(r#"curl -H "Authorization: Bearer {tok}" https://api.example.com/v1"#),
            r#"curl -H "Authorization: Bearer [REDACTED:authorization]" https://api.example.com/v1"#.to_string(),
        ),
        (
            format!("curl -H 'authorization: Basic {b64}' x"),
            "curl -H 'authorization: Basic [REDACTED:authorization]' x".to_string(),
        ),
        (
            format!("Proxy-Authorization: Negotiate {tok}"),
            "Proxy-Authorization: Negotiate [REDACTED:authorization]".to_string(),
        ),
        (
            format!(r#"{{"Authorization": "Bearer {tok}"}}"#),
            r#"{"Authorization": "Bearer [REDACTED:authorization]"}"#.to_string(),
        ),
        (
            format!(r#"{{\"authorization\":\"Token {tok}\"}}"#),
            r#"{\"authorization\":\"Token [REDACTED:authorization]\"}"#.to_string(),
        ),
        (
            format!("http --auth-type=bearer GET x 'bearer {tok}'"),
            "http --auth-type=bearer GET x 'bearer [REDACTED:authorization]'".to_string(),
        ),
        (
            format!("curl -u deploy:{pw} https://x"),
            "curl -u deploy:[REDACTED:authorization] https://x".to_string(),
        ),
        (
            format!("curl --user 'deploy:{pw}' https://x"),
            "curl --user 'deploy:[REDACTED:authorization]' https://x".to_string(),
        ),
        (
            "curl --user=admin:hunter https://x".to_string(),
            "curl --user=admin:[REDACTED:authorization] https://x".to_string(),
        ),
        (
            format!("curl -x proxy:3128 -U me:{pw} https://x"),
            "curl -x proxy:3128 -U me:[REDACTED:authorization] https://x".to_string(),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(redact(&text), want, "{text}");
        assert!(contains_secret(&text), "{text}");
    }
    // An API key header is caught by its value, as any key=value.
    let key = fake(32, ALNUM, 43);
    let header = format!("curl -H 'X-Api-Key: {key}' https://x");
    assert!(!redact(&header).contains(&key), "{header}");
    let mut v = serde_json::json!({"command": format!("curl -H 'Authorization: Bearer {tok}'")});
    redact_json(&mut v);
    assert!(!v.to_string().contains(&tok), "{v}");
}

#[test]
fn authorization_references_and_words_pass_untouched() {
    for text in [
        r#"curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com"#,
        r#"curl -H "Authorization: Bearer ${TOKEN}" x"#,
        "Authorization: Bearer <token>",
        "The API uses Bearer authentication; send an Authorization header.",
        "git push -u origin main",
        "docker run -u 1000:1000 image",
        "curl -u \"$USER:$PASS\" https://x",
        "curl -H 'Authorization: Bearer [REDACTED:authorization]'",
        "sort -u names.txt > out.txt",
    ] {
        assert_eq!(find(text), vec![], "{text}");
    }
}

#[test]
fn slack_webhook_keeps_the_host() {
    let path = format!(
        "T{}/B{}/{}",
        fake(8, ALNUM, 20),
        fake(8, ALNUM, 21),
        fake(24, ALNUM, 22)
    );
    let text = format!("notify https://hooks.slack.com/services/{path} on failure");
    let f = only(&text);
    assert_eq!((f.rule, &text[f.start..f.end]), ("slack", path.as_str()));
    assert_eq!(
        redact(&text),
        "notify https://hooks.slack.com/services/[REDACTED:slack] on failure"
    );
}

#[test]
fn url_credentials_redact_only_the_password() {
    let pw = fake(16, ALNUM, 23);
    let text = format!("remote: postgres://app:{pw}@db.internal:5432/app?sslmode=require");
    assert_eq!(
        redact(&text),
        "remote: postgres://app:[REDACTED:url-credentials]@db.internal:5432/app?sslmode=require"
    );
    let redis = format!("redis://:{pw}@cache:6379");
    assert_eq!(
        redact(&redis),
        "redis://:[REDACTED:url-credentials]@cache:6379"
    );
    // A token used as the password is named by its provider.
    let gh = format!("ghs_{}", fake(36, ALNUM, 24));
    let remote = format!("origin\thttps://x-access-token:{gh}@github.com/o/r.git (fetch)");
    assert_eq!(
        redact(&remote),
        "origin\thttps://x-access-token:[REDACTED:github]@github.com/o/r.git (fetch)"
    );
    // Case 37: a remote URL, a commit message, prose.
    for text in [
        format!("git push https://oauth2:{pw}@gitlab.example.com/g/p.git"),
        format!("commit 1a2b3c4\n\n    fix: rotate creds (old one was {gh})"),
    ] {
        assert!(contains_secret(&text), "{text}");
    }
}

#[test]
fn generic_redacts_only_the_value() {
    let v = fake(32, ALNUM, 25);
    let cases = [
        (
            format!("api_key: {v}"),
            "api_key: [REDACTED:generic]".to_string(),
        ),
        (
            format!("export DB_PASSWORD={v}"),
            "export DB_PASSWORD=[REDACTED:generic]".to_string(),
        ),
        (
            format!(r#"{{"client_secret": "{v}"}}"#),
            r#"{"client_secret": "[REDACTED:generic]"}"#.to_string(),
        ),
        (
            format!("auth_token := \"{v}\""),
            "auth_token := \"[REDACTED:generic]\"".to_string(),
        ),
        (
            format!("'access_key' => '{v}',"),
            "'access_key' => '[REDACTED:generic]',".to_string(),
        ),
        (
            format!(r#"{{\"token\": \"{v}\"}}"#),
            r#"{\"token\": \"[REDACTED:generic]\"}"#.to_string(),
        ),
        (
            format!("https://example.com/cb?code=1&api_key={v}&x=1"),
            "https://example.com/cb?code=1&api_key=[REDACTED:generic]&x=1".to_string(),
        ),
        (
            format!("password: \"p@ss-{v}!\""),
            "password: \"[REDACTED:generic]\"".to_string(),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(redact(&text), want, "{text}");
        assert_eq!(only(&text).rule, "generic");
    }
}

#[test]
fn ordinary_text_passes_untouched() {
    let b64 = "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==";
    let clean = [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "HEAD is now at 3f78685 fix the splitter",
        "id: 123e4567-e89b-12d3-a456-426614174000",
        b64,
        "the password field is validated before submit",
        "rotate the API key monthly; tokens expire after 90 days",
        "Access is granted per team. Authentication uses OAuth.",
        "pip install scikit-learn  # imported as sklearn, not sk-learn",
        "edit src/redact.rs and /home/dev/.config/ctxkeep/config.toml",
        "version: 1.10.0-rc.1+build.5, released 2024-05-01T12:30:00Z",
        "api_key: changeme_placeholder",
        "password: your_password_here",
        "token: ${GITHUB_TOKEN}",
        "api_key: process.env.OPENAI_API_KEY",
        "key: value",
        "auth_url: https://auth.example.com:8443/oauth/authorize",
        "API base: api.internal.example.com:8443/v1/users",
        "primary_key: user_account_settings.identifier",
        "use crate::auth::token::Verifier;",
        "see https://docs.rs/regex/latest/regex/#syntax and http://localhost:3000/login",
        "ssh://git@github.com:22/org/repo.git",
        "[REDACTED:generic] [REDACTED:url-credentials] [REDACTED:private-key]",
        "api_key: [REDACTED:generic]",
        "https://user:[REDACTED:url-credentials]@host/x",
        "The file starts with -----BEGIN and ends with -----END.",
    ];
    for text in clean {
        assert_eq!(find(text), vec![], "{text}");
        assert!(matches!(redact(text), Cow::Borrowed(_)), "{text}");
        assert!(!contains_secret(text), "{text}");
    }
}

#[test]
fn markdown_document_passes_untouched() {
    let doc = "---\nversion: 1\nstatus: in-progress\nbranch: wip-redact\nhead: 8567dcd\n---\n\
# Project state\n\n## Goal\nAdd secret redaction so the state file never leaks a token, key or password.\n\n\
## Done\n- [x] Rules table from RELIABILITY.md section 4 (AWS, GitHub, Slack, JWT, ...)\n\
- [x] `cargo test --lib redact` passes (commit 3f786850e387550fdab836ed7e6dc881de23001b)\n\n\
## Next\n1. Wire `redact()` into the writer; keys: `api_key`, `token` are redacted by value.\n\
2. Document the `[REDACTED:<rule>]` marker.\n\n```rust\nlet key = cache.get(&path)?;\nlet token_count = 42;\n```\n\n\
| Key | Meaning |\n|---|---|\n| `auth` | how the CLI authenticates |\n\n\
See [the docs](https://github.com/example/ctxkeep/blob/main/README.md#secrets).\n";
    assert_eq!(find(doc), vec![]);
    assert!(matches!(redact(doc), Cow::Borrowed(_)));
}

#[test]
fn private_key_without_end_is_still_redacted() {
    let text = format!("{}\n\nnext line", &pem()[..150]);
    let red = redact(&text);
    assert!(red.starts_with("[REDACTED:private-key]"), "{red}");
    assert!(red.ends_with("next line"), "{red}");
}

#[test]
fn findings_are_sorted_and_disjoint() {
    let c = corpus();
    let text = c
        .iter()
        .map(|(_, k)| format!("k{}: {k}", 0))
        .collect::<Vec<_>>()
        .join("\n");
    let f = find(&text);
    assert_eq!(f.len(), c.len());
    for (w, (rule, _)) in f.iter().zip(&c) {
        assert_eq!(w.rule, *rule);
    }
    assert!(f.windows(2).all(|w| w[0].end <= w[1].start));
}

#[test]
fn json_strings_are_redacted_in_place() {
    let gh = format!("ghp_{}", fake(36, ALNUM, 26));
    let pw = format!("Zq!{}", fake(14, ALNUM, 27));
    let mut v = serde_json::json!({
        "cmd": format!("git push https://u:{gh}@github.com/o/r"),
        "password": pw,
        "nested": [{"note": format!("token {gh}")}, 1, null, true],
        format!("key-{gh}"): "kept",
        "access": "public-read",
    });
    redact_json(&mut v);
    assert_eq!(
        v["cmd"],
        "git push https://u:[REDACTED:github]@github.com/o/r"
    );
    assert_eq!(v["password"], "[REDACTED:generic]");
    assert_eq!(v["nested"][0]["note"], "token [REDACTED:github]");
    assert_eq!(v[format!("key-{gh}")], "kept");
    assert_eq!(v["access"], "public-read");
}

#[test]
fn redaction_is_idempotent_on_the_corpus() {
    for (_, key) in corpus() {
        for text in [
            format!("token={key}"),
            format!("x://u:{key}@h"),
            key.clone(),
        ] {
            let once = redact(&text).into_owned();
            assert_eq!(redact(&once), once);
            assert!(find(&once).is_empty(), "{once}");
        }
    }
}

#[test]
fn adversarial_inputs_complete() {
    let n = 200_000;
    for unit in [
        "key=",
        "a://a:",
        "-----BEGIN PRIVATE KEY-----",
        "eyJ",
        "AKIA",
        "sk-",
        "token: \"",
        "ghp_",
        "Bearer ",
        "-u a:",
        "Authorization: Basic ",
    ] {
        let text = unit.repeat(n / unit.len());
        let _ = redact(&text);
    }
}

/// Text built from fragments that tend to form secrets and near-misses.
fn fragments() -> impl Strategy<Value = String> {
    let parts = prop::sample::select(vec![
        "key",
        "token",
        "pass",
        "=",
        ":",
        " ",
        "\"",
        "'",
        "@",
        "://",
        "/",
        "\n",
        "[",
        "]",
        "REDACTED",
        "ghp_",
        "AKIA",
        "sk-",
        "eyJ",
        ".",
        "-",
        "_",
        "xoxb-",
        "-----BEGIN PRIVATE KEY-----",
        "Zq8Xv3Lm9Tr2Wp5K",
        "0123456789abcdef",
        "ABCDEFGHIJKLMNOP",
        "é",
    ]);
    prop::collection::vec(parts, 0..40).prop_map(|v| v.concat())
}

proptest! {
    /// The byte-set prefilter of the keyword searches skips only keywords the text lacks.
    #[test]
    fn the_keyword_prefilter_skips_only_keywords_the_text_lacks(
        text in proptest::collection::vec(fragments(), 0..6).prop_map(|f| f.concat())
    ) {
        let lower = text.to_ascii_lowercase();
        let auth = AUTH_KEYWORDS.iter().copied();
        let keywords = KEYWORDS.iter().map(|(k, _)| *k);
        let upper = text.to_ascii_uppercase();
        for k in keywords.chain(GENERIC_KEYWORDS.split('|')).chain(auth) {
            for t in [text.as_str(), lower.as_str(), upper.as_str()] {
                prop_assert!(!t.contains(k) || Held::of(t).may_hold(k), "{k} in {t}");
                // The set of a text lowered, made from the text's own.
                let lowered = t.to_ascii_lowercase();
                prop_assert!(!lowered.contains(k) || Held::of(t).lowered().may_hold(k), "{k} in {t}");
            }
        }
    }

    #[test]
    fn arbitrary_strings_never_panic(s in "\\PC*") {
        let f = find(&s);
        prop_assert!(f.windows(2).all(|w| w[0].end <= w[1].start));
        for x in &f {
            prop_assert!(s.is_char_boundary(x.start) && s.is_char_boundary(x.end));
        }
        let mut v = serde_json::json!({"k": s.clone(), "token": [s.clone()]});
        redact_json(&mut v);
    }

    /// The whole-document prefilter never skips what the string-by-string
    /// scan would redact.
    #[test]
    fn json_prefilter_skips_only_clean_documents(
        items in proptest::collection::vec((fragments(), fragments()), 0..6)
    ) {
        let doc = serde_json::Value::Object(
            items
                .into_iter()
                .map(|(k, v)| (k, serde_json::json!([v.clone(), {"note": v}])))
                .collect(),
        );
        let mut fast = doc.clone();
        redact_json(&mut fast);
        let mut each = doc.clone();
        redact_json_strings(&mut each);
        prop_assert_eq!(fast, each);
    }

    #[test]
    fn redaction_is_idempotent(s in fragments()) {
        let once = redact(&s).into_owned();
        prop_assert_eq!(redact(&once).into_owned(), once.clone());
        prop_assert!(find(&once).is_empty());
        prop_assert_eq!(contains_secret(&s), !find(&s).is_empty());
    }

    #[test]
    fn the_short_prefilter_never_misses_a_generic_match(s in fragments(), t in "[ -~]{0,60}") {
        for text in [s.clone(), t.clone(), format!("{t}{s}"), s.to_uppercase()] {
            if text.is_ascii() && pattern(GENERIC).is_match(&text) {
                prop_assert!(generic_operator_follows(&text, &Held::of(&text).lowered()), "{text:?}");
            }
        }
    }

    #[test]
    fn nothing_found_means_unchanged(s in "(\\PC|key=|token: |://|@)*") {
        if find(&s).is_empty() {
            prop_assert!(matches!(redact(&s), Cow::Borrowed(_)));
            prop_assert_eq!(redact(&s), s.as_str());
        }
    }
}
