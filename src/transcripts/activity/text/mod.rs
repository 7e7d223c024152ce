//! Text rules shared by the readers: what a user line's text is (a request or not) and how much
//! it says about the task, the next step an agent states, cutting, exit codes in tool output,
//! and the file headers of a Codex patch. The words the rules match are data (see [`words`]).

mod calls;
mod next_step;
mod prose;
mod request;
mod weight;
mod words;

pub use calls::{argv_display, exit_code_in, patch_files, string_values};
pub use next_step::{
    stated_at_turn_end, stated_next_step, states_the_step_in_hand, MAX_NEXT_STEP_CHARS,
};
pub use prose::cut;
pub use request::{keep_closing_ask, request_text, user_request};
pub(crate) use weight::refines;
pub use weight::{asks_no_work, asks_open_question, weight_after, Weight};
