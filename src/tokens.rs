//! Placeholder until the counting module lands.
use std::str::FromStr;
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    O200kBase,
    Cl100kBase,
}
impl FromStr for Encoding {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "o200k_base" => Ok(Self::O200kBase),
            "cl100k_base" => Ok(Self::Cl100kBase),
            _ => anyhow::bail!("unknown encoding '{s}'"),
        }
    }
}
impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::O200kBase => "o200k_base",
            Self::Cl100kBase => "cl100k_base",
        })
    }
}
pub fn count(text: &str, enc: Encoding) -> anyhow::Result<usize> {
    let bpe = match enc {
        Encoding::O200kBase => tiktoken_rs::o200k_base()?,
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base()?,
    };
    Ok(bpe.encode_ordinary(text).len())
}
