//! Kubernetes resource quantities (`500m`, `1.5`, `1Gi`, `2e3`), as `resource.Quantity` parses, adds, compares
//! and prints them: a value kept exactly in billionths (anything finer is rounded up, as Kubernetes does) and the
//! format its suffix chose (decimal SI, binary SI or decimal exponent), printed in canonical form (`1500m`, `1`,
//! `2k`, `1536Mi`, `1Gi`).

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value as Json;

/// The longest quantity text accepted (Kubernetes' own values are short; this bounds the parsing work).
const MAX_TEXT: usize = 64;
/// Billionths per unit: the finest step a quantity keeps.
const NANOS_PER_UNIT: i128 = 1_000_000_000;
/// The largest decimal exponent accepted, either way (beyond it the value cannot be held exactly).
const MAX_EXPONENT: i32 = 24;

/// Why a quantity could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    /// The text is not of the form `<number><suffix>`.
    #[error(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (got {0:?})"
    )]
    Syntax(String),
    /// The value is too large to hold.
    #[error("quantity {0:?} is too large")]
    TooLarge(String),
}

/// How a quantity prints (the format of the suffix it was written with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `m`, `k`, `M`, … or no suffix.
    DecimalSi,
    /// `Ki`, `Mi`, `Gi`, ….
    BinarySi,
    /// `e3`, `E-2`.
    DecimalExponent,
}

/// A resource quantity.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    /// The value in billionths of a unit.
    nanos: i128,
    format: Format,
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

