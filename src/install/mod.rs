//! Setting ctxkeep up, never on the hot path: `init`, `hooks install/doctor` (the settings
//! shape they edit is `agents::settings`), and the demo.

pub mod demo;
pub mod hook_setup;
pub mod init;
pub mod kept;

#[cfg(test)]
mod settings_round_trip;
