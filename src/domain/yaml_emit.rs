//! A small YAML emitter for ctxkeep's own keys: block style, strings quoted
//! whenever a YAML 1.1 reader could misread them. Emits from JSON values, so
//! it needs no YAML library.

/// Renders `key: value` as block YAML. Strings are quoted unless they are
/// plainly safe, so no YAML 1.1 reader turns `no` into false or `1.10` into 1.1.
pub fn emit_key(key: &str, value: &serde_json::Value, nl: &str) -> String {
    let mut out = String::new();
    out.push_str(key);
    out.push(':');
    emit_value(&mut out, value, 0);
    out.push('\n');
    normalize_newlines(&out, nl)
}

fn emit_value(out: &mut String, v: &serde_json::Value, indent: usize) {
    use serde_json::Value as J;
    match v {
        J::Object(m) if m.is_empty() => out.push_str(" {}"),
        J::Array(a) if a.is_empty() => out.push_str(" []"),
        J::Object(m) => {
            for (k, val) in m {
                out.push('\n');
                out.push_str(&" ".repeat(indent + 2));
                out.push_str(k);
                out.push(':');
                emit_value(out, val, indent + 2);
            }
        }
        J::Array(a) => {
            for item in a {
                out.push('\n');
                out.push_str(&" ".repeat(indent + 2));
                out.push('-');
                match item {
                    J::Object(m) if !m.is_empty() => {
                        if let Some(flow) = flow_mapping(m) {
                            out.push(' ');
                            out.push_str(&flow);
                        } else {
                            // First key on the dash line, the rest aligned under it.
                            let mut first = true;
                            for (k, val) in m {
                                if first {
                                    out.push(' ');
                                    first = false;
                                } else {
                                    out.push('\n');
                                    out.push_str(&" ".repeat(indent + 4));
                                }
                                out.push_str(k);
                                out.push(':');
                                emit_value(out, val, indent + 4);
                            }
                        }
                    }
                    _ => emit_value(out, item, indent + 2),
                }
            }
        }
        scalar => {
            out.push(' ');
            out.push_str(&scalar_text(scalar));
        }
    }
}

/// Small all-scalar mappings (stages) read best on one line.
fn flow_mapping(m: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    if m.len() > 3 || m.values().any(|v| v.is_object() || v.is_array()) {
        return None;
    }
    let parts: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}: {}", scalar_text(v)))
        .collect();
    let s = format!("{{{}}}", parts.join(", "));
    (s.len() <= 60).then_some(s)
}

fn scalar_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => quote_string(s),
        other => other.to_string(),
    }
}

pub fn quote_string(s: &str) -> String {
    let plain = s.len() <= 120
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        );
    if plain {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            // Control, C1, line/paragraph separators and BOM: YAML would fold
            // or refuse them raw.
            c if (c as u32) < 0x20
                || (0x7f..=0x9f).contains(&(c as u32))
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') =>
            {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Converts `\n` line ends to the file's own (`\r\n` in a CRLF file).
pub fn normalize_newlines(s: &str, nl: &str) -> String {
    let lf = s.replace("\r\n", "\n");
    if nl == "\n" {
        lf
    } else {
        lf.replace('\n', nl)
    }
}
