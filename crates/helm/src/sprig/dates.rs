//! Sprig's dates and durations with Go's layouts (`now`, `date`, `dateInZone`, `toDate`, `dateModify`, `ago`, `duration`, `durationRound`, `htmlDate`, `unixEpoch`, …).
//!
//! A time is a Go `time.Time` object: an instant (seconds and nanoseconds since the Unix epoch), a location (UTC,
//! `Local`, a named zone from jiff's time zone database, or a fixed offset such as a parsed `+0530`) and, for
//! `now`, a monotonic reading that `%v` prints as Go does (`2006-01-02 15:04:05.999999999 -0700 MST m=+0.001`).
//! Layouts are Go's reference-time layouts, formatted and parsed by ports of `time.Format` and
//! `time.ParseInLocation` (with their error messages); durations print as `time.Duration.String` does.
//!
//! Go's `int` and `int64` are one type here: Sprig's `duration` and `durationRound` accept only `int64` (a literal
//! `95` is Go's `int` and gives `0s` in Helm); this port treats every integer as `int64`.

use std::rc::Rc;
use std::sync::OnceLock;
use std::time::Instant;

use crate::gotemplate::funcs::{param_str, wrong_type};
use crate::gotemplate::{Arity, FuncError, FuncMap, Object, Runtime, Value};

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("now", Arity::Exact(0), now);
    map.add("date", Arity::Exact(2), date);
    map.add("dateInZone", Arity::Exact(3), date_in_zone);
    map.add("date_in_zone", Arity::Exact(3), date_in_zone);
    map.add("htmlDate", Arity::Exact(1), html_date);
    map.add("htmlDateInZone", Arity::Exact(2), html_date_in_zone);
    map.add("dateModify", Arity::Exact(2), date_modify);
    map.add("date_modify", Arity::Exact(2), date_modify);
    map.add("mustDateModify", Arity::Exact(2), must_date_modify);
    map.add("must_date_modify", Arity::Exact(2), must_date_modify);
    map.add("toDate", Arity::Exact(2), to_date);
    map.add("mustToDate", Arity::Exact(2), must_to_date);
    map.add("ago", Arity::Exact(1), ago);
    map.add("duration", Arity::Exact(1), duration);
    map.add("durationRound", Arity::Exact(1), duration_round);
    map.add("unixEpoch", Arity::Exact(1), unix_epoch);
}

const NANOS: i64 = 1_000_000_000;
const SECOND: i64 = NANOS;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;

// ---------------------------------------------------------------------------------------------------------------
// Locations and times

/// A Go `*time.Location`.
#[derive(Clone, Debug)]
pub(crate) enum Location {
    /// `time.UTC`.
    Utc,
    /// `time.Local` (the system's zone).
    Local,
    /// A zone loaded by name.
    Named(String, jiff::tz::TimeZone),
    /// `time.FixedZone(name, offset)` (what parsing fabricates).
    Fixed(String, i32),
}

fn local_zone() -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::try_system().unwrap_or(jiff::tz::TimeZone::UTC)
}

impl Location {
    /// Go's `time.LoadLocation`; `None` for an unknown name.
    fn load(name: &str) -> Option<Location> {
        match name {
            "" | "UTC" => Some(Location::Utc),
            "Local" => Some(Location::Local),
            // Go reads zoneinfo files by exact name; jiff's lookups ignore case.
            _ => jiff::tz::db()
                .get(name)
                .ok()
                .filter(|tz| tz.iana_name() == Some(name))
                .map(|tz| Location::Named(name.to_string(), tz)),
        }
    }

    fn tz(&self) -> Option<jiff::tz::TimeZone> {
        match self {
            Location::Utc | Location::Fixed(..) => None,
            Location::Local => Some(local_zone()),
            Location::Named(_, tz) => Some(tz.clone()),
        }
    }

    /// The zone abbreviation and offset in effect at `unix` seconds.
    fn lookup(&self, unix: i64) -> (String, i32) {
        match self {
            Location::Utc => ("UTC".into(), 0),
            Location::Fixed(name, offset) => (name.clone(), *offset),
            Location::Local | Location::Named(..) => {
                let Some(tz) = self.tz() else {
                    return ("UTC".into(), 0);
                };
                let clamped = unix.clamp(jiff::Timestamp::MIN.as_second(), jiff::Timestamp::MAX.as_second());
                let timestamp = jiff::Timestamp::from_second(clamped).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
                let info = tz.to_offset_info(timestamp);
                (info.abbreviation().to_string(), info.offset().seconds())
            }
        }
    }

    fn encode(&self) -> String {
        match self {
            Location::Utc => "U".into(),
            Location::Local => "L".into(),
            Location::Named(name, _) => format!("N{name}"),
            Location::Fixed(name, offset) => format!("F{offset}:{name}"),
        }
    }

    fn decode(text: &str) -> Option<Location> {
        let (kind, rest) = text.split_at_checked(1)?;
        match kind {
            "U" => Some(Location::Utc),
            "L" => Some(Location::Local),
            "N" => Location::load(rest),
            "F" => {
                let (offset, name) = rest.split_once(':')?;
                Some(Location::Fixed(name.to_string(), offset.parse().ok()?))
            }
            _ => None,
        }
    }
}

/// A Go `time.Time`.
#[derive(Clone, Debug)]
pub(crate) struct GoTime {
    secs: i64,
    nanos: u32,
    loc: Location,
    /// The monotonic clock reading in nanoseconds (only `now` has one).
    mono: Option<i64>,
}

fn process_start() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

