//! The CI gate: the checks on a checkpoint, the cold-read probe, and the report.

pub mod checks;
pub mod probe;
pub mod report;
