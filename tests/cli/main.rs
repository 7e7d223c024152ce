//! One integration-test binary, a file per subcommand.

mod support;

mod checkpoint;
mod completions;
mod count;
mod faults;
mod hostile;
mod init;
mod json;
mod resume;
mod secrets;
mod status;
mod track;
mod transcripts;
mod verify;
mod walkthrough;
