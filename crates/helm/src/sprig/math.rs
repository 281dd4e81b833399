//! Sprig's arithmetic (`add`, `sub`, `mul`, `div`, `mod`, `max`, `min`, `*f` variants, `ceil`, `floor`, `round`,
//! `until`, `untilStep`).
//!
//! Integer functions convert their arguments with cast's `ToInt64` and compute in int64 with Go's wrapping
//! overflow; division by zero is Go's runtime panic, reported as the template error Go gives. The `*f` functions go
//! through shopspring/decimal as Sprig does: each float becomes the decimal of its shortest text, the operation is
//! exact (division rounds to 16 places), and the result converts back to the nearest float64 — so `addf 0.1 0.2`
//! is 0.3.

use crate::gotemplate::Value;
use crate::gotemplate::funcs::{Arity, FuncError, FuncMap, Runtime, param_float, param_int};

use super::conv::{to_float64, to_int64, until_step};

/// Registers this family's functions.
pub(crate) fn register(map: &mut FuncMap) {
    map.add("add1", Arity::Exact(1), add1);
    map.add("add", Arity::AtLeast(0), add);
    map.add("sub", Arity::Exact(2), sub);
    map.add("div", Arity::Exact(2), div);
    map.add("mod", Arity::Exact(2), modulo);
    map.add("mul", Arity::AtLeast(1), mul);
    map.add("add1f", Arity::Exact(1), add1f);
    map.add("addf", Arity::AtLeast(0), addf);
    map.add("subf", Arity::AtLeast(1), subf);
    map.add("divf", Arity::AtLeast(1), divf);
    map.add("mulf", Arity::AtLeast(1), mulf);
    map.add("biggest", Arity::AtLeast(1), max);
    map.add("max", Arity::AtLeast(1), max);
    map.add("min", Arity::AtLeast(1), min);
    map.add("maxf", Arity::AtLeast(1), maxf);
    map.add("minf", Arity::AtLeast(1), minf);
    map.add("ceil", Arity::Exact(1), ceil);
    map.add("floor", Arity::Exact(1), floor);
    map.add("round", Arity::AtLeast(2), round);
    map.add("until", Arity::Exact(1), until);
    map.add("untilStep", Arity::Exact(3), until_step_fn);
}

const DIVIDE_BY_ZERO: &str = "runtime error: integer divide by zero";

fn int_args(args: &[Value]) -> impl Iterator<Item = i64> + '_ {
    args.iter().map(to_int64)
}

fn arg(args: &[Value], index: usize) -> &Value {
    args.get(index).unwrap_or(&Value::Nil)
}

fn add1(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::Int(to_int64(arg(args, 0)).wrapping_add(1)))
}

fn add(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::Int(int_args(args).fold(0i64, i64::wrapping_add)))
}

fn sub(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::Int(
        to_int64(arg(args, 0)).wrapping_sub(to_int64(arg(args, 1))),
    ))
}

fn div(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let divisor = to_int64(arg(args, 1));
    if divisor == 0 {
        return Err(FuncError::new(DIVIDE_BY_ZERO));
    }
    Ok(Value::Int(to_int64(arg(args, 0)).wrapping_div(divisor)))
}

fn modulo(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let divisor = to_int64(arg(args, 1));
    if divisor == 0 {
        return Err(FuncError::new(DIVIDE_BY_ZERO));
    }
    Ok(Value::Int(to_int64(arg(args, 0)).wrapping_rem(divisor)))
}

fn mul(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut ints = int_args(args);
    let first = ints.next().unwrap_or(0);
    Ok(Value::Int(ints.fold(first, i64::wrapping_mul)))
}

fn max(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut ints = int_args(args);
    let first = ints.next().unwrap_or(0);
    Ok(Value::Int(ints.fold(first, i64::max)))
}

fn min(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut ints = int_args(args);
    let first = ints.next().unwrap_or(0);
    Ok(Value::Int(ints.fold(first, i64::min)))
}

/// Go's `math.Max`: NaN wins, +0 beats -0.
fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_negative() { b } else { a }
    } else {
        a.max(b)
    }
}

/// Go's `math.Min`: NaN wins, -0 beats +0.
fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_negative() { a } else { b }
    } else {
        a.min(b)
    }
}

fn maxf(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut floats = args.iter().map(to_float64);
    let first = floats.next().unwrap_or(0.0);
    Ok(Value::Float(floats.fold(first, go_max)))
}

