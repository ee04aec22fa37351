//! The bundle's unit enums read from their keys (serde's `snake_case` names, which their derived
//! `Serialize` writes): one small lookup in a table per enum instead of a derived `Deserialize`,
//! whose identifier visitor and enum access are about 2 KB of wasm per enum; the viewer reads
//! fifteen of them before its first paint.
//!
//! [`deserialize_from_keys!`] declares the table and the `Deserialize`; a test below checks that
//! each key is the one `Serialize` writes, and an exhaustive match in the macro that the table
//! lists every variant.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};

/// Implements `Deserialize` for a unit enum from its variants' keys: `Enum { Variant => "key",
/// … }`, every variant once (a test-only exhaustive match checks), each key the `snake_case`
/// name its `Serialize` writes (checked by this module's tests). An unknown key is refused as
/// serde refuses an unknown variant, naming the keys expected.
macro_rules! deserialize_from_keys {
    ($ty:ident { $($variant:ident => $key:literal),+ $(,)? }) => {
        impl $ty {
            /// Each variant with its key, as bundles write it.
            pub(crate) const KEYED: &'static [(&'static str, $ty)] = &[$(($key, $ty::$variant)),+];
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                const KEYS: &[&str] = &[$($key),+];
                $crate::bundle::keyed::from_key(d, $ty::KEYED, KEYS)
            }
        }

        #[cfg(test)]
        impl $ty {
            /// Fails to compile when a variant is missing from the table.
            #[allow(dead_code)]
            fn every_variant_keyed(self) -> &'static str {
                match self {
                    $($ty::$variant => $key),+
                }
            }
        }
    };
}
pub(crate) use deserialize_from_keys;

/// Reads a string and looks it up in `table`; `keys` names the keys in the error.
///
/// # Errors
/// A string that is no key ([`de::Error::unknown_variant`]), or a value that is no string.
pub(crate) fn from_key<'de, D: Deserializer<'de>, T: Copy + 'static>(
    d: D,
    table: &'static [(&'static str, T)],
    keys: &'static [&'static str],
) -> Result<T, D::Error> {
    d.deserialize_str(KeyVisitor {
        table,
        keys,
        _t: PhantomData,
    })
}

struct KeyVisitor<T: 'static> {
    table: &'static [(&'static str, T)],
    keys: &'static [&'static str],
    _t: PhantomData<T>,
}

impl<T: Copy + 'static> Visitor<'_> for KeyVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "one of `{}`", self.keys.join("`, `"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        self.table
            .iter()
            .find(|(k, _)| *k == v)
            .map(|&(_, t)| t)
            .ok_or_else(|| E::unknown_variant(v, self.keys))
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;

    use crate::bundle::measurement::{ClockEventReason, ClockSource, LimitKind, Operands};
    use crate::bundle::*;

    fn check<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug + Copy>(
        table: &[(&str, T)],
    ) {
        for &(key, v) in table {
            assert_eq!(serde_json::to_value(v).unwrap(), serde_json::json!(key));
            assert_eq!(serde_json::from_str::<T>(&format!("\"{key}\"")).unwrap(), v);
        }
    }

    #[test]
    fn every_key_is_the_one_serialize_writes_and_reads_back() {
        check(MemoryLevel::KEYED);
        check(Datapath::KEYED);
        check(OriginKind::KEYED);
        check(SourceKind::KEYED);
        check(ChartFigure::KEYED);
        check(Method::KEYED);
        check(Operands::KEYED);
        check(ClockEventReason::KEYED);
        check(LimitKind::KEYED);
        check(ClockSource::KEYED);
        check(DataSource::KEYED);
        check(CollectiveKind::KEYED);
        check(Scope::KEYED);
        check(GroupSizeSource::KEYED);
        check(LinkKind::KEYED);
    }

    #[test]
    fn an_unknown_key_or_a_number_is_refused_naming_the_keys() {
        let e = serde_json::from_str::<Method>("\"guessed\"").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown variant `guessed`, expected `empirical` or `theoretical` at line 1 column 9"
        );
        let e = serde_json::from_str::<LinkKind>("3").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid type: integer `3`, expected one of `nvlink`, `pcie`, `network` at line 1 column 1"
        );
        let e = serde_json::from_str::<std::collections::BTreeMap<Datapath, f64>>(
            r#"{"fp32": 1.0, "fp128": 2.0}"#,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("unknown variant `fp128`, expected one of `fp64`"),
            "{e}"
        );
    }
}
