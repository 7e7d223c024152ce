//! One integration-test binary, a file per subcommand.

mod support;

mod checkpoint;
mod faults;
mod hostile;
mod init;
mod json;
mod resume;
mod verify;
mod walkthrough;