/// Floor division and remainder.
fn div_mod(a: i64, b: i64) -> (i64, i64) {
    (a.div_euclid(b), a.rem_euclid(b))
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// (year, month, day) to days since 1970-01-01; month and day may be out of range (normalised as Go's Date does).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let (carry, month0) = div_mod(month - 1, 12);
    let year = year + carry;
    let month = month0 + 1;
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468 + (day - 1)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const LONG_MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The civil fields of a time in its location.
struct Fields {
    year: i64,
    month: u32,
    day: u32,
    yday: i64,
    weekday: usize,
    hour: i64,
    minute: i64,
    second: i64,
    name: String,
    offset: i32,
}

impl GoTime {
    /// The zero time (`time.Time{}`): 0001-01-01 00:00:00 UTC.
    fn zero() -> GoTime {
        GoTime {
            secs: days_from_civil(1, 1, 1) * 86_400,
            nanos: 0,
            loc: Location::Utc,
            mono: None,
        }
    }

    fn now() -> GoTime {
        let now = jiff::Timestamp::now();
        let mono = i64::try_from(process_start().elapsed().as_nanos()).unwrap_or(i64::MAX);
        GoTime {
            secs: now.as_second(),
            nanos: now.subsec_nanosecond().max(0) as u32,
            loc: Location::Local,
            mono: Some(mono),
        }
    }

    /// `time.Unix(secs, 0)` (in `Local`).
    fn unix(secs: i64) -> GoTime {
        GoTime {
            secs,
            nanos: 0,
            loc: Location::Local,
            mono: None,
        }
    }

    fn is_zero(&self) -> bool {
        self.secs == days_from_civil(1, 1, 1) * 86_400 && self.nanos == 0
    }

    fn fields(&self) -> Fields {
        let (name, offset) = self.loc.lookup(self.secs);
        let local = self.secs.saturating_add(i64::from(offset));
        let (days, rem) = div_mod(local, 86_400);
        let (year, month, day) = civil_from_days(days);
        let yday = days - days_from_civil(year, 1, 1) + 1;
        let weekday = (days + 4).rem_euclid(7) as usize;
        Fields {
            year,
            month,
            day,
            yday,
            weekday,
            hour: rem / 3_600,
            minute: rem % 3_600 / 60,
            second: rem % 60,
            name,
            offset,
        }
    }

    fn in_location(&self, loc: Location) -> GoTime {
        GoTime {
            secs: self.secs,
            nanos: self.nanos,
            loc,
            mono: None,
        }
    }

    /// `t.Add(d)`.
    fn add(&self, nanos: i64) -> GoTime {
        let total = i128::from(self.nanos) + i128::from(nanos);
        let secs = self
            .secs
            .saturating_add(total.div_euclid(i128::from(NANOS)) as i64);
        let nanos_part = total.rem_euclid(i128::from(NANOS)) as u32;
        GoTime {
            secs,
            nanos: nanos_part,
            loc: self.loc.clone(),
            mono: self.mono.map(|m| m.wrapping_add(nanos)),
        }
    }

    /// `t.Sub(u)` with Go's saturation.
    fn sub(&self, other: &GoTime) -> i64 {
        if let (Some(a), Some(b)) = (self.mono, other.mono) {
            return a.saturating_sub(b);
        }
        let diff = (i128::from(self.secs) - i128::from(other.secs)) * i128::from(NANOS)
            + i128::from(self.nanos)
            - i128::from(other.nanos);
        diff.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    /// `time.Since(t)`.
    fn since(&self) -> i64 {
        GoTime::now().sub(self)
    }

    /// `t.Format(layout)`.
    pub(crate) fn format(&self, layout: &str) -> String {
        let fields = self.fields();
        let mut out = String::with_capacity(layout.len() + 10);
        let mut layout = layout;
        while !layout.is_empty() {
            let (prefix, std, suffix) = next_std_chunk(layout);
            out.push_str(prefix);
            let Some(std) = std else { break };
            layout = suffix;
            format_std(&mut out, std, &fields, self.nanos);
        }
        out
    }

    /// `t.String()`.
    fn go_string(&self) -> String {
        let mut out = self.format("2006-01-02 15:04:05.999999999 -0700 MST");
        if let Some(mono) = self.mono {
            let sign = if mono < 0 { '-' } else { '+' };
            let m = mono.unsigned_abs();
            let (whole, frac) = (m / 1_000_000_000, m % 1_000_000_000);
            out.push_str(&format!(" m={sign}{whole}.{frac:09}"));
        }
        out
    }

    /// `t.Format(time.RFC3339Nano)` (what `json.Marshal` writes).
    fn rfc3339_nano(&self) -> String {
        self.format("2006-01-02T15:04:05.999999999Z07:00")
    }

    fn encode(&self) -> Value {
        Value::list(vec![
            Value::Int(self.secs),
            Value::Int(i64::from(self.nanos)),
            self.mono.map_or(Value::Nil, Value::Int),
            Value::from(self.loc.encode()),
        ])
    }

    fn decode(value: &Value) -> Option<GoTime> {
        let items = value.as_list()?;
        let (Value::Int(secs), Value::Int(nanos)) = (items.first()?, items.get(1)?) else {
            return None;
        };
        let mono = match items.get(2)? {
            Value::Int(mono) => Some(*mono),
            _ => None,
        };
        let loc = Location::decode(items.get(3)?.as_str()?)?;
        Some(GoTime {
            secs: *secs,
            nanos: u32::try_from(*nanos).ok()?,
            loc,
            mono,
        })
    }
}

/// The hidden field through which a time object hands its state to these functions (not a Go identifier, so
/// templates cannot reach it).
const STATE_FIELD: &str = "\0time";

struct TimeObject(GoTime);

fn time_value(time: GoTime) -> Value {
    Value::Object(Rc::new(TimeObject(time)))
}

/// The time inside a value, if it is a `time.Time` object.
fn as_time(value: &Value) -> Option<GoTime> {
    match value {
        Value::Object(object) if object.type_name() == "time.Time" => {
            GoTime::decode(&object.field(STATE_FIELD)?)
        }
        _ => None,
    }
}

/// A `time.Time` parameter (Go's conversion rules: nil is the zero time).
fn param_time(value: &Value) -> Result<GoTime, FuncError> {
    match value {
        Value::Nil => Ok(GoTime::zero()),
        other => as_time(other).ok_or_else(|| wrong_type("time.Time", other)),
    }
}

impl Object for TimeObject {
    fn type_name(&self) -> &str {
        "time.Time"
    }

    fn field(&self, name: &str) -> Option<Value> {
        let t = &self.0;
        let fields = || t.fields();
        Some(match name {
            STATE_FIELD => t.encode(),
            "Year" => Value::Int(fields().year),
            "Month" => Value::from(LONG_MONTHS[(fields().month as usize).saturating_sub(1) % 12]),
            "Day" => Value::Int(i64::from(fields().day)),
            "Hour" => Value::Int(fields().hour),
            "Minute" => Value::Int(fields().minute),
            "Second" => Value::Int(fields().second),
            "Nanosecond" => Value::Int(i64::from(t.nanos)),
            "YearDay" => Value::Int(fields().yday),
            "Weekday" => Value::from(LONG_DAYS[fields().weekday]),
            "Unix" => Value::Int(t.secs),
            "UnixMilli" => Value::Int(
                t.secs
                    .saturating_mul(1_000)
                    .saturating_add(i64::from(t.nanos / 1_000_000)),
            ),
            "UnixMicro" => Value::Int(
                t.secs
                    .saturating_mul(1_000_000)
                    .saturating_add(i64::from(t.nanos / 1_000)),
            ),
            "UnixNano" => Value::Int(t.secs.wrapping_mul(NANOS).wrapping_add(i64::from(t.nanos))),
            "UTC" => time_value(t.in_location(Location::Utc)),
            "Local" => time_value(t.in_location(Location::Local)),
            "IsZero" => Value::Bool(t.is_zero()),
            "String" => Value::from(t.go_string()),
            _ => return None,
        })
    }

    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        let t = &self.0;
        match (name, args) {
            ("Format", [layout]) => Some(
                param_str(layout)
                    .map(|layout| Value::from(t.format(&layout)))
                    .map_err(|e| e.message),
            ),
            ("Add", [Value::Int(nanos)]) => Some(Ok(time_value(t.add(*nanos)))),
            ("Before" | "After" | "Equal", [other]) => Some(match as_time(other) {
                Some(other) => {
                    let order = (t.secs, t.nanos).cmp(&(other.secs, other.nanos));
                    Ok(Value::Bool(match name {
                        "Before" => order.is_lt(),
                        "After" => order.is_gt(),
                        _ => order.is_eq(),
                    }))
                }
                None => Err(format!(
                    "wrong type for value; expected time.Time; got {}",
                    other.type_name()
                )),
            }),
            _ => None,
        }
    }

    fn display(&self) -> String {
        self.0.go_string()
    }

    fn to_value(&self) -> Value {
        Value::from(self.0.rfc3339_nano())
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Layouts (Go's time/format.go)

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    PM,
    Pm,
    TZ,
    Iso8601TZ,
    Iso8601SecondsTZ,
    Iso8601ShortTZ,
    Iso8601ColonTZ,
    Iso8601ColonSecondsTZ,
    NumTZ,
    NumSecondsTz,
    NumShortTZ,
    NumColonTZ,
    NumColonSecondsTZ,
    /// Digits, separator, whether trailing zeros are trimmed (`.999`).
    Frac(usize, u8, bool),
}

fn starts_with_lower(text: &str) -> bool {
    text.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
}

/// Go's `nextStdChunk`: the text before the first layout element, the element, the rest.
fn next_std_chunk(layout: &str) -> (&str, Option<Std>, &str) {
    let bytes = layout.as_bytes();
    let at = |i: usize, text: &str| layout.get(i..i + text.len()) == Some(text);
    for i in 0..bytes.len() {
        let found = match bytes[i] {
            b'J' if at(i, "Jan") => {
                if at(i, "January") {
                    Some((Std::LongMonth, 7))
                } else if !starts_with_lower(&layout[i + 3..]) {
                    Some((Std::Month, 3))
                } else {
                    None
                }
            }
            b'M' => {
                if at(i, "Monday") {
                    Some((Std::LongWeekDay, 6))
                } else if at(i, "Mon") && !starts_with_lower(&layout[i + 3..]) {
                    Some((Std::WeekDay, 3))
                } else if at(i, "MST") {
                    Some((Std::TZ, 3))
                } else {
                    None
                }
            }
            b'0' => match bytes.get(i + 1) {
                Some(b'1') => Some((Std::ZeroMonth, 2)),
                Some(b'2') => Some((Std::ZeroDay, 2)),
                Some(b'3') => Some((Std::ZeroHour12, 2)),
                Some(b'4') => Some((Std::ZeroMinute, 2)),
                Some(b'5') => Some((Std::ZeroSecond, 2)),
                Some(b'6') => Some((Std::Year, 2)),
                Some(b'0') if bytes.get(i + 2) == Some(&b'2') => Some((Std::ZeroYearDay, 3)),
                _ => None,
            },
            b'1' => {
                if bytes.get(i + 1) == Some(&b'5') {
                    Some((Std::Hour, 2))
                } else {
                    Some((Std::NumMonth, 1))
                }
            }
            b'2' => {
                if at(i, "2006") {
                    Some((Std::LongYear, 4))
                } else {
                    Some((Std::Day, 1))
                }
            }
            b'_' => {
                if bytes.get(i + 1) == Some(&b'2') {
                    if at(i + 1, "2006") {
                        return (&layout[..i + 1], Some(Std::LongYear), &layout[i + 5..]);
                    }
                    Some((Std::UnderDay, 2))
                } else if bytes.get(i + 1) == Some(&b'_') && bytes.get(i + 2) == Some(&b'2') {
                    Some((Std::UnderYearDay, 3))
                } else {
                    None
                }
            }
            b'3' => Some((Std::Hour12, 1)),
            b'4' => Some((Std::Minute, 1)),
            b'5' => Some((Std::Second, 1)),
            b'P' if bytes.get(i + 1) == Some(&b'M') => Some((Std::PM, 2)),
            b'p' if bytes.get(i + 1) == Some(&b'm') => Some((Std::Pm, 2)),
            b'-' => {
                if at(i, "-070000") {
                    Some((Std::NumSecondsTz, 7))
                } else if at(i, "-07:00:00") {
                    Some((Std::NumColonSecondsTZ, 9))
                } else if at(i, "-0700") {
                    Some((Std::NumTZ, 5))
                } else if at(i, "-07:00") {
                    Some((Std::NumColonTZ, 6))
                } else if at(i, "-07") {
                    Some((Std::NumShortTZ, 3))
                } else {
                    None
                }
            }
            b'Z' => {
                if at(i, "Z070000") {
                    Some((Std::Iso8601SecondsTZ, 7))
                } else if at(i, "Z07:00:00") {
                    Some((Std::Iso8601ColonSecondsTZ, 9))
                } else if at(i, "Z0700") {
                    Some((Std::Iso8601TZ, 5))
                } else if at(i, "Z07:00") {
                    Some((Std::Iso8601ColonTZ, 6))
                } else if at(i, "Z07") {
                    Some((Std::Iso8601ShortTZ, 3))
                } else {
                    None
                }
            }
            c @ (b'.' | b',') if matches!(bytes.get(i + 1), Some(b'0' | b'9')) => {
                let digit = bytes[i + 1];
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] == digit {
                    j += 1;
                }
                if bytes.get(j).is_some_and(u8::is_ascii_digit) {
                    None
                } else {
                    let std = Std::Frac(j - (i + 1), c, digit == b'9');
                    return (&layout[..i], Some(std), &layout[j..]);
                }
            }
            _ => None,
        };
        if let Some((std, len)) = found {
            return (&layout[..i], Some(std), &layout[i + len..]);
        }
    }
    (layout, None, "")
}

/// Go's `appendInt`: decimal, zero-padded to `width`.
fn append_int(out: &mut String, value: i64, width: usize) {
    if value < 0 {
        out.push('-');
    }
    let digits = value.unsigned_abs().to_string();
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(&digits);
}

fn format_std(out: &mut String, std: Std, f: &Fields, nanos: u32) {
    match std {
        Std::Year => append_int(out, f.year.abs() % 100, 2),
        Std::LongYear => append_int(out, f.year, 4),
        Std::Month => out.push_str(&LONG_MONTHS[(f.month as usize - 1) % 12][..3]),
        Std::LongMonth => out.push_str(LONG_MONTHS[(f.month as usize - 1) % 12]),
        Std::NumMonth => append_int(out, i64::from(f.month), 0),
        Std::ZeroMonth => append_int(out, i64::from(f.month), 2),
        Std::WeekDay => out.push_str(&LONG_DAYS[f.weekday][..3]),
        Std::LongWeekDay => out.push_str(LONG_DAYS[f.weekday]),
        Std::Day => append_int(out, i64::from(f.day), 0),
        Std::UnderDay => {
            if f.day < 10 {
                out.push(' ');
            }
            append_int(out, i64::from(f.day), 0);
        }
        Std::ZeroDay => append_int(out, i64::from(f.day), 2),
        Std::UnderYearDay => {
            if f.yday < 100 {
                out.push(' ');
                if f.yday < 10 {
                    out.push(' ');
                }
            }
            append_int(out, f.yday, 0);
        }
        Std::ZeroYearDay => append_int(out, f.yday, 3),
        Std::Hour => append_int(out, f.hour, 2),
        Std::Hour12 | Std::ZeroHour12 => {
            let hour = match f.hour % 12 {
                0 => 12,
                h => h,
            };
            append_int(out, hour, if std == Std::ZeroHour12 { 2 } else { 0 });
        }
        Std::Minute => append_int(out, f.minute, 0),
        Std::ZeroMinute => append_int(out, f.minute, 2),
        Std::Second => append_int(out, f.second, 0),
        Std::ZeroSecond => append_int(out, f.second, 2),
        Std::PM => out.push_str(if f.hour >= 12 { "PM" } else { "AM" }),
        Std::Pm => out.push_str(if f.hour >= 12 { "pm" } else { "am" }),
        Std::TZ => {
            if f.name.is_empty() {
                let zone = f.offset / 60;
                out.push(if zone < 0 { '-' } else { '+' });
                append_int(out, i64::from(zone.abs() / 60), 2);
                append_int(out, i64::from(zone.abs() % 60), 2);
            } else {
                out.push_str(&f.name);
            }
        }
        Std::Frac(digits, separator, trim) => {
            if trim && (digits == 0 || nanos == 0) {
                return;
            }
            let mut text = format!("{nanos:09}");
            text.truncate(digits.min(9));
            if trim {
                while text.ends_with('0') {
                    text.pop();
                }
                if text.is_empty() {
                    return;
                }
            }
            out.push(char::from(separator));
            out.push_str(&text);
        }
        zone => {
            let iso = matches!(
                zone,
                Std::Iso8601TZ
                    | Std::Iso8601ColonTZ
                    | Std::Iso8601SecondsTZ
                    | Std::Iso8601ShortTZ
                    | Std::Iso8601ColonSecondsTZ
            );
            if f.offset == 0 && iso {
                out.push('Z');
                return;
            }
            let minutes = f.offset / 60;
            out.push(if minutes < 0 { '-' } else { '+' });
            let (minutes, abs_offset) = (minutes.abs(), f.offset.abs());
            append_int(out, i64::from(minutes / 60), 2);
            let colon = matches!(
                zone,
                Std::Iso8601ColonTZ | Std::NumColonTZ | Std::Iso8601ColonSecondsTZ | Std::NumColonSecondsTZ
            );
            if colon {
                out.push(':');
            }
            if !matches!(zone, Std::NumShortTZ | Std::Iso8601ShortTZ) {
                append_int(out, i64::from(minutes % 60), 2);
            }
            if matches!(
                zone,
                Std::Iso8601SecondsTZ
                    | Std::NumSecondsTz
                    | Std::NumColonSecondsTZ
                    | Std::Iso8601ColonSecondsTZ
            ) {
                if matches!(zone, Std::NumColonSecondsTZ | Std::Iso8601ColonSecondsTZ) {
                    out.push(':');
                }
                append_int(out, i64::from(abs_offset % 60), 2);
            }
        }
    }
}

/// The `time` package's own `quote` (non-ASCII bytes as `\x..`).
fn time_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if (c as u32) >= 0x80 || c < ' ' {
            let mut buf = [0u8; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{byte:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

fn parse_error(layout: &str, value: &str, layout_elem: &str, value_elem: &str, message: &str) -> String {
    if message.is_empty() {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            time_quote(value),
            time_quote(layout),
            time_quote(value_elem),
            time_quote(layout_elem)
        )
    } else {
        format!("parsing time {}{message}", time_quote(value))
    }
}

fn is_digit(text: &str, index: usize) -> bool {
    text.as_bytes().get(index).is_some_and(u8::is_ascii_digit)
}

/// Go's `getnum`.
fn getnum(text: &str, fixed: bool) -> Option<(i64, &str)> {
    if !is_digit(text, 0) {
        return None;
    }
    let first = i64::from(text.as_bytes()[0] - b'0');
    if !is_digit(text, 1) {
        if fixed {
            return None;
        }
        return Some((first, &text[1..]));
    }
    Some((first * 10 + i64::from(text.as_bytes()[1] - b'0'), &text[2..]))
}

fn getnum3(text: &str, fixed: bool) -> Option<(i64, &str)> {
    let mut n = 0;
    let mut i = 0;
    while i < 3 && is_digit(text, i) {
        n = n * 10 + i64::from(text.as_bytes()[i] - b'0');
        i += 1;
    }
    if i == 0 || (fixed && i != 3) {
        return None;
    }
    Some((n, &text[i..]))
}

/// Go's `skip`: the layout's literal text, runs of spaces matching runs of spaces.
fn skip<'a>(mut value: &'a str, mut prefix: &str) -> Result<&'a str, &'a str> {
    while !prefix.is_empty() {
        if prefix.starts_with(' ') {
            if !value.is_empty() && !value.starts_with(' ') {
                return Err(value);
            }
            prefix = prefix.trim_start_matches(' ');
            value = value.trim_start_matches(' ');
            continue;
        }
        if value.is_empty() || value.as_bytes()[0] != prefix.as_bytes()[0] {
            return Err(value);
        }
        // Advance by one byte; both start with the same byte, so a char boundary in one is one in the other.
        let width = prefix.chars().next().map_or(1, char::len_utf8);
        if !value.is_char_boundary(width) || value.get(..width) != prefix.get(..width) {
            return Err(value);
        }
        prefix = &prefix[width..];
        value = &value[width..];
    }
    Ok(value)
}

fn lookup<'a>(table: &[&str], value: &'a str, short: bool) -> Option<(usize, &'a str)> {
    for (index, name) in table.iter().enumerate() {
        let name = if short { &name[..3] } else { name };
        if value.len() >= name.len()
            && value.is_char_boundary(name.len())
            && value[..name.len()].eq_ignore_ascii_case(name)
        {
            return Some((index, &value[name.len()..]));
        }
    }
    None
}

fn leading_int(text: &str) -> Option<(u64, &str)> {
    let mut x: u64 = 0;
    let mut i = 0;
    for byte in text.bytes() {
        if !byte.is_ascii_digit() {
            break;
        }
        if x > (1 << 63) / 10 {
            return None;
        }
        x = x * 10 + u64::from(byte - b'0');
        if x > 1 << 63 {
            return None;
        }
        i += 1;
    }
    Some((x, &text[i..]))
}

fn parse_signed_offset(value: &str) -> usize {
    let Some(sign) = value.bytes().next() else {
        return 0;
    };
    if sign != b'-' && sign != b'+' {
        return 0;
    }
    match leading_int(&value[1..]) {
        Some((x, rest)) if rest.len() != value.len() - 1 && x <= 23 => value.len() - rest.len(),
        _ => 0,
    }
}

/// Go's `parseTimeZone`: the length of a zone abbreviation at the start of `value`.
fn parse_time_zone(value: &str) -> Option<usize> {
    let bytes = value.as_bytes();
    if bytes.len() < 3 {
        return None;
    }
    if value.starts_with("ChST") || value.starts_with("MeST") {
        return Some(4);
    }
    if let Some(rest) = value.strip_prefix("GMT") {
        return Some(
            3 + if rest.is_empty() {
                0
            } else {
                parse_signed_offset(rest)
            },
        );
    }
    if bytes[0] == b'+' || bytes[0] == b'-' {
        let length = parse_signed_offset(value);
        return (length > 0).then_some(length);
    }
    let upper = bytes
        .iter()
        .take(6)
        .take_while(|b| b.is_ascii_uppercase())
        .count();
    match upper {
        5 if bytes[4] == b'T' => Some(5),
        4 if bytes[3] == b'T' || value.starts_with("WITA") => Some(4),
        3 => Some(3),
        _ => None,
    }
}

/// Go's `parseNanoseconds`: `value` starts with the separator; `nbytes` counts it.
fn parse_nanoseconds(value: &str, nbytes: usize) -> Result<i64, ()> {
    if !matches!(value.as_bytes().first(), Some(b'.' | b',')) {
        return Err(());
    }
    let nbytes = nbytes.min(10);
    let digits = value.get(1..nbytes).ok_or(())?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) || digits.is_empty() {
        return Err(());
    }
    let mut ns: i64 = digits.parse().map_err(|_| ())?;
    for _ in 0..(10 - nbytes) {
        ns *= 10;
    }
    Ok(ns)
}

/// Go's `time.ParseInLocation(layout, value, loc)` (the default location doubles as the "local" one).
pub(crate) fn parse_in_location(layout_in: &str, value_in: &str, loc: &Location) -> Result<GoTime, String> {
    let mut layout = layout_in;
    let mut value = value_in;
    let mut range_error = "";
    let (mut am, mut pm) = (false, false);
    let (mut year, mut month, mut day, mut yday) = (0i64, -1i64, -1i64, -1i64);
    let (mut hour, mut min, mut sec, mut nsec) = (0i64, 0i64, 0i64, 0i64);
    let mut z: Option<Location> = None;
    let mut zone_offset: Option<i64> = None;
    let mut zone_name = String::new();

    loop {
        let (prefix, std, suffix) = next_std_chunk(layout);
        let std_str = &layout[prefix.len()..layout.len() - suffix.len()];
        value = match skip(value, prefix) {
            Ok(rest) => rest,
            Err(rest) => return Err(parse_error(layout_in, value_in, prefix, rest, "")),
        };
        let Some(std) = std else {
            if !value.is_empty() {
                return Err(parse_error(
                    layout_in,
                    value_in,
                    "",
                    value,
                    &format!(": extra text: {}", time_quote(value)),
                ));
            }
            break;
        };
        layout = suffix;
        let hold = value;
        let mut bad = false;
        match std {
            Std::Year => match value.get(..2).and_then(atoi) {
                Some(y) => {
                    year = if y >= 69 { y + 1900 } else { y + 2000 };
                    value = &value[2..];
                }
                None => bad = true,
            },
            Std::LongYear => {
                match value
                    .get(..4)
                    .filter(|p| is_digit(p, 0))
                    .and_then(|p| atoi(p).map(|y| (y, p.len())))
                {
                    Some((y, n)) => {
                        year = y;
                        value = &value[n..];
                    }
                    None => bad = true,
                }
            }
            Std::Month | Std::LongMonth => match lookup(&LONG_MONTHS, value, std == Std::Month) {
                Some((index, rest)) => {
                    month = index as i64 + 1;
                    value = rest;
                }
                None => bad = true,
            },
            Std::NumMonth | Std::ZeroMonth => match getnum(value, std == Std::ZeroMonth) {
                Some((m, rest)) => {
                    month = m;
                    value = rest;
                    if month <= 0 || month > 12 {
                        range_error = "month";
                    }
                }
                None => bad = true,
            },
            Std::WeekDay | Std::LongWeekDay => match lookup(&LONG_DAYS, value, std == Std::WeekDay) {
                Some((_, rest)) => value = rest,
                None => bad = true,
            },
            Std::Day | Std::UnderDay | Std::ZeroDay => {
                if std == Std::UnderDay && value.starts_with(' ') {
                    value = &value[1..];
                }
                match getnum(value, std == Std::ZeroDay) {
                    Some((d, rest)) => {
                        day = d;
                        value = rest;
                    }
                    None => bad = true,
                }
            }
            Std::UnderYearDay | Std::ZeroYearDay => {
                for _ in 0..2 {
                    if std == Std::UnderYearDay && value.starts_with(' ') {
                        value = &value[1..];
                    }
                }
                match getnum3(value, std == Std::ZeroYearDay) {
                    Some((d, rest)) => {
                        yday = d;
                        value = rest;
                    }
                    None => bad = true,
                }
            }
            Std::Hour => match getnum(value, false) {
                Some((h, rest)) => {
                    hour = h;
                    value = rest;
                    if !(0..24).contains(&hour) {
                        range_error = "hour";
                    }
                }
                None => bad = true,
            },
            Std::Hour12 | Std::ZeroHour12 => match getnum(value, std == Std::ZeroHour12) {
                Some((h, rest)) => {
                    hour = h;
                    value = rest;
                    if !(0..=12).contains(&hour) {
                        range_error = "hour";
                    }
                }
                None => bad = true,
            },
            Std::Minute | Std::ZeroMinute => match getnum(value, std == Std::ZeroMinute) {
                Some((m, rest)) => {
                    min = m;
                    value = rest;
                    if !(0..60).contains(&min) {
                        range_error = "minute";
                    }
                }
                None => bad = true,
            },
            Std::Second | Std::ZeroSecond => match getnum(value, std == Std::ZeroSecond) {
                Some((s, rest)) => {
                    sec = s;
                    value = rest;
                    if !(0..60).contains(&sec) {
                        range_error = "second";
                    } else if value.len() >= 2
                        && matches!(value.as_bytes()[0], b'.' | b',')
                        && is_digit(value, 1)
                    {
                        let (_, next, _) = next_std_chunk(layout);
                        if !matches!(next, Some(Std::Frac(..))) {
                            let mut n = 2;
                            while n < value.len() && is_digit(value, n) {
                                n += 1;
                            }
                            match parse_nanoseconds(value, n) {
                                Ok(ns) => nsec = ns,
                                Err(()) => bad = true,
                            }
                            value = &value[n..];
                        }
                    }
                }
                None => bad = true,
            },
            Std::PM | Std::Pm => {
                let (upper, lower) = if std == Std::PM {
                    ("PM", "AM")
                } else {
                    ("pm", "am")
                };
                match value.get(..2) {
                    Some(p) if p == upper => pm = true,
                    Some(p) if p == lower => am = true,
                    _ => bad = true,
                }
                if !bad {
                    value = &value[2..];
                }
            }
            Std::TZ => {
                if value.starts_with("UTC") {
                    z = Some(Location::Utc);
                    value = &value[3..];
                } else {
                    match parse_time_zone(value) {
                        Some(n) => {
                            zone_name = value[..n].to_string();
                            value = &value[n..];
                        }
                        None => bad = true,
                    }
                }
            }
            Std::Frac(digits, _, false) => {
                let n = 1 + digits;
                if value.len() < n {
                    bad = true;
                } else {
                    match parse_nanoseconds(value, n) {
                        Ok(ns) => nsec = ns,
                        Err(()) => bad = true,
                    }
                    if !bad {
                        value = &value[n..];
                    }
                }
            }
            Std::Frac(_, _, true) => {
                if value.len() >= 2 && matches!(value.as_bytes()[0], b'.' | b',') && is_digit(value, 1) {
                    let mut i = 0;
                    while i + 1 < value.len() && is_digit(value, i + 1) {
                        i += 1;
                    }
                    match parse_nanoseconds(value, 1 + i) {
                        Ok(ns) => nsec = ns,
                        Err(()) => bad = true,
                    }
                    value = &value[1 + i..];
                }
            }
            zone => {
                let iso = matches!(
                    zone,
                    Std::Iso8601TZ
                        | Std::Iso8601ShortTZ
                        | Std::Iso8601ColonTZ
                        | Std::Iso8601SecondsTZ
                        | Std::Iso8601ColonSecondsTZ
                );
                if iso && value.starts_with('Z') {
                    value = &value[1..];
                    z = Some(Location::Utc);
                } else {
                    let b = value.as_bytes();
                    let g = |from: usize, to: usize| value.get(from..to);
                    let parts = match zone {
                        Std::Iso8601ColonTZ | Std::NumColonTZ if b.len() >= 6 && b[3] == b':' => g(0, 1)
                            .zip(g(1, 3))
                            .zip(g(4, 6))
                            .map(|((s, h), m)| (s, h, m, "00", 6)),
                        Std::NumShortTZ | Std::Iso8601ShortTZ if b.len() >= 3 => {
                            g(0, 1).zip(g(1, 3)).map(|(s, h)| (s, h, "00", "00", 3))
                        }
                        Std::Iso8601ColonSecondsTZ | Std::NumColonSecondsTZ
                            if b.len() >= 9 && b[3] == b':' && b[6] == b':' =>
                        {
                            g(0, 1)
                                .zip(g(1, 3))
                                .zip(g(4, 6))
                                .zip(g(7, 9))
                                .map(|(((s, h), m), x)| (s, h, m, x, 9))
                        }
                        Std::Iso8601SecondsTZ | Std::NumSecondsTz if b.len() >= 7 => g(0, 1)
                            .zip(g(1, 3))
                            .zip(g(3, 5))
                            .zip(g(5, 7))
                            .map(|(((s, h), m), x)| (s, h, m, x, 7)),
                        Std::Iso8601TZ | Std::NumTZ if b.len() >= 5 => g(0, 1)
                            .zip(g(1, 3))
                            .zip(g(3, 5))
                            .map(|((s, h), m)| (s, h, m, "00", 5)),
                        _ => None,
                    };
                    match parts {
                        Some((sign, hh, mm, ss, n)) => {
                            let numbers = getnum(hh, true)
                                .and_then(|(h, _)| getnum(mm, true).map(|(m, _)| (h, m)))
                                .and_then(|(h, m)| getnum(ss, true).map(|(s, _)| (h, m, s)));
                            match numbers {
                                Some((h, m, s)) => {
                                    if h > 24 {
                                        range_error = "time zone offset hour";
                                    }
                                    if m > 60 {
                                        range_error = "time zone offset minute";
                                    }
                                    if s > 60 {
                                        range_error = "time zone offset second";
                                    }
                                    let offset = (h * 60 + m) * 60 + s;
                                    match sign {
                                        "+" => zone_offset = Some(offset),
                                        "-" => zone_offset = Some(-offset),
                                        _ => bad = true,
                                    }
                                }
                                None => bad = true,
                            }
                            value = value.get(n..).unwrap_or("");
                        }
                        None => bad = true,
                    }
                }
            }
        }
        if !range_error.is_empty() {
            return Err(parse_error(
                layout_in,
                value_in,
                std_str,
                value,
                &format!(": {range_error} out of range"),
            ));
        }
        if bad {
            return Err(parse_error(layout_in, value_in, std_str, hold, ""));
        }
    }
    if pm && hour < 12 {
        hour += 12;
    } else if am && hour == 12 {
        hour = 0;
    }
    if yday >= 0 {
        let mut d = 0;
        let mut m = 0;
        if is_leap(year) {
            if yday == 31 + 29 {
                m = 2;
                d = 29;
            } else if yday > 31 + 29 {
                yday -= 1;
            }
        }
        if !(1..=365).contains(&yday) {
            return Err(parse_error(
                layout_in,
                value_in,
                "",
                value,
                ": day-of-year out of range",
            ));
        }
        if m == 0 {
            m = (yday - 1) / 31 + 1;
            let days_before = |month: i64| (1..month).map(|mm| days_in(mm, 2001)).sum::<i64>();
            if days_before(m + 1) < yday {
                m += 1;
            }
            d = yday - days_before(m);
        }
        if month >= 0 && month != m {
            return Err(parse_error(
                layout_in,
                value_in,
                "",
                value,
                ": day-of-year does not match month",
            ));
        }
        month = m;
        if day >= 0 && day != d {
            return Err(parse_error(
                layout_in,
                value_in,
                "",
                value,
                ": day-of-year does not match day",
            ));
        }
        day = d;
    } else {
        if month < 0 {
            month = 1;
        }
        if day < 0 {
            day = 1;
        }
    }
    if day < 1 || day > days_in(month, year) {
        return Err(parse_error(layout_in, value_in, "", value, ": day out of range"));
    }
    let civil_secs = days_from_civil(year, month, day) * 86_400 + hour * 3_600 + min * 60 + sec;
    let nanos = nsec as u32;
    if let Some(z) = z {
        return Ok(date_in(civil_secs, nanos, z));
    }
    if let Some(offset) = zone_offset {
        let unix = civil_secs - offset;
        let (name, local_offset) = loc.lookup(unix);
        if i64::from(local_offset) == offset && (zone_name.is_empty() || name == zone_name) {
            return Ok(GoTime {
                secs: unix,
                nanos,
                loc: loc.clone(),
                mono: None,
            });
        }
        return Ok(GoTime {
            secs: unix,
            nanos,
            loc: Location::Fixed(zone_name, offset as i32),
            mono: None,
        });
    }
    if !zone_name.is_empty() {
        // A known abbreviation of the location at this time takes its offset; otherwise a fabricated zone.
        for guess in [civil_secs, civil_secs - 86_400, civil_secs + 86_400] {
            let (name, offset) = loc.lookup(guess);
            if name == zone_name {
                let unix = civil_secs - i64::from(offset);
                return Ok(GoTime {
                    secs: unix,
                    nanos,
                    loc: loc.clone(),
                    mono: None,
                });
            }
        }
        let mut offset = 0;
        if zone_name.len() > 3 && zone_name.starts_with("GMT") {
            offset = atoi(&zone_name[3..]).unwrap_or(0) * 3_600;
        }
        // Go keeps the clock reading as UTC and only labels it with the fabricated zone.
        return Ok(GoTime {
            secs: civil_secs,
            nanos,
            loc: Location::Fixed(zone_name, offset as i32),
            mono: None,
        });
    }
    Ok(date_in(civil_secs, nanos, loc.clone()))
}

/// Go's `atoi` in the time package (sign allowed, no trailing text).
fn atoi(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (value, rest) = leading_int(digits)?;
    if !rest.is_empty() || digits.is_empty() {
        return None;
    }
    let value = i64::try_from(value).ok()?;
    Some(if negative { -value } else { value })
}

/// Go's `time.Date(...)` for civil seconds in `loc`.
fn date_in(civil_secs: i64, nanos: u32, loc: Location) -> GoTime {
    let (_, offset) = loc.lookup(civil_secs);
    let mut unix = civil_secs;
    if offset != 0 {
        let utc = civil_secs - i64::from(offset);
        let (_, at_utc) = loc.lookup(utc);
        let offset = if at_utc != offset { at_utc } else { offset };
        unix = civil_secs - i64::from(offset);
    }
    GoTime {
        secs: unix,
        nanos,
        loc,
        mono: None,
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Durations

/// Go's `time.ParseDuration`, with its messages.
pub(crate) fn parse_duration(orig: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", time_quote(orig));
    let mut s = orig;
    let mut negative = false;
    if let Some(first) = s.bytes().next()
        && (first == b'-' || first == b'+')
    {
        negative = first == b'-';
        s = &s[1..];
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let first = s.as_bytes()[0];
        if !(first == b'.' || first.is_ascii_digit()) {
            return Err(invalid());
        }
        let before = s.len();
        let (mut v, rest) = leading_int(s).ok_or_else(invalid)?;
        s = rest;
        let pre = before != s.len();
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            s = rest;
            let before = s.len();
            let mut overflow = false;
            let mut i = 0;
            for byte in s.bytes() {
                if !byte.is_ascii_digit() {
                    break;
                }
                i += 1;
                if overflow {
                    continue;
                }
                if f > (i64::MAX as u64) / 10 {
                    overflow = true;
                    continue;
                }
                let y = f * 10 + u64::from(byte - b'0');
                if y > 1 << 63 {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10.0;
            }
            s = &s[i..];
            post = before != s.len();
        }
        if !pre && !post {
            return Err(invalid());
        }
        let unit_len = s
            .bytes()
            .take_while(|b| !(*b == b'.' || b.is_ascii_digit()))
            .count();
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", time_quote(orig)));
        }
        let unit_text = &s[..unit_len];
        s = &s[unit_len..];
        let unit: u64 = match unit_text {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    time_quote(unit_text),
                    time_quote(orig)
                ));
            }
        };
        if v > (1 << 63) / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > 1 << 63 {
                return Err(invalid());
            }
        }
        total += v;
        if total > 1 << 63 {
            return Err(invalid());
        }
    }
    if negative {
        return Ok((total as i64).wrapping_neg());
    }
    if total > i64::MAX as u64 {
        return Err(invalid());
    }
    Ok(total as i64)
}