fn minf(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let mut floats = args.iter().map(to_float64);
    let first = floats.next().unwrap_or(0.0);
    Ok(Value::Float(floats.fold(first, go_min)))
}

fn ceil(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::Float(to_float64(arg(args, 0)).ceil()))
}

fn floor(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::Float(to_float64(arg(args, 0)).floor()))
}

/// `round VALUE PLACES [ROUND_ON]`: Sprig's rounding — up when the fraction at that place is at least ROUND_ON
/// (0.5 by default), else down.
fn round(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let places = param_int(arg(args, 1))?;
    let round_on = match args.get(2) {
        Some(value) => param_float(value)?,
        None => 0.5,
    };
    for extra in args.iter().skip(3) {
        param_float(extra)?;
    }
    let value = to_float64(arg(args, 0));
    let pow = 10f64.powf(places as f64);
    let digit = pow * value;
    let fraction = digit.fract();
    let rounded = if fraction >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    Ok(Value::Float(rounded / pow))
}

fn until(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let count = param_int(arg(args, 0))?;
    let step = if count < 0 { -1 } else { 1 };
    let items = until_step("until", 0, count, step)?;
    Ok(Value::list(items.into_iter().map(Value::Int).collect()))
}

fn until_step_fn(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    let start = param_int(arg(args, 0))?;
    let stop = param_int(arg(args, 1))?;
    let step = param_int(arg(args, 2))?;
    let items = until_step("untilStep", start, stop, step)?;
    Ok(Value::list(items.into_iter().map(Value::Int).collect()))
}

/// A decimal `mantissa × 10^exponent`, exact while it fits in an i128 (the operations fall back to float64
/// arithmetic past that, far beyond what a chart computes).
#[derive(Debug, Clone, Copy)]
struct Decimal {
    mantissa: i128,
    exponent: i32,
}

/// shopspring/decimal's `DivisionPrecision`.
const DIVISION_PRECISION: i32 = 16;

impl Decimal {
    /// `decimal.NewFromFloat`: the decimal of the float's shortest round-trip text.
    fn from_f64(float: f64) -> Result<Self, FuncError> {
        if float.is_nan() {
            return Err(FuncError::new("Cannot create a Decimal from NaN"));
        }
        if float.is_infinite() {
            let sign = if float > 0.0 { "+Inf" } else { "-Inf" };
            return Err(FuncError::new(format!("Cannot create a Decimal from {sign}")));
        }
        let text = format!("{float:e}");
        let (mantissa_text, exponent_text) = text.split_once('e').unwrap_or((&text, "0"));
        let exponent: i32 = exponent_text.parse().unwrap_or(0);
        let (negative, digits) = match mantissa_text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, mantissa_text),
        };
        let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
        let all: String = format!("{int_part}{frac_part}");
        let mut mantissa: i128 = all.parse().unwrap_or(0);
        if negative {
            mantissa = -mantissa;
        }
        Ok(Self {
            mantissa,
            exponent: exponent - frac_part.len() as i32,
        })
    }

    fn to_f64(self) -> f64 {
        format!("{}e{}", self.mantissa, self.exponent)
            .parse()
            .unwrap_or(f64::NAN)
    }

    fn pow10(exponent: u32) -> Option<i128> {
        10i128.checked_pow(exponent)
    }

    /// Both mantissas at the smaller exponent.
    fn align(self, other: Self) -> Option<(i128, i128, i32)> {
        let exponent = self.exponent.min(other.exponent);
        let scale = |from: i32| {
            u32::try_from(i64::from(from) - i64::from(exponent))
                .ok()
                .and_then(Self::pow10)
        };
        let left = self.mantissa.checked_mul(scale(self.exponent)?)?;
        let right = other.mantissa.checked_mul(scale(other.exponent)?)?;
        Some((left, right, exponent))
    }

    fn add(self, other: Self) -> Option<Self> {
        let (left, right, exponent) = self.align(other)?;
        Some(Self {
            mantissa: left.checked_add(right)?,
            exponent,
        })
    }

    fn sub(self, other: Self) -> Option<Self> {
        let (left, right, exponent) = self.align(other)?;
        Some(Self {
            mantissa: left.checked_sub(right)?,
            exponent,
        })
    }

    fn mul(self, other: Self) -> Option<Self> {
        Some(Self {
            mantissa: self.mantissa.checked_mul(other.mantissa)?,
            exponent: self.exponent.checked_add(other.exponent)?,
        })
    }

    /// `Div`: the quotient rounded half away from zero to 16 decimal places.
    fn div(self, other: Self) -> Option<Self> {
        let shift = self
            .exponent
            .checked_sub(other.exponent)?
            .checked_add(DIVISION_PRECISION)?;
        let scale = Self::pow10(shift.unsigned_abs())?;
        let (numerator, denominator) = if shift >= 0 {
            (self.mantissa.checked_mul(scale)?, other.mantissa)
        } else {
            (self.mantissa, other.mantissa.checked_mul(scale)?)
        };
        let mut quotient = numerator.checked_div(denominator)?;
        let remainder = numerator.checked_rem(denominator)?;
        if remainder.checked_abs()?.checked_mul(2)? >= denominator.checked_abs()? {
            quotient += if (numerator < 0) == (denominator < 0) {
                1
            } else {
                -1
            };
        }
        Some(Self {
            mantissa: quotient,
            exponent: -DIVISION_PRECISION,
        })
    }
}

