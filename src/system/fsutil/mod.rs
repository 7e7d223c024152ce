//! File-system primitives, one file per concern; every error names the file. Callers name them
//! through this module (`fsutil::read_text`), not through its files.
//!
//! - `input`: the one way to open input (regular files only, never blocking), reads within a limit
//! - `confinement`: whether a path leads out of the project through a symlink or `..`
//! - `replace`: atomic replacement, new files without clobbering, folders
//! - `lock`: the project's lock
//! - `log_lines`: appending to and reading JSON-lines logs
//! - `stale_temps`: the temp files a killed process left
//! - `state_dir`: the user's state directory

mod confinement;
mod input;
mod lock;
mod log_lines;
mod replace;
mod stale_temps;
mod state_dir;

pub use confinement::{confined, leads_out, resolve_target};
pub use input::{check_input, input_error, open_input, read_text, text_from_bytes};
pub use lock::Lock;
pub use log_lines::{append_line, complete_lines};
pub use replace::{atomic_write, create_new, ensure_dir, replace_cache, test_pause};
pub use stale_temps::{is_temp_name, stale_temp_files, temp_prefixes_for, STALE_TEMP_AGE};
pub use state_dir::user_state_dir;
