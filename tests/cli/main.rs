//! One integration-test binary, a file per subcommand.

mod support;

mod ack;
mod checkpoint;
mod completions;
mod count;
mod faults;
mod gc;
mod hooks;
mod hostile;
mod init;
mod json;
mod lifecycle;
mod limits;
mod log;
mod resume;
mod secrets;
mod status;
mod track;
mod transcripts;
mod verify;
mod walkthrough;
