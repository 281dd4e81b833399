//! Durations as users write them on command lines and in bodies: `300`, `90s`, `500ms`, `5m`, `1h`.

/// A duration as users write it (command-line flags, a rollout's `pauseBetweenBatches`): a number of seconds, or a number with unit
/// `ms`, `s`, `m` or `h` (`300`, `90s`, `5m`, `1h`); the error names the text.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    use std::time::Duration;
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bad = || {
        format!(
            "'{}' is not a duration: expected e.g. 300, 90s, 500ms, 5m or 1h",
            crate::names::shown(text)
        )
    };
    let number: u64 = number.parse().map_err(|_| bad())?;
    match unit.trim() {
        "ms" => Ok(Duration::from_millis(number)),
        "" | "s" => Ok(Duration::from_secs(number)),
        "m" => Ok(Duration::from_secs(number.saturating_mul(60))),
        "h" => Ok(Duration::from_secs(number.saturating_mul(3600))),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_seconds_or_a_number_with_a_unit() {
        use std::time::Duration;
        for (text, expected) in [
            ("300", Duration::from_secs(300)),
            ("90s", Duration::from_secs(90)),
            ("500ms", Duration::from_millis(500)),
            ("5m", Duration::from_secs(300)),
            (" 1h ", Duration::from_secs(3600)),
        ] {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
        }
        for bad in ["", "m", "5 days", "1.5s", "-3s"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.contains(&format!("'{}'", bad.trim())), "{bad}: {err}");
        }
    }
}