/// Go's `time.Duration.String`.
pub(crate) fn duration_string(d: i64) -> String {
    let mut u = d.unsigned_abs();
    let negative = d < 0;
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (prec, unit) = match u {
            0 => return "0s".into(),
            1..=999 => (0, "ns"),
            1_000..=999_999 => (3, "µs"),
            _ => (6, "ms"),
        };
        let (frac, whole) = fmt_frac(u, prec);
        out.push_str(&whole.to_string());
        out.push_str(&frac);
        out.push_str(unit);
    } else {
        let (frac, whole) = fmt_frac(u, 9);
        u = whole;
        let seconds = format!("{}{frac}s", u % 60);
        u /= 60;
        if u > 0 {
            let minutes = u % 60;
            u /= 60;
            if u > 0 {
                out.push_str(&format!("{u}h"));
            }
            out.push_str(&format!("{minutes}m"));
        }
        out.push_str(&seconds);
    }
    if negative {
        out.insert(0, '-');
    }
    out
}

/// Go's `fmtFrac`: the fraction of `v / 10^prec` without trailing zeros (".5"), and the integer part.
fn fmt_frac(mut v: u64, prec: usize) -> (String, u64) {
    let mut digits = Vec::new();
    let mut printed = false;
    for _ in 0..prec {
        let digit = v % 10;
        printed = printed || digit != 0;
        if printed {
            digits.push(char::from(b'0' + digit as u8));
        }
        v /= 10;
    }
    if printed {
        digits.push('.');
    }
    digits.reverse();
    (digits.into_iter().collect(), v)
}

