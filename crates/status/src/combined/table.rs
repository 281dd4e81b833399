//! Evaluating a collector: one row per cluster (its variables evaluated once, when its report changes:
//! [`evaluate_row`]) and the combination of the cached rows into the answer's table ([`combine`]) — plain
//! selection, aggregation without grouping (always one row), or grouping (one row per distinct tuple), sorted by
//! value and cut at the limit.

use std::collections::BTreeMap;

use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::{Context, Env, ExecutionError, Value};
use emco_model::status_collector::AggregateKind;
use serde::Serialize;

use super::compile::{Compiled, CompiledCollector};
use super::value::Cell;

/// How many evaluation errors a result lists (all are counted).
pub const MAX_LISTED_ERRORS: usize = 10;

/// The seed's variables of one row (cluster), as CEL values.
#[derive(Debug)]
pub struct RowVariables {
    /// `inventory`: `name` (`provider+cluster`), `provider`, `cluster`, `labels`.
    pub inventory: Box<dyn Val>,
    /// `obj`: the object as staged, without status.
    pub obj: Box<dyn Val>,
    /// `returned`: `status`, as the cluster reported it (absent when it did not).
    pub returned: Box<dyn Val>,
    /// `propagation`: `lastReturnedUpdateTimestamp` (RFC 3339), absent until heard.
    pub propagation: Box<dyn Val>,
}

impl RowVariables {
    /// The variables from CEL values; `None` if one has no runtime form (never for values from JSON).
    #[must_use]
    pub fn new(inventory: Value, obj: Value, returned: Value, propagation: Value) -> Option<Self> {
        Some(Self {
            inventory: inventory.try_into().ok()?,
            obj: obj.try_into().ok()?,
            returned: returned.try_into().ok()?,
            propagation: propagation.try_into().ok()?,
        })
    }
}

impl VariableResolver for RowVariables {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        let value: &dyn Val = match variable {
            "inventory" => self.inventory.as_ref(),
            "obj" => self.obj.as_ref(),
            "returned" => self.returned.as_ref(),
            "propagation" => self.propagation.as_ref(),
            _ => return None,
        };
        Some(CowVal::Borrowed(value))
    }
}

/// One expression that failed on one row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvalError {
    /// The cluster (`provider+cluster`).
    pub cluster: String,
    /// The field of the expression (`spec.combinedFields[0].subject`).
    pub field: String,
    /// The expression.
    pub expression: String,
    /// What went wrong.
    pub message: String,
}

/// What one collector made of one row.
#[derive(Debug, Clone, Default)]
pub struct RowEval {
    /// Whether the filter let it through.
    pub kept: bool,
    /// The select or groupBy values.
    pub columns: Vec<Cell>,
    /// The combined fields' subjects (`Null` for COUNT).
    pub subjects: Vec<Cell>,
    /// The expressions that failed: (field, expression, message).
    pub errors: Vec<(String, String, String)>,
}

/// Evaluates `compiled` on a row: a missing field or `null` is `Null` (no error); other failures are errors and
/// `Null`.
fn evaluate(
    context: &Context<'_, '_>,
    compiled: &Compiled,
    errors: &mut Vec<(String, String, String)>,
) -> Cell {
    match compiled.program.execute(context) {
        Ok(value) => Cell::from_cel(&value).unwrap_or_else(|| {
            errors.push((
                compiled.field.clone(),
                compiled.source.clone(),
                format!("the result ({}) has no JSON form", value.type_of()),
            ));
            Cell::Null
        }),
        Err(ExecutionError::NoSuchKey(_)) => Cell::Null,
        Err(err) => {
            errors.push((compiled.field.clone(), compiled.source.clone(), err.to_string()));
            Cell::Null
        }
    }
}

/// What `collector` makes of the row with `variables`.
#[must_use]
pub fn evaluate_row(
    env: &std::sync::Arc<Env>,
    collector: &CompiledCollector,
    variables: &RowVariables,
) -> RowEval {
    let mut context = Context::with_env(env.clone());
    context.set_variable_resolver(variables);
    let mut errors = Vec::new();
    let kept = match &collector.filter {
        None => true,
        Some(filter) => match evaluate(&context, filter, &mut errors) {
            Cell::Bool(kept) => kept,
            Cell::Null => false,
            other => {
                errors.push((
                    filter.field.clone(),
                    filter.source.clone(),
                    format!("the filter gave a {}, not a Bool", other.type_name()),
                ));
                false
            }
        },
    };
    if !kept {
        return RowEval {
            kept,
            errors,
            ..RowEval::default()
        };
    }
    let columns = collector
        .columns
        .iter()
        .map(|column| evaluate(&context, column, &mut errors))
        .collect();
    let subjects = collector
        .combined
        .iter()
        .map(|(_, subject)| {
            subject
                .as_ref()
                .map_or(Cell::Null, |subject| evaluate(&context, subject, &mut errors))
        })
        .collect();
    RowEval {
        kept,
        columns,
        subjects,
        errors,
    }
}

