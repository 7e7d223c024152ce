//! One integration-test binary, a file per subcommand.

mod support;

mod ack;
mod architecture;
mod checkpoint;
mod completions;
mod count;
mod demo;
mod faults;
mod gc;
mod hooks;
mod hostile;
mod init;
mod json;
mod lifecycle;
mod limits;
mod log;
mod loops;
mod mcp;
mod merge;
mod plugin;
mod precommit;
mod qwen;
mod readback;
mod relay;
mod remaining;
mod replay;
mod resume;
mod secrets;
mod sessions;
mod status;
mod summaries;
mod track;
mod transcripts;
mod verify;
mod walkthrough;