/// Go's `Duration.Round(m)`.
fn round_duration(d: i64, m: i64) -> i64 {
    if m <= 0 {
        return d;
    }
    let mut r = d % m;
    let less_than_half = |x: i64| (x as u64).wrapping_add(x as u64) < m as u64;
    if d < 0 {
        r = -r;
        if less_than_half(r) {
            return d + r;
        }
        return d.checked_sub(m).map_or(i64::MIN, |v| v + r);
    }
    if less_than_half(r) {
        return d - r;
    }
    d.checked_add(m - r).unwrap_or(i64::MAX)
}

// ---------------------------------------------------------------------------------------------------------------
// Functions

/// Sprig's `date`-family argument: a time, an integer (Unix seconds), anything else meaning now.
fn time_arg(value: &Value) -> GoTime {
    match value {
        Value::Int(secs) => GoTime::unix(*secs),
        other => as_time(other).unwrap_or_else(GoTime::now),
    }
}

fn format_in_zone(layout: &str, time: GoTime, zone: &str) -> String {
    let loc = Location::load(zone).unwrap_or(Location::Utc);
    time.in_location(loc).format(layout)
}

fn now(_: &mut dyn Runtime, _args: &[Value]) -> Result<Value, FuncError> {
    Ok(time_value(GoTime::now()))
}

