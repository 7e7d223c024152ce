//! The encodings (the `ctxkeep-bpe` crate's `Encoding`), how `--encoding`
//! is parsed, and how the engine's errors reach the user.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;

pub use ctxkeep_bpe::{Encoding, UnknownEncoding};

use crate::system::error::Error;

/// The feature that builds in p50k_base and r50k_base.
const LEGACY_FEATURE: &str = "legacy-encodings";

/// The encoding's tokenizer, built once per process on first use (a few
/// milliseconds: the rank table is compiled in; only its regex is built).
pub(super) fn tokenizer(enc: Encoding) -> anyhow::Result<&'static ctxkeep_bpe::Tokenizer> {
    ctxkeep_bpe::tokenizer(enc).map_err(engine_error)
}

/// An encoding this build lacks is a usage error (exit 2), like an unknown
/// one; anything else is a failure of the engine.
pub(super) fn engine_error(e: ctxkeep_bpe::Error) -> anyhow::Error {
    match e {
        ctxkeep_bpe::Error::NotBuilt(enc) => Error::Usage(format!(
            "this ctxkeep was built without the {enc} tables (install with `--features {LEGACY_FEATURE}` to count with {enc})"
        ))
        .into(),
        other => anyhow::Error::new(other),
    }
}

/// `--encoding NAME`, parsed once by clap into an [`Encoding`]: any
/// encoding name, case-insensitively, as `Encoding::from_str` reads it; one
/// this build lacks (p50k_base, r50k_base without the `legacy-encodings`
/// feature) is refused with exit 2, and `--help` says so.
#[derive(Debug, Clone, Copy, Default)]
pub struct EncodingParser;

impl TypedValueParser for EncodingParser {
    type Value = Encoding;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Encoding, clap::Error> {
        let name = value.to_string_lossy();
        let flag = arg.map_or_else(|| "--encoding".to_string(), ToString::to_string);
        let refuse = |why: String| {
            clap::Error::raw(
                ErrorKind::InvalidValue,
                format!("invalid value '{name}' for '{flag}': {why}\n"),
            )
            .with_cmd(cmd)
        };
        match name.parse::<Encoding>() {
            Ok(enc) if enc.is_built() => Ok(enc),
            Ok(enc) => Err(refuse(format!(
                "this ctxkeep was built without the {enc} tables (install with `--features {LEGACY_FEATURE}` to use it)"
            ))),
            Err(unknown) => Err(refuse(unknown.to_string())),
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Encoding::ALL.into_iter().map(|enc| {
            let value = PossibleValue::new(enc.name());
            if enc.is_built() {
                value
            } else {
                value.help(format!("not in this build (feature `{LEGACY_FEATURE}`)"))
            }
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_names() {
        for e in Encoding::ALL {
            assert_eq!(e.to_string().parse::<Encoding>().unwrap(), e);
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(json, format!("\"{}\"", e.name()));
            assert_eq!(serde_json::from_str::<Encoding>(&json).unwrap(), e);
        }
        assert_eq!(
            "O200K_BASE".parse::<Encoding>().unwrap(),
            Encoding::O200kBase
        );
        let err = "gpt2".parse::<Encoding>().unwrap_err().to_string();
        assert!(err.contains("gpt2") && err.contains("cl100k_base"), "{err}");
        assert!(serde_json::from_str::<Encoding>("\"gpt2\"").is_err());
        assert_eq!(Encoding::default(), Encoding::O200kBase);
    }
}