/// One collector's table.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectorResult {
    /// The collector.
    pub name: String,
    /// The column names.
    pub column_names: Vec<String>,
    /// The rows.
    pub rows: Vec<ResultRow>,
    /// How many expression evaluations failed (absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub evaluation_errors: usize,
    /// The first [`MAX_LISTED_ERRORS`] of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<EvalError>,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// One row of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultRow {
    /// Its values, in column order.
    pub columns: Vec<Cell>,
}

/// An aggregate being accumulated.
#[derive(Debug, Clone, Copy)]
struct Accumulator {
    count: u64,
    numbers: u64,
    sum: f64,
    min: f64,
    max: f64,
}

impl Accumulator {
    const EMPTY: Accumulator = Accumulator {
        count: 0,
        numbers: 0,
        sum: 0.0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
    };

    fn add(&mut self, subject: &Cell) {
        self.count += 1;
        if let Some(number) = subject.as_number() {
            self.numbers += 1;
            self.sum += number;
            self.min = self.min.min(number);
            self.max = self.max.max(number);
        }
    }

    /// The value of `kind` over what was added: COUNT counts rows; the others use the numeric subjects (`Null`
    /// when there were none).
    fn value(&self, kind: AggregateKind) -> Cell {
        #[allow(clippy::cast_precision_loss)]
        let count = self.count as f64;
        #[allow(clippy::cast_precision_loss)]
        let numbers = self.numbers as f64;
        match kind {
            AggregateKind::Count => Cell::Number(count),
            _ if self.numbers == 0 => Cell::Null,
            AggregateKind::Sum => Cell::Number(self.sum),
            AggregateKind::Avg => Cell::Number(self.sum / numbers),
            AggregateKind::Min => Cell::Number(self.min),
            AggregateKind::Max => Cell::Number(self.max),
        }
    }
}

/// Combines the cached rows (cluster → what `collector` made of it) into the collector's table.
#[must_use]
pub fn combine<'a>(
    collector: &CompiledCollector,
    rows: impl Iterator<Item = (&'a str, &'a RowEval)>,
) -> CollectorResult {
    let mut result = CollectorResult {
        name: collector.name.clone(),
        column_names: collector.column_names.clone(),
        ..CollectorResult::default()
    };
    // Rows are borrowed while combining; only what the table shows (at most `limit` rows) is cloned.
    let mut plain: Vec<&'a [Cell]> = Vec::new();
    let mut groups: BTreeMap<&'a [Cell], Vec<Accumulator>> = BTreeMap::new();
    if collector.aggregates && collector.columns.is_empty() {
        // Aggregation without GROUP BY: one row, even over no rows (COUNT 0).
        groups.insert(&[], vec![Accumulator::EMPTY; collector.combined.len()]);
    }
    for (cluster, row) in rows {
        for (field, expression, message) in &row.errors {
            result.evaluation_errors += 1;
            if result.errors.len() < MAX_LISTED_ERRORS {
                result.errors.push(EvalError {
                    cluster: cluster.to_string(),
                    field: field.clone(),
                    expression: expression.clone(),
                    message: message.clone(),
                });
            }
        }
        if !row.kept {
            continue;
        }
        if collector.aggregates {
            let accumulators = groups
                .entry(row.columns.as_slice())
                .or_insert_with(|| vec![Accumulator::EMPTY; collector.combined.len()]);
            for (accumulator, subject) in accumulators.iter_mut().zip(&row.subjects) {
                accumulator.add(subject);
            }
        } else {
            plain.push(row.columns.as_slice());
        }
    }
    if collector.aggregates {
        result.rows = groups
            .into_iter()
            .take(collector.limit)
            .map(|(columns, accumulators)| {
                let mut columns = columns.to_vec();
                columns.extend(
                    accumulators
                        .iter()
                        .zip(&collector.combined)
                        .map(|(accumulator, (kind, _))| accumulator.value(*kind)),
                );
                ResultRow { columns }
            })
            .collect();
    } else {
        plain.sort();
        plain.truncate(collector.limit);
        result.rows = plain
            .into_iter()
            .map(|columns| ResultRow {
                columns: columns.to_vec(),
            })
            .collect();
    }
    result
}

#[cfg(test)]
mod tests {
    use super::super::compile::{compile_collector, environment};
    use super::super::value::json_to_cel;
    use super::*;
    use emco_model::status_collector::StatusCollectorSpec;

    fn spec(json: serde_json::Value) -> StatusCollectorSpec {
        serde_json::from_value(json).unwrap()
    }

    fn variables(cluster: &str, replicas: i64, status: serde_json::Value) -> RowVariables {
        RowVariables::new(
            json_to_cel(
                &serde_json::json!({"name": cluster, "provider": "p", "cluster": cluster, "labels": []}),
            ),
            json_to_cel(&serde_json::json!({"spec": {"replicas": replicas}})),
            json_to_cel(&serde_json::json!({"status": status})),
            json_to_cel(&serde_json::json!({"lastReturnedUpdateTimestamp": "2026-11-23T20:00:00Z"})),
        )
        .unwrap()
    }