fn date(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let layout = param_str(&args[0])?;
    Ok(Value::from(format_in_zone(&layout, time_arg(&args[1]), "Local")))
}

fn date_in_zone(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let layout = param_str(&args[0])?;
    let zone = param_str(&args[2])?;
    Ok(Value::from(format_in_zone(&layout, time_arg(&args[1]), &zone)))
}

fn html_date(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::from(format_in_zone(
        "2006-01-02",
        time_arg(&args[0]),
        "Local",
    )))
}

fn html_date_in_zone(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let zone = param_str(&args[1])?;
    Ok(Value::from(format_in_zone(
        "2006-01-02",
        time_arg(&args[0]),
        &zone,
    )))
}

fn date_modify(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let modifier = param_str(&args[0])?;
    let time = param_time(&args[1])?;
    Ok(time_value(match parse_duration(&modifier) {
        Ok(d) => time.add(d),
        Err(_) => time,
    }))
}

fn must_date_modify(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let modifier = param_str(&args[0])?;
    let time = param_time(&args[1])?;
    let d = parse_duration(&modifier).map_err(FuncError::new)?;
    Ok(time_value(time.add(d)))
}

fn to_date(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let layout = param_str(&args[0])?;
    let text = param_str(&args[1])?;
    Ok(time_value(
        parse_in_location(&layout, &text, &Location::Local).unwrap_or_else(|_| GoTime::zero()),
    ))
}

