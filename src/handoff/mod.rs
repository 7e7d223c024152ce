//! Handing work to a fresh session: the resume prompt, the handoff ledger (`chain.jsonl`),
//! acknowledgements, and keeping `.ctxkeep/` bounded (`retention`, the ledger among it).

pub mod ack;
pub mod ledger;
pub mod prompt;
pub mod resume;
pub mod retention;
