//! Exact tiktoken token counts that start in a few milliseconds.
//!
//! [`count`] gives tiktoken's `encode_ordinary(text).len()` (special tokens
//! count as ordinary text) with our own byte-pair-encoding engine over
//! tiktoken's rank tables, which `build.rs` extracts from tiktoken-rs at
//! build time. The tests compare it with tiktoken-rs on generated inputs.
//!
//! o200k_base and cl100k_base are always built in. p50k_base and r50k_base
//! (3.45 MB of tables) only with the cargo feature `legacy-encodings`;
//! without it they still parse, and counting with them is
//! [`Error::NotBuilt`].
//!
//! The safe-cut functions ([`is_safe_cut`], [`next_safe_cut`],
//! [`last_safe_cut`]) say where a text can be cut so that the counts of the
//! parts add up to the count of the whole: callers count in parallel or
//! incrementally with them.
//!
//! ```
//! use ctxkeep_bpe::{count, Encoding};
//! assert_eq!(count("hello world", Encoding::O200kBase).unwrap(), 2);
//! ```

mod bpe;
mod cut;
mod patterns;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod texts;

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

pub use bpe::{Counter, Tokenizer};
pub use cut::{is_safe_cut, last_safe_cut, next_safe_cut};

use bpe::Tables;

/// A tiktoken encoding. `o200k_base` is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Encoding {
    #[default]
    #[cfg_attr(feature = "serde", serde(rename = "o200k_base"))]
    O200kBase,
    #[cfg_attr(feature = "serde", serde(rename = "cl100k_base"))]
    Cl100kBase,
    /// Needs the `legacy-encodings` feature to count.
    #[cfg_attr(feature = "serde", serde(rename = "p50k_base"))]
    P50kBase,
    /// Needs the `legacy-encodings` feature to count.
    #[cfg_attr(feature = "serde", serde(rename = "r50k_base"))]
    R50kBase,
}

impl Encoding {
    /// Every encoding, built into this binary or not.
    pub const ALL: [Encoding; 4] = [
        Encoding::O200kBase,
        Encoding::Cl100kBase,
        Encoding::P50kBase,
        Encoding::R50kBase,
    ];

    /// The canonical tiktoken name, e.g. `o200k_base`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::P50kBase => "p50k_base",
            Encoding::R50kBase => "r50k_base",
        }
    }

    /// Whether this build has the encoding's tables (p50k_base and
    /// r50k_base need the `legacy-encodings` feature).
    pub const fn is_built(self) -> bool {
        match self {
            Encoding::O200kBase | Encoding::Cl100kBase => true,
            Encoding::P50kBase | Encoding::R50kBase => cfg!(feature = "legacy-encodings"),
        }
    }

    /// The encodings this build can count with.
    pub fn built() -> impl Iterator<Item = Encoding> {
        Encoding::ALL.into_iter().filter(|e| e.is_built())
    }

    fn index(self) -> usize {
        self as usize
    }

    /// Whether the pre-tokenizer has its own newline alternative
    /// (`\s*[\r\n]`), which makes the whitespace after the last newline of a
    /// run start a new piece.
    fn splits_at_newline(self) -> bool {
        matches!(self, Encoding::O200kBase | Encoding::Cl100kBase)
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An encoding name that is not one of [`Encoding::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEncoding(pub String);

impl fmt::Display for UnknownEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown encoding `{}`; valid encodings: o200k_base, cl100k_base, p50k_base, r50k_base",
            self.0
        )
    }
}

impl std::error::Error for UnknownEncoding {}

impl FromStr for Encoding {
    type Err = UnknownEncoding;

    /// Accepts the canonical names, case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Encoding::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| UnknownEncoding(s.to_string()))
    }
}

/// Why a count failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The encoding's tables are not in this build (p50k_base, r50k_base
    /// without the `legacy-encodings` feature).
    NotBuilt(Encoding),
    /// The compiled-in tables or pattern are unusable (a build bug).
    Broken { encoding: Encoding, reason: String },
    /// The engine gave up on a text (a single piece of 4 GiB or more, or a
    /// bug).
    Failed { bytes: usize, reason: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotBuilt(enc) => write!(
                f,
                "{enc}: built without this encoding's tables (cargo feature `legacy-encodings`)"
            ),
            Error::Broken { encoding, reason } => {
                write!(f, "cannot build the {encoding} tokenizer: {reason}")
            }
            Error::Failed { bytes, reason } => {
                write!(f, "tokenizer failed on a {bytes}-byte text: {reason}")
            }
        }
    }
}

impl std::error::Error for Error {}

#[cfg(feature = "legacy-encodings")]
use patterns::P50K_PATTERN;
use patterns::{CL100K_PATTERN, O200K_PATTERN};

/// An encoding's tables (`build.rs`), compiled in.
macro_rules! tables {
    ($name:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".tables")) as &'static [u8]
    };
}

/// The DFA of a pre-tokenizer that is not written out by hand (`build.rs`),
/// compiled in.
#[cfg(feature = "legacy-encodings")]
macro_rules! dfa {
    ($name:literal) => {
        Err(include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".dfa")) as &'static [u8])
    };
}

/// The encoding's tokenizer, built once per process on first use: the
/// compiled-in tables are read in place (nothing is inflated or hashed), and
/// so is the DFA of the pre-tokenizers not written out by hand.
pub fn tokenizer(enc: Encoding) -> Result<&'static Tokenizer, Error> {
    static SLOTS: [OnceLock<Result<Tokenizer, Error>>; 4] = [const { OnceLock::new() }; 4];
    SLOTS[enc.index()]
        .get_or_init(|| {
            let (tables, split, pattern) = match enc {
                Encoding::O200kBase => (tables!("o200k_base"), Ok(bpe::O200K_SPLIT), O200K_PATTERN),
                Encoding::Cl100kBase => (
                    tables!("cl100k_base"),
                    Ok(bpe::CL100K_SPLIT),
                    CL100K_PATTERN,
                ),
                #[cfg(feature = "legacy-encodings")]
                Encoding::P50kBase => (tables!("p50k_base"), dfa!("p50k_base"), P50K_PATTERN),
                #[cfg(feature = "legacy-encodings")]
                Encoding::R50kBase => (tables!("r50k_base"), dfa!("r50k_base"), P50K_PATTERN),
                #[cfg(not(feature = "legacy-encodings"))]
                Encoding::P50kBase | Encoding::R50kBase => return Err(Error::NotBuilt(enc)),
            };
            let broken = |reason| Error::Broken {
                encoding: enc,
                reason,
            };
            let tables = Tables::parse(tables).map_err(broken)?;
            Tokenizer::new(tables, split, pattern, enc.splits_at_newline()).map_err(broken)
        })
        .as_ref()
        .map_err(Error::clone)
}

/// The exact number of tokens tiktoken's `encode_ordinary(text)` gives, on
/// this thread. For large texts, cut at [`next_safe_cut`] and count the
/// parts on several threads (each with its own [`Tokenizer::counter`]).
pub fn count(text: &str, enc: Encoding) -> Result<usize, Error> {
    if text.is_empty() {
        return Ok(0);
    }
    tokenizer(enc)?.counter().count(text)
}
