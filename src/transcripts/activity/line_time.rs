//! When a recorded fact was said: the time of the transcript line it came from, kept as the
//! record keeps times (RFC 3339, seconds, UTC), and how two such times compare.

use chrono::{DateTime, SecondsFormat, Utc};

/// A line's time as an agent wrote it (RFC 3339 with any offset and fraction), as the record
/// keeps it; None when it is not one.
pub fn stored(raw: &str) -> Option<String> {
    let t = DateTime::parse_from_rfc3339(raw).ok()?;
    Some(
        t.with_timezone(&Utc)
            .to_rfc3339_opts(SecondsFormat::Secs, true),
    )
}

/// A line's time given in milliseconds since the epoch (OpenCode), as the record keeps it.
pub fn from_millis(ms: i64) -> Option<String> {
    DateTime::<Utc>::from_timestamp_millis(ms).map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
}

/// Whether `a` was said after `b`; false when either time is unknown (the order read decides).
pub fn later(a: Option<&str>, b: Option<&str>) -> bool {
    match (a.and_then(parse), b.and_then(parse)) {
        (Some(a), Some(b)) => a > b,
        _ => false,
    }
}

/// How long before `than` the time `at` was, in whole seconds; None when either is unknown.
pub fn seconds_before(at: &str, than: &str) -> Option<i64> {
    Some((parse(than)? - parse(at)?).num_seconds())
}

/// A fact said this long or more before the record that holds it was read (30 min) shows its
/// age where it is given back: long enough for the work to have moved on, while the steps and
/// checks of the last half hour are shown without one.
pub const SHOW_AGE_AFTER_SECS: i64 = 30 * 60;

/// Whether a fact said at `at` is old by `than` (see [`SHOW_AGE_AFTER_SECS`]).
pub fn old_by(at: &str, than: &str) -> bool {
    seconds_before(at, than).is_some_and(|s| s >= SHOW_AGE_AFTER_SECS)
}

fn parse(t: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_kept_in_utc_seconds_and_compared_only_when_both_are_known() {
        assert_eq!(
            stored("2026-02-11T21:10:52.295Z").as_deref(),
            Some("2026-02-11T21:10:52Z")
        );
        assert_eq!(
            stored("2026-02-11T23:10:52+02:00").as_deref(),
            Some("2026-02-11T21:10:52Z")
        );
        assert_eq!(stored("yesterday"), None);
        assert_eq!(
            from_millis(1_770_844_252_295).as_deref(),
            Some("2026-02-11T21:10:52Z")
        );
        assert!(later(
            Some("2026-02-11T21:10:53Z"),
            Some("2026-02-11T21:10:52Z")
        ));
        assert!(!later(
            Some("2026-02-11T21:10:52Z"),
            Some("2026-02-11T21:10:52Z")
        ));
        assert!(!later(Some("2026-02-11T21:10:53Z"), None));
        assert_eq!(
            seconds_before("2026-02-11T20:30:00Z", "2026-02-11T21:10:00Z"),
            Some(2400)
        );
        assert!(old_by("2026-11-23T09:30:00Z", "2026-11-23T10:00:00Z"));
        assert!(!old_by("2026-11-23T09:31:00Z", "2026-11-23T10:00:00Z"));
        assert!(!old_by("2026-11-23T09:00:00Z", "soon"));
    }
}
