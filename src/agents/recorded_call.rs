//! A tool call as Gemini CLI, Qwen Code (its fork) and Copilot CLI record it in their
//! transcripts: a `name`, an id, and an object of string arguments, each agent under its own
//! keys. Their observers map the call by its name; this reads it once for them.

use serde_json::{Map, Value};

use crate::transcripts::activity::Recorder;

pub(crate) struct RecordedCall<'a> {
    pub name: &'a str,
    pub id: &'a str,
    pub args: &'a Map<String, Value>,
}

/// The arguments of a call that has none.
static NO_ARGS: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

impl<'a> RecordedCall<'a> {
    /// The call in `call`, its id under `id_key` and its arguments under `args_key` (none when
    /// missing); None without a name or an id.
    pub fn of(call: &'a Value, id_key: &str, args_key: &str) -> Option<RecordedCall<'a>> {
        let s = |k: &str| call.get(k).and_then(Value::as_str);
        Some(RecordedCall {
            name: s("name")?,
            id: s(id_key)?,
            args: call
                .get(args_key)
                .and_then(Value::as_object)
                .unwrap_or(&NO_ARGS),
        })
    }

    /// The first of the string arguments `keys` the call has.
    pub fn arg(&self, keys: &[&str]) -> Option<&'a str> {
        keys.iter()
            .find_map(|k| self.args.get(*k).and_then(Value::as_str))
    }

    /// The file the first of `keys` names, as the record shows it (relative to the project).
    pub fn path(&self, keys: &[&str], rec: &Recorder) -> Option<String> {
        rec.root.display(self.arg(keys)?, None)
    }
}