#[derive(Clone, Copy)]
enum DecimalOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// Sprig's `execDecimalOp`: folds `rest` into `first` with `op` in decimal arithmetic.
fn exec_decimal_op(first: &Value, rest: &[Value], op: DecimalOp) -> Result<Value, FuncError> {
    let mut acc = Decimal::from_f64(to_float64(first))?;
    // Past i128 the value is kept as a float instead.
    let mut overflowed: Option<f64> = None;
    for value in rest {
        let operand_float = to_float64(value);
        let operand = Decimal::from_f64(operand_float)?;
        if matches!(op, DecimalOp::Div) && operand.mantissa == 0 {
            return Err(FuncError::new("decimal division by 0"));
        }
        if let Some(float) = overflowed.as_mut() {
            *float = float_op(*float, operand_float, op);
            continue;
        }
        let next = match op {
            DecimalOp::Add => acc.add(operand),
            DecimalOp::Sub => acc.sub(operand),
            DecimalOp::Mul => acc.mul(operand),
            DecimalOp::Div => acc.div(operand),
        };
        match next {
            Some(next) => acc = next,
            None => overflowed = Some(float_op(acc.to_f64(), operand_float, op)),
        }
    }
    Ok(Value::Float(overflowed.unwrap_or_else(|| acc.to_f64())))
}

fn float_op(left: f64, right: f64, op: DecimalOp) -> f64 {
    match op {
        DecimalOp::Add => left + right,
        DecimalOp::Sub => left - right,
        DecimalOp::Mul => left * right,
        DecimalOp::Div => left / right,
    }
}

fn add1f(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    exec_decimal_op(arg(args, 0), &[Value::Int(1)], DecimalOp::Add)
}

fn addf(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    exec_decimal_op(&Value::Float(0.0), args, DecimalOp::Add)
}

fn subf(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    exec_decimal_op(arg(args, 0), args.get(1..).unwrap_or(&[]), DecimalOp::Sub)
}

fn divf(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    exec_decimal_op(arg(args, 0), args.get(1..).unwrap_or(&[]), DecimalOp::Div)
}

