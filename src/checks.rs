//! Findings about a checkpoint: stable codes, a severity, the field, the
//! line in project-state.md and a message that says how to fix it.

use serde::Serialize;

use crate::checkpoint::{digest_of, yaml_to_json, Checkpoint};
use crate::state::{StateFile, FORMAT_VERSION};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub code: &'static str,
    pub severity: Severity,
    pub field: Option<String>,
    pub line: Option<usize>,
    pub message: String,
}

impl Finding {
    pub fn new(
        code: &'static str,
        severity: Severity,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            code,
            severity,
            field: field.map(str::to_string),
            line: None,
            message: message.into(),
        }
    }
}

/// Whether the checkpoint in the file is the one ctxkeep sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seal {
    Intact,
    /// Edited since ctxkeep wrote it.
    Altered,
    /// No digest at all (written by hand, or cut).
    Missing,
}

pub fn seal(sf: &StateFile) -> Option<Seal> {
    let c = sf.fm.checkpoint.as_ref()?;
    if c.digest.trim().is_empty() {
        return Some(Seal::Missing);
    }
    let raw = sf.mapping.get("checkpoint")?;
    Some(if digest_of(&yaml_to_json(raw)) == c.digest {
        Seal::Intact
    } else {
        Seal::Altered
    })
}

/// The checks of the file's structure: version, presence of a checkpoint,
/// required fields, id and digest.
pub fn structural(sf: &StateFile, strict: bool) -> Vec<Finding> {
    let mut f = Vec::new();
    match sf.fm.ctxkeep {
        Some(FORMAT_VERSION) => {}
        other => {
            let msg = match other {
                None => "no `ctxkeep:` format key; run `ctxkeep init`".to_string(),
                Some(v) => format!("format version {v} is not supported (this ctxkeep reads {FORMAT_VERSION}); upgrade ctxkeep"),
            };
            let mut x = Finding::new("CK001", Severity::Error, Some("ctxkeep"), msg);
            x.line = sf.key_line("ctxkeep");
            f.push(x);
            return f;
        }
    }
    let Some(c) = &sf.fm.checkpoint else {
        f.push(Finding::new(
            "CK002",
            Severity::Error,
            Some("checkpoint"),
            "no checkpoint recorded yet; write one with `ctxkeep checkpoint --phase ... --task ... --agent ... --next ...`",
        ));
        return f;
    };
    for (code, field, value, flag) in required(c) {
        if value.trim().is_empty() {
            let mut x = Finding::new(
                code,
                Severity::Error,
                Some(field),
                format!("`{field}` is empty; set it with `ctxkeep checkpoint {flag} \"...\"`"),
            );
            x.line = sf
                .nested_key_line("checkpoint", field)
                .or(sf.key_line("checkpoint"));
            f.push(x);
        }
    }
    if crate::checkpoint::id_number(&c.id).is_none() {
        let mut x = Finding::new(
            "CK105",
            Severity::Error,
            Some("id"),
            format!("checkpoint id {:?} is not of the form ckpt-NNNN; run `ctxkeep checkpoint` to write a fresh one", c.id),
        );
        x.line = sf.nested_key_line("checkpoint", "id");
        f.push(x);
    }
    if chrono::DateTime::parse_from_rfc3339(&c.created_at).is_err() {
        let mut x = Finding::new(
            "CK106",
            Severity::Error,
            Some("created_at"),
            format!(
                "created_at {:?} is not an RFC 3339 time; run `ctxkeep checkpoint` to re-seal",
                c.created_at
            ),
        );
        x.line = sf.nested_key_line("checkpoint", "created_at");
        f.push(x);
    }
    match seal(sf) {
        Some(Seal::Altered) => {
            let mut x = Finding::new(
                "CK110",
                if strict { Severity::Error } else { Severity::Warning },
                Some("digest"),
                format!("{} was edited by hand since ctxkeep wrote it (digest mismatch); run `ctxkeep checkpoint` to re-seal", c.id),
            );
            x.line = sf.nested_key_line("checkpoint", "digest");
            f.push(x);
        }
        Some(Seal::Missing) => {
            let mut x = Finding::new(
                "CK111",
                Severity::Error,
                Some("digest"),
                format!("{} has no digest, so damage cannot be detected; run `ctxkeep checkpoint` to seal it", c.id),
            );
            x.line = sf.key_line("checkpoint");
            f.push(x);
        }
        _ => {}
    }
    if strict {
        f.extend(unknown_keys(sf));
    }
    f
}

/// Keys ctxkeep does not read are kept as written; `--strict` points them
/// out, because a typo (`widnow:`) silently falls back to the default.
fn unknown_keys(sf: &StateFile) -> Vec<Finding> {
    sf.mapping
        .keys()
        .map(|k| match k.as_str() {
            Some(s) => s.to_string(),
            None => serde_yaml::to_string(k)
                .unwrap_or_default()
                .trim()
                .to_string(),
        })
        .filter(|k| !crate::state::KNOWN_KEYS.contains(&k.as_str()))
        .map(|k| {
            let mut x = Finding::new(
                "CK120",
                Severity::Warning,
                Some(&k),
                format!(
                    "`{k}` is not a key ctxkeep reads; it is kept as written (check for a typo)"
                ),
            );
            x.line = sf.key_line(&k);
            x
        })
        .collect()
}

fn required(c: &Checkpoint) -> [(&'static str, &'static str, &String, &'static str); 4] {
    [
        ("CK101", "phase", &c.phase, "--phase"),
        ("CK102", "active_task", &c.active_task, "--task"),
        (
            "CK103",
            "controlling_agent",
            &c.controlling_agent,
            "--agent",
        ),
        ("CK104", "next_action", &c.next_action, "--next"),
    ]
}
