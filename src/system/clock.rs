//! The current time. `CTXKEEP_NOW` (RFC 3339) pins it, so tests and
//! reproducible runs get fixed timestamps.

use chrono::{DateTime, SecondsFormat, Utc};

pub fn now() -> DateTime<Utc> {
    std::env::var("CTXKEEP_NOW")
        .ok()
        .and_then(|s| DateTime::parse_from_rfc3339(&s).ok())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(Utc::now)
}

pub fn now_rfc3339() -> String {
    now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// "3 min", "2 h", "5 d": how long ago `rfc3339` was.
pub fn age(rfc3339: &str) -> Option<String> {
    let then = DateTime::parse_from_rfc3339(rfc3339)
        .ok()?
        .with_timezone(&Utc);
    let secs = (now() - then).num_seconds().max(0);
    Some(match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86400 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86400),
    })
}