fn mulf(_: &mut dyn Runtime, args: &[Value]) -> Result<Value, FuncError> {
    exec_decimal_op(arg(args, 0), args.get(1..).unwrap_or(&[]), DecimalOp::Mul)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sprig::conv::test_support::*;

    #[test]
    fn integer_arithmetic_wraps_like_int64() {
        // Expected values printed by Helm v4.2.3.
        let cases: &[(&str, Vec<Value>, i64)] = &[
            ("add1", vec![i(1)], 2),
            ("add", vec![i(1), i(2), i(3)], 6),
            ("add", vec![], 0),
            ("add", vec![Value::from("3"), f(1.9)], 4),
            ("sub", vec![i(5), i(7)], -2),
            ("div", vec![i(7), i(2)], 3),
            ("div", vec![i(-7), i(2)], -3),
            ("mod", vec![i(-7), i(2)], -1),
            ("mul", vec![i(2), i(3), i(4)], 24),
            ("mul", vec![i(5)], 5),
            ("add", vec![i(i64::MAX), i(1)], i64::MIN),
            ("mul", vec![i(i64::MAX), i(2)], -2),
            ("sub", vec![i(i64::MIN), i(1)], i64::MAX),
            ("div", vec![i(i64::MIN), i(-1)], i64::MIN),
            ("mod", vec![i(i64::MIN), i(-1)], 0),
            ("max", vec![i(1), i(5), i(3)], 5),
            ("min", vec![i(4), i(2), i(8)], 2),
            ("biggest", vec![i(1), i(9)], 9),
            ("max", vec![f(1.9), i(1)], 1),
        ];
        for (name, args, want) in cases {
            assert_eq!(call(name, args), ok(i(*want)), "{name} {args:?}");
        }
        for name in ["div", "mod"] {
            assert_eq!(
                call(name, &[i(1), i(0)]),
                err("runtime error: integer divide by zero")
            );
        }
    }

    #[test]
    fn float_arithmetic_goes_through_decimals() {
        let cases: &[(&str, Vec<Value>, f64)] = &[
            ("add1f", vec![f(1.5)], 2.5),
            ("addf", vec![f(1.1), f(2.2)], 3.3),
            ("subf", vec![i(5), f(1.5), i(1)], 2.5),
            ("divf", vec![i(1), i(3)], 0.333_333_333_333_333_3),
            ("mulf", vec![f(1.1), i(3)], 3.3),
            ("addf", vec![], 0.0),
            ("add1f", vec![Value::from("x")], 1.0),
            ("addf", vec![f(0.1), f(0.2)], 0.3),
            ("mulf", vec![f(0.1), i(3)], 0.3),
            ("subf", vec![f(0.3), f(0.1)], 0.2),
            ("divf", vec![i(2), i(3)], 0.666_666_666_666_666_7),
            ("divf", vec![i(-2), i(3)], -0.666_666_666_666_666_7),
            ("divf", vec![i(1), i(7)], 0.142_857_142_857_142_9),
            ("addf", vec![f(1e20), f(1e-20)], 1e20),
            ("maxf", vec![f(1.5), f(2.5)], 2.5),
            ("minf", vec![f(1.5), i(-2)], -2.0),
            ("ceil", vec![f(1.2)], 2.0),
            ("floor", vec![f(1.8)], 1.0),
            ("ceil", vec![Value::from("1.5")], 2.0),
            ("round", vec![f(1.2345), i(2)], 1.23),
            ("round", vec![f(1.5), i(0)], 2.0),
            ("round", vec![f(2.5), i(0)], 3.0),
            ("round", vec![f(-1.5), i(0)], -2.0),
            ("round", vec![f(1.25), i(1), f(0.6)], 1.2),
            ("round", vec![f(123.456), i(-1)], 120.0),
        ];
        for (name, args, want) in cases {
            assert_eq!(call(name, args), ok(f(*want)), "{name} {args:?}");
        }
        assert_eq!(call("mulf", &[f(1e200), f(1e200)]), ok(f64::INFINITY));
        assert_eq!(call("divf", &[i(1), i(0)]), err("decimal division by 0"));
        assert_eq!(
            call("add1f", &[f(f64::NAN)]),
            err("Cannot create a Decimal from NaN")
        );
    }

    #[test]
    fn ranges_are_bounded() {
        let list = |items: &[i64]| ok(Value::list(items.iter().map(|x| i(*x)).collect()));
        assert_eq!(call("until", &[i(3)]), list(&[0, 1, 2]));
        assert_eq!(call("until", &[i(-3)]), list(&[0, -1, -2]));
        assert_eq!(call("until", &[i(0)]), list(&[]));
        assert_eq!(call("untilStep", &[i(0), i(10), i(3)]), list(&[0, 3, 6, 9]));
        assert_eq!(call("untilStep", &[i(10), i(0), i(-3)]), list(&[10, 7, 4, 1]));
        assert_eq!(call("untilStep", &[i(0), i(10), i(0)]), list(&[]));
        assert_eq!(call("untilStep", &[i(0), i(10), i(-1)]), list(&[]));
        assert!(call("until", &[i(1_000_000_000_000)]).starts_with("error: until: list of"));
        assert!(call("untilStep", &[i(i64::MIN), i(i64::MAX), i(1)]).starts_with("error:"));
        assert_eq!(
            call("until", &[f(2.0)]),
            err("wrong type for value; expected int; got float64")
        );
    }
}
