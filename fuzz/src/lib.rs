//! Helpers shared by the fuzz targets.

use serde_json::Value;

/// Whether two JSON texts hold the same value, numbers compared exactly except floats,
/// which may differ by a few units in the last place.
///
/// serde_json parses floats with its default, best-effort precision (the SDK does not
/// enable `float_roundtrip`), so a float written and read back may come back one unit
/// in the last place away. That is serde_json's documented trade-off, not a bug of
/// the code under test; every other difference is.
pub fn same_json_modulo_float_rounding(a: &[u8], b: &[u8]) -> bool {
    match (
        serde_json::from_slice::<Value>(a),
        serde_json::from_slice::<Value>(b),
    ) {
        (Ok(a), Ok(b)) => same_value_modulo_float_rounding(&a, &b),
        _ => false,
    }
}

/// [`same_json_modulo_float_rounding`] of two values.
pub fn same_value_modulo_float_rounding(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => floats_close(x, y),
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(x, y)| same_value_modulo_float_rounding(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(key, x)| {
                    y.get(key)
                        .is_some_and(|y| same_value_modulo_float_rounding(x, y))
                })
        }
        _ => a == b,
    }
}

/// At most 4 units in the last place apart (same sign).
fn floats_close(x: f64, y: f64) -> bool {
    if x == y {
        return true;
    }
    if x.is_sign_negative() != y.is_sign_negative() {
        return false;
    }
    x.to_bits().abs_diff(y.to_bits()) <= 4
}
