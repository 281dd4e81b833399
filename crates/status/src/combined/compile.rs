//! Compiling a status collector's CEL expressions (once, at create and when a collector is loaded): a syntax
//! error or a variable other than the seed's (`inventory`, `obj`, `returned`, `propagation`) is refused naming the
//! field, the expression and the line:column.

use std::sync::Arc;

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use cel::{Env, Program};
use emco_model::status_collector::{AggregateKind, StatusCollectorSpec};

/// The variables an expression may use (seed 003's queryable objects).
pub const VARIABLES: [&str; 4] = ["inventory", "obj", "returned", "propagation"];

/// CEL's type names, which an expression may use as identifiers (`type(x) == int`).
const TYPE_NAMES: [&str; 11] = [
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
];

/// Why an expression does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// CEL's parser refused it.
    #[error("{field}: '{expression}' does not compile at {line}:{column}: {message}")]
    Syntax {
        /// The field (`spec.select[1].def`).
        field: String,
        /// The expression.
        expression: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// CEL's message.
        message: String,
    },
    /// It names a variable that does not exist.
    #[error(
        "{field}: '{expression}' uses unknown variable '{variable}' at {line}:{column}; the variables are inventory, obj, returned and propagation"
    )]
    UnknownVariable {
        /// The field.
        field: String,
        /// The expression.
        expression: String,
        /// The unknown name.
        variable: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
}

/// One compiled expression with where it came from.
#[derive(Debug)]
pub struct Compiled {
    /// The field that holds it (`spec.filter`).
    pub field: String,
    /// Its text.
    pub source: String,
    /// The program.
    pub program: Program,
}

/// A compiled status collector.
#[derive(Debug)]
pub struct CompiledCollector {
    /// The collector's name.
    pub name: String,
    /// `spec.filter`.
    pub filter: Option<Compiled>,
    /// `spec.select` (plain selection) or `spec.groupBy` (aggregation) expressions, in column order.
    pub columns: Vec<Compiled>,
    /// Whether this is an aggregation (`combinedFields` given).
    pub aggregates: bool,
    /// `spec.combinedFields`: the function and the compiled subject (none for COUNT).
    pub combined: Vec<(AggregateKind, Option<Compiled>)>,
    /// The output column names.
    pub column_names: Vec<String>,
    /// At most this many rows.
    pub limit: usize,
}

/// The CEL environment every collector is compiled and run in: the standard library with its macros.
#[must_use]
pub fn environment() -> Arc<Env> {
    Arc::new(Env::stdlib())
}

/// Compiles every expression of `spec` in `env`.
pub fn compile_collector(
    env: &Env,
    name: &str,
    spec: &StatusCollectorSpec,
) -> Result<CompiledCollector, CompileError> {
    let filter = spec
        .filter
        .as_deref()
        .map(|source| compile_expression(env, "spec.filter", source))
        .transpose()?;
    let (list, columns) = if spec.select.is_empty() {
        ("groupBy", &spec.group_by)
    } else {
        ("select", &spec.select)
    };
    let columns = columns
        .iter()
        .enumerate()
        .map(|(i, column)| compile_expression(env, &format!("spec.{list}[{i}].def"), &column.def))
        .collect::<Result<Vec<_>, _>>()?;
    let combined = spec
        .combined_fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let subject = field
                .subject
                .as_deref()
                .map(|source| compile_expression(env, &format!("spec.combinedFields[{i}].subject"), source))
                .transpose()?;
            Ok((field.kind, subject))
        })
        .collect::<Result<Vec<_>, CompileError>>()?;
    Ok(CompiledCollector {
        name: name.to_string(),
        filter,
        columns,
        aggregates: !spec.combined_fields.is_empty(),
        combined,
        column_names: spec.column_names(),
        limit: spec.limit as usize,
    })
}

/// Compiles one expression and checks its variables.
pub fn compile_expression(env: &Env, field: &str, source: &str) -> Result<Compiled, CompileError> {
    let program = env.compile(source).map_err(|errors| {
        let first = errors.errors.first();
        let (line, column) = first.map_or((1, 1), |error| {
            (
                usize::try_from(error.pos.0).unwrap_or(1).max(1),
                usize::try_from(error.pos.1).unwrap_or(0) + 1,
            )
        });
        CompileError::Syntax {
            field: field.to_string(),
            expression: source.to_string(),
            line,
            column,
            message: first.map_or_else(|| errors.to_string(), |error| error.msg.clone()),
        }
    })?;
    let mut bound = Vec::new();
    if let Some((id, variable)) = unknown_variable(program.expression(), &mut bound) {
        let offset = program
            .source_info()
            .offset_for(id)
            .map_or(0, |(start, _)| start as usize);
        let (line, column) = line_column(source, offset);
        return Err(CompileError::UnknownVariable {
            field: field.to_string(),
            expression: source.to_string(),
            variable,
            line,
            column,
        });
    }
    Ok(Compiled {
        field: field.to_string(),
        source: source.to_string(),
        program,
    })
}

