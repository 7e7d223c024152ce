//! Settings resolved from the front matter, the model table and defaults.

use std::str::FromStr;

use crate::context::stages::Stage;
use crate::context::tokens::Encoding;
use crate::domain::state::{FrontMatter, LoopSetting};

pub const DEFAULT_WINDOW: u64 = 200_000;
pub const DEFAULT_RESUME_TOKENS: usize = 2_000;
pub const DEFAULT_RETENTION: usize = 50;
pub const DEFAULT_EVENTS_MAX_BYTES: u64 = 1024 * 1024;
pub const DEFAULT_SESSIONS_KEPT: usize = 500;

/// The project's settings with every default applied.
#[derive(Debug, Clone)]
pub struct Config {
    pub model: Option<String>,
    pub window: u64,
    pub encoding: Encoding,
    pub stages: Vec<Stage>,
    pub resume_max_tokens: usize,
    pub retention: usize,
    pub retention_days: Option<u64>,
    /// Size past which the event log is rotated.
    pub events_max_bytes: u64,
    /// Session records kept in the chain.
    pub sessions_kept: usize,
    /// `resume` exits 1 past this many handoffs without progress.
    pub max_handoffs_without_progress: Option<u32>,
    pub templates: Option<String>,
    /// Loop detection's limits; None when `loops: false`.
    pub loop_limits: Option<crate::transcripts::activity::LoopLimits>,
    /// The front matter's `compaction:` limits (each agent's own
    /// configuration decides where it says nothing).
    pub compaction: crate::context::compaction::CompactionConfig,
    /// Stage percents are of the usable limit (default) or of the window.
    pub stages_against: crate::context::compaction::StagesAgainst,
    /// Automatic checkpoints store the uncommitted work in git (`snapshots: false` turns it off).
    pub snapshots: bool,
    /// When the model is asked for a checkpoint between stages; None when `checkpoint_requests: false`.
    pub checkpoint_requests: Option<crate::domain::requests::Settings>,
    /// A restored session is asked to confirm it read the checkpoint (`acknowledgement: false` turns it off).
    pub acknowledgement: bool,
    /// The resumed conversation's note that the checkpoint changed (`reminders: false`).
    pub reminders: bool,
    /// The summarizer's brief at a compaction (`brief: false`).
    pub brief: bool,
    /// What is given back after a compaction (`give_back: false`).
    pub give_back: bool,
    /// ctxkeep's part of the status line (`status_line: false`).
    pub status_line: bool,
    /// The config's `models:` overrides of the model table.
    pub model_overrides: std::collections::BTreeMap<String, crate::context::models::ModelOverride>,
}

impl Config {
    pub fn from_front(fm: &FrontMatter) -> Config {
        let overrides = fm.models.clone().unwrap_or_default();
        let model_info = fm
            .model
            .as_deref()
            .and_then(|m| crate::context::models::lookup_with(m, &overrides));
        Config {
            model: fm.model.clone(),
            window: fm
                .window
                .or(model_info.as_ref().map(|m| m.window))
                .unwrap_or(DEFAULT_WINDOW),
            encoding: fm
                .encoding
                .as_deref()
                .and_then(|e| Encoding::from_str(e).ok())
                .or(model_info.as_ref().map(|m| m.encoding))
                .unwrap_or(Encoding::O200kBase),
            stages: fm.stages.clone().unwrap_or_else(|| {
                crate::context::stages::parse_stages(crate::context::stages::DEFAULT_STAGES)
                    .expect("default stages parse")
            }),
            resume_max_tokens: fm.resume_max_tokens.unwrap_or(DEFAULT_RESUME_TOKENS),
            loop_limits: match &fm.loops {
                None | Some(LoopSetting::Enabled(true)) => Some(Default::default()),
                Some(LoopSetting::Enabled(false)) => None,
                Some(LoopSetting::Limits(l)) => Some(*l),
            },
            retention: fm
                .retention
                .as_ref()
                .and_then(|r| r.checkpoints)
                .unwrap_or(DEFAULT_RETENTION),
            retention_days: fm.retention.as_ref().and_then(|r| r.days),
            events_max_bytes: fm
                .retention
                .as_ref()
                .and_then(|r| r.events_max_bytes)
                .unwrap_or(DEFAULT_EVENTS_MAX_BYTES),
            sessions_kept: fm
                .retention
                .as_ref()
                .and_then(|r| r.sessions)
                .unwrap_or(DEFAULT_SESSIONS_KEPT),
            max_handoffs_without_progress: fm.max_handoffs_without_progress,
            templates: fm.templates.clone(),
            compaction: fm.compaction.clone().unwrap_or_default(),
            stages_against: fm
                .compaction
                .as_ref()
                .and_then(|c| c.stages)
                .unwrap_or_default(),
            model_overrides: fm.models.clone().unwrap_or_default(),
            snapshots: fm.snapshots.unwrap_or(true),
            acknowledgement: fm.acknowledgement.unwrap_or(true),
            reminders: fm.reminders.unwrap_or(true),
            brief: fm.brief.unwrap_or(true),
            give_back: fm.give_back.unwrap_or(true),
            status_line: fm.status_line.unwrap_or(true),
            checkpoint_requests: crate::domain::requests::Setting::resolve(
                fm.checkpoint_requests.as_ref(),
            ),
        }
    }

    /// The model table's entry for `name`, with the config's overrides.
    pub fn model_info(&self, name: &str) -> Option<crate::context::models::ModelInfo> {
        crate::context::models::lookup_with(name, &self.model_overrides)
    }
}
