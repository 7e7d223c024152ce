//! Setting ctxkeep up, never on the hot path: `init`, the agents' hook settings and their
//! editing, `hooks install/doctor`, and the demo.

pub mod demo;
pub mod hook_setup;
pub mod init;
pub mod kept;