/// The 1-based line and column of a character offset.
fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let mut line = 1;
    let mut column = 1;
    for c in source.chars().take(offset) {
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    (line, column)
}

/// The first identifier that is neither a seed variable, a CEL type name, nor bound by an enclosing macro.
fn unknown_variable(expr: &IdedExpr, bound: &mut Vec<String>) -> Option<(u64, String)> {
    match &expr.expr {
        Expr::Ident(name) => {
            let known = name.starts_with('@')
                || VARIABLES.contains(&name.as_str())
                || TYPE_NAMES.contains(&name.as_str())
                || bound.iter().any(|b| b == name);
            (!known).then(|| (expr.id, name.clone()))
        }
        Expr::Call(call) => call
            .target
            .as_deref()
            .and_then(|target| unknown_variable(target, bound))
            .or_else(|| call.args.iter().find_map(|arg| unknown_variable(arg, bound))),
        Expr::Comprehension(comprehension) => {
            if let Some(found) = unknown_variable(&comprehension.iter_range, bound)
                .or_else(|| unknown_variable(&comprehension.accu_init, bound))
            {
                return Some(found);
            }
            let before = bound.len();
            bound.push(comprehension.iter_var.clone());
            bound.extend(comprehension.iter_var2.clone());
            bound.push(comprehension.accu_var.clone());
            let found = [
                &comprehension.loop_cond,
                &comprehension.loop_step,
                &comprehension.result,
            ]
            .into_iter()
            .find_map(|part| unknown_variable(part, bound));
            bound.truncate(before);
            found
        }
        Expr::List(list) => list
            .elements
            .iter()
            .find_map(|item| unknown_variable(item, bound)),
        Expr::Map(map) => map
            .entries
            .iter()
            .find_map(|entry| entry_unknown(&entry.expr, bound)),
        Expr::Struct(structure) => structure
            .entries
            .iter()
            .find_map(|entry| entry_unknown(&entry.expr, bound)),
        Expr::Select(select) => unknown_variable(&select.operand, bound),
        _ => None,
    }
}

fn entry_unknown(entry: &EntryExpr, bound: &mut Vec<String>) -> Option<(u64, String)> {
    match entry {
        EntryExpr::StructField(field) => unknown_variable(&field.value, bound),
        EntryExpr::MapEntry(map_entry) => {
            unknown_variable(&map_entry.key, bound).or_else(|| unknown_variable(&map_entry.value, bound))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_expressions_compile() {
        let env = environment();
        for source in [
            "returned.status.phase",
            "obj.spec.replicas != returned.status.availableReplicas",
            "inventory.name",
            "propagation.lastReturnedUpdateTimestamp",
            "returned.status.conditions.filter(c, c.type == 'Available').map(c, c.status)",
            "has(returned.status.readyReplicas) ? returned.status.readyReplicas : 0",
            "type(obj.spec.replicas) == int",
        ] {
            compile_expression(&env, "spec.filter", source).unwrap();
        }
    }

    #[test]
    fn a_syntax_error_names_the_field_expression_and_position() {
        let env = environment();
        let err = compile_expression(&env, "spec.select[1].def", "returned.status.phase ==").unwrap_err();
        let CompileError::Syntax {
            field, line, column, ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!((field.as_str(), *line), ("spec.select[1].def", 1));
        assert!(*column > 1, "{err}");
        assert!(err.to_string().contains("'returned.status.phase =='"), "{err}");
    }

    #[test]
    fn an_unknown_variable_is_refused_with_its_position() {
        let env = environment();
        let err = compile_expression(
            &env,
            "spec.filter",
            "obj.spec.replicas > 1 && cluster.name == 'a'",
        )
        .unwrap_err();
        assert_eq!(
            err,
            CompileError::UnknownVariable {
                field: "spec.filter".into(),
                expression: "obj.spec.replicas > 1 && cluster.name == 'a'".into(),
                variable: "cluster".into(),
                line: 1,
                column: 26,
            }
        );
        // A macro's own variable is not unknown inside the macro, but is outside it.
        let err = compile_expression(&env, "spec.filter", "[1].all(x, x > 0) && x").unwrap_err();
        assert!(
            matches!(err, CompileError::UnknownVariable { ref variable, .. } if variable == "x"),
            "{err}"
        );
    }
}