fn must_to_date(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let layout = param_str(&args[0])?;
    let text = param_str(&args[1])?;
    parse_in_location(&layout, &text, &Location::Local)
        .map(time_value)
        .map_err(FuncError::new)
}

fn ago(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let time = time_arg(&args[0]);
    Ok(Value::from(duration_string(round_duration(time.since(), SECOND))))
}

/// Go's `strconv.ParseInt(text, 10, 64)` as Sprig uses it (errors ignored: 0, or the clamped value on overflow).
fn parse_int_lenient(text: &str) -> i64 {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    match digits.parse::<u128>() {
        Ok(value) if negative => i64::try_from(-(value.min(1 << 64) as i128)).unwrap_or(i64::MIN),
        Ok(value) => i64::try_from(value).unwrap_or(i64::MAX),
        Err(_) if negative => i64::MIN,
        Err(_) => i64::MAX,
    }
}

fn duration(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let seconds = match &args[0] {
        Value::String(text) => parse_int_lenient(text),
        Value::Int(n) => *n,
        _ => 0,
    };
    Ok(Value::from(duration_string(seconds.wrapping_mul(SECOND))))
}

fn duration_round(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let d = match &args[0] {
        Value::String(text) => parse_duration(text).unwrap_or(0),
        Value::Int(n) => *n,
        other => as_time(other).map_or(0, |time| time.since()),
    };
    let u = d.unsigned_abs();
    let (year, month, day) = (HOUR as u64 * 24 * 365, HOUR as u64 * 24 * 30, HOUR as u64 * 24);
    let text = if u > year {
        format!("{}y", u / year)
    } else if u > month {
        format!("{}mo", u / month)
    } else if u > day {
        format!("{}d", u / day)
    } else if u > HOUR as u64 {
        format!("{}h", u / HOUR as u64)
    } else if u > MINUTE as u64 {
        format!("{}m", u / MINUTE as u64)
    } else if u > SECOND as u64 {
        format!("{}s", u / SECOND as u64)
    } else {
        "0s".into()
    };
    Ok(Value::from(text))
}