const DECIMAL_SUFFIXES: &[(&str, i32)] = &[
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
    ("E", 18),
];
const BINARY_SUFFIXES: &[&str] = &["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

fn pow10(exponent: u32) -> Option<i128> {
    10i128.checked_pow(exponent)
}

impl Quantity {
    /// Zero, printed `0`.
    #[must_use]
    pub fn zero() -> Self {
        Self {
            nanos: 0,
            format: Format::DecimalSi,
        }
    }

    /// A whole number of units (decimal SI).
    #[must_use]
    pub fn from_units(units: i64) -> Self {
        Self {
            nanos: i128::from(units) * NANOS_PER_UNIT,
            format: Format::DecimalSi,
        }
    }

    /// Whether the value is zero.
    #[must_use]
    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// Whether the value is below zero.
    #[must_use]
    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// The format it prints in.
    #[must_use]
    pub fn format(&self) -> Format {
        self.format
    }

    /// Parses `text` as `resource.ParseQuantity` does.
    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        let syntax = || QuantityError::Syntax(text.chars().take(MAX_TEXT).collect());
        if text.is_empty() || text.len() > MAX_TEXT {
            return Err(syntax());
        }
        let (negative, unsigned) = match text.as_bytes()[0] {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let number_len = unsigned
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(unsigned.len());
        let (number, suffix) = unsigned.split_at(number_len);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
            return Err(syntax());
        }
        let (format, exponent, binary_power) = Self::suffix(suffix).ok_or_else(syntax)?;
        let too_large = || QuantityError::TooLarge(text.to_string());
        let digits = format!("{whole}{fraction}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 38 {
            return Err(too_large());
        }
        let mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| too_large())?
        };
        let fraction_digits = i32::try_from(fraction.len()).map_err(|_| syntax())?;
        // value = mantissa × 10^(exponent − fraction digits) × 1024^binary_power, kept in billionths.
        let scale = exponent - fraction_digits + 9;
        let mut nanos = if scale >= 0 {
            pow10(scale.unsigned_abs())
                .and_then(|factor| mantissa.checked_mul(factor))
                .ok_or_else(too_large)?
        } else {
            let divisor = pow10(scale.unsigned_abs());
            match divisor {
                // Finer than a billionth: rounded up, as Kubernetes does.
                Some(divisor) => mantissa / divisor + i128::from(mantissa % divisor != 0),
                None => i128::from(mantissa != 0),
            }
        };
        for _ in 0..binary_power {
            nanos = nanos.checked_mul(1024).ok_or_else(too_large)?;
        }
        if negative {
            nanos = -nanos;
        }
        Ok(Self { nanos, format })
    }

    /// The format, decimal exponent and power of 1024 of a suffix.
    fn suffix(suffix: &str) -> Option<(Format, i32, u32)> {
        if let Some((_, exponent)) = DECIMAL_SUFFIXES.iter().find(|(s, _)| *s == suffix) {
            return Some((Format::DecimalSi, *exponent, 0));
        }
        if let Some(power) = BINARY_SUFFIXES.iter().skip(1).position(|s| *s == suffix) {
            return Some((Format::BinarySi, 0, u32::try_from(power + 1).ok()?));
        }
        let exponent = suffix.strip_prefix(['e', 'E'])?;
        let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 3 {
            return None;
        }
        let exponent: i32 = exponent.parse().ok()?;
        (exponent.abs() <= MAX_EXPONENT).then_some((Format::DecimalExponent, exponent, 0))
    }

    /// Reads a quantity from JSON: a string, or a number (as Kubernetes also accepts).
    pub fn from_json(value: &Json) -> Result<Self, QuantityError> {
        match value {
            Json::String(text) => Self::parse(text),
            Json::Number(number) => Self::parse(&number.to_string()),
            other => Err(QuantityError::Syntax(
                other.to_string().chars().take(MAX_TEXT).collect(),
            )),
        }
    }

    /// The sum, in the format of `self` (or of `other` when `self` is zero), as `Quantity.Add` does; `None` on
    /// overflow.
    #[must_use]
    pub fn checked_add(&self, other: &Self) -> Option<Self> {
        let format = if self.nanos == 0 {
            other.format
        } else {
            self.format
        };
        Some(Self {
            nanos: self.nanos.checked_add(other.nanos)?,
            format,
        })
    }

    /// The difference, in the format of `self`; `None` on overflow.
    #[must_use]
    pub fn checked_sub(&self, other: &Self) -> Option<Self> {
        Some(Self {
            nanos: self.nanos.checked_sub(other.nanos)?,
            format: self.format,
        })
    }

    /// The whole units in it, as `MilliValue() / 1000` counts them: thousandths rounded up, then whole units
    /// rounded toward zero (`1500m` is 1, `2` is 2, `1Gi` is 1073741824).
    #[must_use]
    pub fn whole_units(&self) -> i128 {
        let step = NANOS_PER_UNIT / 1000;
        let millis = if self.nanos >= 0 {
            (self.nanos + step - 1) / step
        } else {
            self.nanos / step
        };
        millis / 1000
    }

    /// The sum, saturating at the largest value a quantity holds.
    #[must_use]
    pub fn saturating_add(&self, other: &Self) -> Self {
        self.checked_add(other).unwrap_or(Self {
            nanos: if other.nanos < 0 { i128::MIN } else { i128::MAX },
            format: self.format,
        })
    }

    /// The canonical text, as `Quantity.String()` prints it.
    #[must_use]
    pub fn canonical(&self) -> String {
        if self.nanos == 0 {
            return "0".to_string();
        }
        let mut format = self.format;
        if format == Format::BinarySi
            && (self.nanos.abs() < 1024 * NANOS_PER_UNIT || self.nanos % NANOS_PER_UNIT != 0)
        {
            format = Format::DecimalSi;
        }
        if format == Format::BinarySi {
            let mut amount = self.nanos / NANOS_PER_UNIT;
            let mut power = 0;
            while amount % 1024 == 0 && power < BINARY_SUFFIXES.len() - 1 {
                amount /= 1024;
                power += 1;
            }
            return format!("{amount}{}", BINARY_SUFFIXES[power]);
        }
        let mut amount = self.nanos;
        let mut exponent: i32 = -9;
        while amount % 10 == 0 {
            amount /= 10;
            exponent += 1;
        }
        while exponent.rem_euclid(3) != 0 {
            amount *= 10;
            exponent -= 1;
        }
        let suffix = match format {
            Format::DecimalExponent if exponent == 0 => String::new(),
            Format::DecimalExponent => format!("e{exponent}"),
            _ => DECIMAL_SUFFIXES
                .iter()
                .find(|(_, e)| *e == exponent)
                .map_or_else(|| format!("e{exponent}"), |(s, _)| (*s).to_string()),
        };
        format!("{amount}{suffix}")
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        Quantity::parse(text).unwrap().canonical()
    }

    #[test]
    fn whole_units_count_as_milli_value_over_a_thousand() {
        let units = |text: &str| Quantity::parse(text).unwrap().whole_units();
        assert_eq!(units("1500m"), 1);
        assert_eq!(units("2"), 2);
        assert_eq!(units("999m"), 0);
        assert_eq!(units("1Gi"), 1_073_741_824);
        assert_eq!(units("1n"), 0);
        let difference = Quantity::parse("4")
            .unwrap()
            .checked_sub(&Quantity::parse("1500m").unwrap());
        assert_eq!(difference.unwrap().whole_units(), 2);
    }

    #[test]
    fn quantities_print_in_kubernetes_canonical_form() {
        for (input, expected) in [
            ("500m", "500m"),
            ("0.5", "500m"),
            ("1", "1"),
            ("1000m", "1"),
            ("1200m", "1200m"),
            ("1.2", "1200m"),
            ("2000", "2k"),
            ("1500", "1500"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("1500Mi", "1500Mi"),
            ("1.5Gi", "1536Mi"),
            ("512", "512"),
            ("100Ki", "100Ki"),
            ("0.5Ki", "512"),
            ("1e3", "1e3"),
            ("12e2", "1200"),
            ("1M", "1M"),
            ("0", "0"),
            ("0Gi", "0"),
            ("-500m", "-500m"),
            ("+2", "2"),
            ("1n", "1n"),
            ("0.0000000001", "1n"),
            (".5", "500m"),
            ("5.", "5"),
        ] {
            assert_eq!(canonical(input), expected, "{input}");
        }
    }

    #[test]
    fn bad_text_is_refused_with_the_text_named() {
        for bad in ["", "abc", "1.2.3", "1Xi", ".", "1e", "1e1000", "5 m", "--1"] {
            let err = Quantity::parse(bad).unwrap_err();
            assert!(
                err.to_string().contains(&format!("{bad:?}")) || bad.len() > MAX_TEXT,
                "{bad}: {err}"
            );
        }
        assert!(Quantity::parse(&"9".repeat(65)).is_err());
        assert!(matches!(
            Quantity::parse("99999999999999999999999999999999Ei"),
            Err(QuantityError::TooLarge(_))
        ));
    }

    #[test]
    fn sums_keep_the_first_non_zero_format_and_compare_by_value() {
        let sum = |a: &str, b: &str| {
            Quantity::parse(a)
                .unwrap()
                .checked_add(&Quantity::parse(b).unwrap())
                .unwrap()
                .canonical()
        };
        assert_eq!(sum("500m", "500m"), "1");
        assert_eq!(sum("700m", "500m"), "1200m");
        assert_eq!(sum("1Gi", "512Mi"), "1536Mi");
        assert_eq!(sum("0", "1Gi"), "1Gi");
        assert_eq!(sum("1G", "1Gi"), "2073741824");
        assert_eq!(sum("1Gi", "1G"), "2073741824");
        assert!(Quantity::parse("1").unwrap() > Quantity::parse("999m").unwrap());
        assert_eq!(Quantity::parse("1Ki").unwrap(), Quantity::parse("1024").unwrap());
        assert_eq!(
            Quantity::from_json(&serde_json::json!(0.5)).unwrap().canonical(),
            "500m"
        );
        assert_eq!(
            Quantity::from_json(&serde_json::json!(2)).unwrap().canonical(),
            "2"
        );
        assert!(Quantity::from_json(&serde_json::json!([1])).is_err());
    }
}
