//! Context usage from agent transcripts.

pub mod tail;