fn unix_epoch(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let time = param_time(&args[0])?;
    Ok(Value::from(time.secs.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotemplate::NoRuntime;
    use crate::gotemplate::fmt::sprint_value;

    fn call(name: &str, args: &[Value]) -> Result<Value, FuncError> {
        let mut map = FuncMap::new();
        register(&mut map);
        let def = map.get(name).ok_or_else(|| FuncError::new("no such function"))?;
        def.arity.check(name, args.len())?;
        (def.call)(&mut NoRuntime, args)
    }

    fn show(value: Result<Value, FuncError>) -> String {
        match value {
            Ok(value) => sprint_value(&value),
            Err(error) => format!("ERROR: {error}"),
        }
    }

    fn s(text: &str) -> Value {
        Value::from(text)
    }

    fn to_date(layout: &str, text: &str) -> Value {
        call("toDate", &[s(layout), s(text)]).unwrap_or(Value::Nil)
    }

    /// These tests assume what the Helm probes ran with: a UTC local zone.
    fn local_is_utc() -> bool {
        local_zone().to_offset(jiff::Timestamp::UNIX_EPOCH).seconds() == 0
            && local_zone()
                .to_offset(jiff::Timestamp::from_second(1_720_000_000).unwrap_or_default())
                .seconds()
                == 0
    }

    #[test]
    fn layouts_format_as_helm_prints_them() {
        if !local_is_utc() {
            return;
        }
        let t = to_date(
            "2006-01-02 15:04:05.000000000 -0700",
            "2024-03-09 07:05:09.012300000 +0100",
        );
        // Each row: layout, then Helm's output in Local (UTC), Asia/Kolkata and America/New_York.
        let rows = [
            (
                "2006-01-02T15:04:05Z07:00",
                [
                    "2024-03-09T06:05:09Z",
                    "2024-03-09T11:35:09+05:30",
                    "2024-03-09T01:05:09-05:00",
                ],
            ),
            (
                "Mon Jan _2 15:04:05 MST 2006",
                [
                    "Sat Mar  9 06:05:09 UTC 2024",
                    "Sat Mar  9 11:35:09 IST 2024",
                    "Sat Mar  9 01:05:09 EST 2024",
                ],
            ),
            (
                "Monday, 02-Jan-06 3:4:5 PM pm",
                [
                    "Saturday, 09-Mar-24 6:5:9 AM am",
                    "Saturday, 09-Mar-24 11:35:9 AM am",
                    "Saturday, 09-Mar-24 1:5:9 AM am",
                ],
            ),
            (
                ".000 .999 ,000000 .9 .0",
                [
                    ".012 .012 ,012300  .0",
                    ".012 .012 ,012300  .0",
                    ".012 .012 ,012300  .0",
                ],
            ),
            (
                "__2 002 Z0700 Z07 -07:00:00 Z070000",
                [
                    " 69 069 Z Z +00:00:00 Z",
                    " 69 069 +0530 +05 +05:30:00 +053000",
                    " 69 069 -0500 -05 -05:00:00 -050000",
                ],
            ),
            (
                "January 1 2 3 4 5 6",
                ["March 3 9 6 5 9 6", "March 3 9 11 35 9 6", "March 3 9 1 5 9 6"],
            ),
            (
                "_2006 2006 06",
                ["_2024 2024 24", "_2024 2024 24", "_2024 2024 24"],
            ),
            (
                "15:04:05.999999999",
                ["06:05:09.0123", "11:35:09.0123", "01:05:09.0123"],
            ),
            ("Jan02", ["Mar09", "Mar09", "Mar09"]),
            (
                "Mondays Janu",
                ["Saturdays Janu", "Saturdays Janu", "Saturdays Janu"],
            ),
        ];
        for (layout, expected) in rows {
            assert_eq!(
                show(call("date", &[s(layout), t.clone()])),
                expected[0],
                "{layout}"
            );
            assert_eq!(
                show(call("dateInZone", &[s(layout), t.clone(), s("Asia/Kolkata")])),
                expected[1],
                "{layout}"
            );
            assert_eq!(
                show(call(
                    "date_in_zone",
                    &[s(layout), t.clone(), s("America/New_York")]
                )),
                expected[2],
                "{layout}"
            );
        }
        assert_eq!(sprint_value(&t), "2024-03-09 07:05:09.0123 +0100 +0100");
        let Value::Object(object) = &t else {
            panic!("not a time")
        };
        assert_eq!(
            object.field("UTC").map(|v| sprint_value(&v)).as_deref(),
            Some("2024-03-09 06:05:09.0123 +0000 UTC")
        );
        assert_eq!(object.to_value().as_str(), Some("2024-03-09T07:05:09.0123+01:00"));
        assert_eq!(show(call("unixEpoch", std::slice::from_ref(&t))), "1709964309");
        let fields: Vec<String> = ["Year", "Month", "Weekday", "YearDay"]
            .iter()
            .filter_map(|f| object.field(f))
            .map(|v| sprint_value(&v))
            .collect();
        assert_eq!(fields, ["2024", "March", "Saturday", "69"]);
        assert_eq!(show(call("date", &[s("2006"), Value::Int(0)])), "1970");
        assert_eq!(
            show(call("date", &[s("2006-01-02"), Value::Int(1_700_000_000)])),
            "2023-11-14"
        );
        assert_eq!(show(call("htmlDate", &[Value::Int(0)])), "1970-01-01");
        assert_eq!(
            show(call("htmlDateInZone", &[Value::Int(0), s("Asia/Tokyo")])),
            "1970-01-01"
        );
        assert_eq!(
            show(call(
                "dateInZone",
                &[s("2006-01-02 15:04 MST"), Value::Int(0), s("Bad/Zone")]
            )),
            "1970-01-01 00:00 UTC"
        );
        assert_eq!(
            show(call(
                "dateInZone",
                &[s("15:04 MST -07:00"), Value::Int(0), s("America/New_York")]
            )),
            "19:00 EST -05:00"
        );
        let zones = [
            ("asia/tokyo", 0, "00:00 UTC"),
            ("Asia/Tokyo", 0, "09:00 JST"),
            ("local", 0, "00:00 UTC"),
            ("EST5EDT", 0, "19:00 EST"),
            ("Etc/GMT+3", 0, "21:00 -03"),
            ("Europe/Dublin", 1_700_000_000, "22:13 GMT"),
            ("Africa/Casablanca", 0, "00:00 +00"),
        ];
        for (zone, secs, expected) in zones {
            assert_eq!(
                show(call("dateInZone", &[s("15:04 MST"), Value::Int(secs), s(zone)])),
                expected,
                "{zone}"
            );
        }
        assert_eq!(
            show(call(
                "dateInZone",
                &[
                    s("15:04 MST Z07:00"),
                    Value::Int(1_720_000_000),
                    s("Australia/Lord_Howe")
                ]
            )),
            "20:16 +1030 +10:30"
        );
        let may = to_date("2006-01-02", "2020-05-06");
        assert_eq!(
            show(call("htmlDateInZone", &[may, s("Pacific/Auckland")])),
            "2020-05-06"
        );
        assert_eq!(show(call("date", &[s("2006"), s("notatime")])).len(), 4);
    }

    #[test]
    fn parsing_matches_helm() {
        if !local_is_utc() {
            return;
        }
        let must = |layout: &str, text: &str| show(call("mustToDate", &[s(layout), s(text)]));
        let errors = [
            ("2024-02-30", "parsing time \"2024-02-30\": day out of range"),
            ("2024-13-01", "parsing time \"2024-13-01\": month out of range"),
            (
                "",
                "parsing time \"\" as \"2006-01-02\": cannot parse \"\" as \"2006\"",
            ),
            (
                "2024-01-02 extra",
                "parsing time \"2024-01-02 extra\": extra text: \" extra\"",
            ),
            (
                "2024-1-02",
                "parsing time \"2024-1-02\" as \"2006-01-02\": cannot parse \"1-02\" as \"01\"",
            ),
            (
                "10:61",
                "parsing time \"10:61\" as \"2006-01-02\": cannot parse \"10:61\" as \"2006\"",
            ),
            (
                "2024-01-02 +05:30x",
                "parsing time \"2024-01-02 +05:30x\": extra text: \" +05:30x\"",
            ),
            (
                "2024 ñ",
                "parsing time \"2024 \\xc3\\xb1\" as \"2006-01-02\": cannot parse \" \\xc3\\xb1\" as \"-\"",
            ),
        ];
        for (text, message) in errors {
            assert_eq!(must("2006-01-02", text), format!("ERROR: {message}"), "{text}");
            assert_eq!(
                show(call("toDate", &[s("2006-01-02"), s(text)])),
                "0001-01-01 00:00:00 +0000 UTC"
            );
        }
        assert_eq!(
            must("15:04", "10:61"),
            "ERROR: parsing time \"10:61\": minute out of range"
        );
        assert_eq!(must("15:04 MST", "10:01 PDT"), "0000-01-01 10:01:00 +0000 PDT");
        assert_eq!(must("15:04 MST", "10:01 UTC"), "0000-01-01 10:01:00 +0000 UTC");
        assert_eq!(
            must("15:04 MST", "10:01 GMT+3"),
            "0000-01-01 13:01:00 +0300 GMT+3"
        );
        assert_eq!(
            must("2006-01-02 15:04 -07:00", "2024-07-01 10:01 +00:00"),
            "2024-07-01 10:01:00 +0000 UTC"
        );
        assert_eq!(must("Jan _2 3PM", "Feb  3 12AM"), "0000-02-03 00:00:00 +0000 UTC");
        assert_eq!(must("002 2006", "060 2024"), "2024-02-29 00:00:00 +0000 UTC");
        assert_eq!(
            must("15:04:05", "10:01:02.123456789123"),
            "0000-01-01 10:01:02.123456789 +0000 UTC"
        );
        assert_eq!(
            show(call("toDate", &[s("2006-01-02"), s("2024-02-29")])),
            "2024-02-29 00:00:00 +0000 UTC"
        );
        assert_eq!(
            show(call(
                "toDate",
                &[s("2006-01-02 15:04:05 -0700"), s("2024-02-29 10:11:12 +0530")]
            )),
            "2024-02-29 10:11:12 +0530 +0530"
        );
    }

    #[test]
    fn durations_match_helm() {
        let seconds = [
            "0",
            "1",
            "59",
            "60",
            "3600",
            "3661",
            "86400",
            "-90",
            "99999999999999999999",
            "x",
            "9223372036",
            "9223372037",
        ];
        let expected = [
            "0s",
            "1s",
            "59s",
            "1m0s",
            "1h0m0s",
            "1h1m1s",
            "24h0m0s",
            "-1m30s",
            "-1s",
            "0s",
            "2562047h47m16s",
            "-2562047h47m16.709551616s",
        ];
        for (input, output) in seconds.iter().zip(expected) {
            assert_eq!(show(call("duration", &[s(input)])), output, "{input}");
        }
        assert_eq!(show(call("duration", &[Value::Int(95)])), "1m35s");
        assert_eq!(show(call("duration", &[Value::Float(1.5)])), "0s");

        let base = to_date("2006", "2020");
        let modifiers = [
            ("1ns", "2020-01-01T00:00:00.000000001", "0s"),
            ("1.5us", "2020-01-01T00:00:00.0000015", "0s"),
            ("999999ns", "2020-01-01T00:00:00.000999999", "0s"),
            ("1.000001ms", "2020-01-01T00:00:00.001000001", "0s"),
            ("1m30.5s", "2020-01-01T00:01:30.5", "1m"),
            ("-2h45m", "2019-12-31T21:15:00", "2h"),
            ("300ms", "2020-01-01T00:00:00.3", "0s"),
            ("3.6e3s", "2020-01-01T00:00:00", "0s"),
            ("1h1h", "2020-01-01T02:00:00", "2h"),
            ("26h", "2020-01-02T02:00:00", "1d"),
            ("1y", "2020-01-01T00:00:00", "0s"),
            (".5h", "2020-01-01T00:30:00", "30m"),
            ("-0", "2020-01-01T00:00:00", "0s"),
            ("+5m", "2020-01-01T00:05:00", "5m"),
            ("1.0000000001s", "2020-01-01T00:00:01", "0s"),
            ("2540400h10m10.000000000s", "2309-10-23T00:10:10", "290y"),
        ];
        for (modifier, date, round) in modifiers {
            let moved = call("dateModify", &[s(modifier), base.clone()]).unwrap_or(Value::Nil);
            assert_eq!(
                show(call("date", &[s("2006-01-02T15:04:05.999999999"), moved])),
                date,
                "{modifier}"
            );
            assert_eq!(show(call("durationRound", &[s(modifier)])), round, "{modifier}");
        }
        let must = |modifier: &str| show(call("mustDateModify", &[s(modifier), base.clone()]));
        let errors = [
            ("", "time: invalid duration \"\""),
            ("1y", "time: unknown unit \"y\" in duration \"1y\""),
            ("x", "time: invalid duration \"x\""),
            ("1", "time: missing unit in duration \"1\""),
            (".s", "time: invalid duration \".s\""),
            ("-", "time: invalid duration \"-\""),
            ("9999999999h", "time: invalid duration \"9999999999h\""),
            ("1.5", "time: missing unit in duration \"1.5\""),
            ("1h-1m", "time: unknown unit \"h-\" in duration \"1h-1m\""),
        ];
        for (modifier, message) in errors {
            assert_eq!(must(modifier), format!("ERROR: {message}"), "{modifier}");
        }
        assert_eq!(must("1µs"), "2020-01-01 00:00:00.000001 +0000 UTC");
        assert_eq!(must("1μs"), "2020-01-01 00:00:00.000001 +0000 UTC");
        let rounds = [
            (Value::Int(3_600_000_000_001), "1h"),
            (Value::Int(-3_600_000_000_001), "1h"),
            (s("8761h"), "1y"),
            (s("721h"), "1mo"),
            (s("24h"), "24h"),
            (s("24h1ns"), "1d"),
            (s("1s"), "0s"),
            (s("1.1s"), "1s"),
        ];
        for (input, output) in rounds {
            assert_eq!(show(call("durationRound", &[input])), output);
        }
        assert_eq!(
            show(call("dateModify", &[s("1h"), s("2020")])),
            "ERROR: wrong type for value; expected time.Time; got string"
        );
    }

    #[test]
    fn now_and_ago() {
        let now = call("now", &[]).unwrap_or(Value::Nil);
        let printed = sprint_value(&now);
        assert!(printed.contains(" m=+"), "{printed}");
        assert_eq!(now.type_name(), "time.Time");
        assert_eq!(show(call("ago", std::slice::from_ref(&now))), "0s");
        let moved = call("dateModify", &[s("1h"), now]).unwrap_or(Value::Nil);
        assert_eq!(moved.type_name(), "time.Time");
        assert!(show(call("ago", &[to_date("2006", "2020")])).len() > 5);
        assert_eq!(duration_string(1_500), "1.5µs");
        assert_eq!(duration_string(-1), "-1ns");
        assert_eq!(duration_string(i64::MIN), "-2562047h47m16.854775808s");
    }
}
