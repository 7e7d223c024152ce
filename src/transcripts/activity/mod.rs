//! What an agent session did, read from its transcript: the user's last request, the
//! agent's task list, the next step it stated, the files it changed and the last shell commands
//! with their outcome, plus the counts loop detection needs.
//!
//! At most the last [`TAIL_BYTES`] of the transcript are read (through [`crate::transcripts::usage::tail`]):
//! first the last [`FIRST_WINDOW`], further back only while no request is found (a nudge such as
//! "continue" is not one, see [`text::Weight::Nudge`]), so the cost
//! stays flat however long the session runs. Lines are cheaply pre-filtered as text
//! before any JSON parsing: most of a transcript is tool output and model text that cannot
//! change the answer. Main session only: sidechains, subagent transcripts and `progress` lines
//! are ignored.

pub mod attached;
pub mod beads;
mod decode;
pub mod delegated;
pub mod error_sites;
pub mod event_read;
pub mod failure;
pub mod index;
pub mod left_open;
pub mod line_time;
pub mod loops;
pub mod monitor;
mod observed;
mod paths;
pub mod plan_mode;
mod recorder;
mod runs;
pub mod shell;
pub(crate) mod text;
mod window;

pub use loops::{LoopHit, LoopLimits};

pub(crate) use decode::{parts_text, plan_items};
pub use observed::{
    loops_found, CommandRun, Observed, PlanItem, PlanStatus, SummaryRemains, MAX_COMMANDS,
    MAX_COMMAND_CHARS, MAX_FILES, MAX_FOLLOW_UPS, MAX_FOLLOW_UP_CHARS, MAX_REQUEST_CHARS,
    MAX_WINDOW_READS, MAX_WORKED_FROM,
};
pub(crate) use paths::Root;
pub use recorder::Recorder;
pub(crate) use recorder::{collapse_repeats, completed_in, keep_follow_up};
use window::last_line_end;
pub(crate) use window::{first_line_object, window_lines};
pub use window::{observe, observe_within, Reader, FIRST_WINDOW, TAIL_BYTES};
