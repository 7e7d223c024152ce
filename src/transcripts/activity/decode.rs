//! Values the agents' readers decode from their JSON lines: a tool result's text, a task list.

use super::PlanStatus;

/// A tool result's text: a string, or the `text` of its parts joined by lines.
pub(crate) fn parts_text(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A whole task list (`TodoWrite`, `update_plan`, `write_todos`): each item's
/// text under the first of `text_keys` it has, and its `status`.
pub(crate) fn plan_items(
    list: &[serde_json::Value],
    text_keys: &[&str],
) -> Vec<(String, Option<PlanStatus>)> {
    use serde_json::Value;
    list.iter()
        .filter_map(|t| {
            let text = text_keys.iter().find_map(|k| t.get(*k))?.as_str()?;
            let status = t.get("status").and_then(Value::as_str).unwrap_or("");
            Some((text.to_string(), PlanStatus::parse(status)))
        })
        .collect()
}