    fn table(spec_json: serde_json::Value, rows: &[RowVariables]) -> CollectorResult {
        let env = environment();
        let collector = compile_collector(&env, "c", &spec(spec_json)).unwrap();
        let evals: Vec<(String, RowEval)> = rows
            .iter()
            .enumerate()
            .map(|(i, row)| (format!("p+c{i}"), evaluate_row(&env, &collector, row)))
            .collect();
        combine(&collector, evals.iter().map(|(c, e)| (c.as_str(), e)))
    }

    fn shown(result: &CollectorResult) -> Vec<Vec<String>> {
        result
            .rows
            .iter()
            .map(|row| row.columns.iter().map(Cell::display).collect())
            .collect()
    }

    #[test]
    fn group_by_counts_each_distinct_value_sorted() {
        let rows = [
            variables("a", 2, serde_json::json!({"phase": "Running"})),
            variables("b", 2, serde_json::json!({"phase": "Pending"})),
            variables("c", 2, serde_json::json!({"phase": "Running"})),
            variables("d", 2, serde_json::json!({})),
        ];
        let result = table(
            serde_json::json!({"groupBy": [{"name": "phase", "def": "returned.status.phase"}],
                "combinedFields": [{"name": "count", "type": "COUNT"}]}),
            &rows,
        );
        assert_eq!(result.column_names, ["phase", "count"]);
        // The cluster without a phase is a null group (sorted first), not an error.
        assert_eq!(shown(&result), [["", "1"], ["Pending", "1"], ["Running", "2"]]);
        assert_eq!(result.evaluation_errors, 0);
    }

    #[test]
    fn aggregates_without_group_by_give_one_row_even_over_no_rows() {
        let rows = [
            variables("a", 3, serde_json::json!({"availableReplicas": 1})),
            variables("b", 3, serde_json::json!({"availableReplicas": 3})),
            variables("c", 3, serde_json::json!({"availableReplicas": 2.5})),
        ];
        let all = serde_json::json!({"combinedFields": [
            {"name": "n", "type": "COUNT"},
            {"name": "sum", "type": "SUM", "subject": "returned.status.availableReplicas"},
            {"name": "avg", "type": "AVG", "subject": "returned.status.availableReplicas"},
            {"name": "min", "type": "MIN", "subject": "returned.status.availableReplicas"},
            {"name": "max", "type": "MAX", "subject": "returned.status.availableReplicas"}]});
        assert_eq!(
            shown(&table(all.clone(), &rows)),
            [["3", "6.5", "2.1666666666666665", "1", "3"]]
        );
        let mut none = all;
        none["filter"] = "inventory.name == 'nobody'".into();
        assert_eq!(shown(&table(none, &rows)), [["0", "", "", "", ""]]);
    }

    #[test]
    fn plain_selection_filters_sorts_and_limits() {
        let rows = [
            variables("c", 3, serde_json::json!({"availableReplicas": 1})),
            variables("a", 3, serde_json::json!({"availableReplicas": 3})),
            variables("b", 3, serde_json::json!({})),
            variables("d", 3, serde_json::json!({"availableReplicas": 0})),
        ];
        let result = table(
            serde_json::json!({"filter": "obj.spec.replicas != returned.status.availableReplicas",
                "select": [{"name": "wec", "def": "inventory.name"}], "limit": 1}),
            &rows,
        );
        // b has no availableReplicas: null, so the filter drops it; a is as desired; c and d remain, limit 1.
        assert_eq!(shown(&result), [["c"]]);
        let result = table(
            serde_json::json!({"filter": "obj.spec.replicas != returned.status.availableReplicas",
                "select": [{"name": "wec", "def": "inventory.name"}]}),
            &rows,
        );
        assert_eq!(shown(&result), [["c"], ["d"]]);
    }

    #[test]
    fn evaluation_errors_are_counted_and_listed_with_cluster_and_expression() {
        let rows: Vec<RowVariables> = (0..12)
            .map(|i| variables(&format!("x{i}"), 1, serde_json::json!({"phase": "Running"})))
            .collect();
        let result = table(
            serde_json::json!({"select": [{"name": "bad", "def": "returned.status.phase + 1"}]}),
            &rows,
        );
        assert_eq!(result.evaluation_errors, 12);
        assert_eq!(result.errors.len(), MAX_LISTED_ERRORS);
        assert_eq!(result.errors[0].cluster, "p+c0");
        assert_eq!(result.errors[0].field, "spec.select[0].def");
        assert_eq!(result.errors[0].expression, "returned.status.phase + 1");
        assert_eq!(result.rows.len(), 12, "a failed column is null, the row stays");
    }

    #[test]
    fn integers_from_json_do_arithmetic_with_int_literals() {
        let rows = [variables("a", 2, serde_json::json!({}))];
        let result = table(
            serde_json::json!({"select": [{"name": "next", "def": "obj.spec.replicas + 1"}]}),
            &rows,
        );
        assert_eq!(shown(&result), [["3"]]);
    }
}
