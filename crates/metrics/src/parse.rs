//! A scorer's `metrics:` parsed into [`MetricSpec`]s: the metric's type from the registry,
//! its keys, what it reads (a field of the scorer, an input column or a template over the
//! row), then its type's own options ([`crate::MetricType::parse`]) and the common keys.

use crate::metric_type::ParseCx;
use crate::registry;
use evalscore_task::{
    did_you_mean, literal_list, FieldKind, MetricInput, MetricReads, MetricSpec, Node,
    PythonMetric, ScorerField, TaskError, TemplateCompiler, TemplateKind,
};

/// Parses a scorer's `metrics:` list ([`parse_metric`] for each entry), then gives unnamed
/// metrics that share a type on the scorer distinct names: `mean(is_correct)`,
/// `mean(score)`; a type that occurs once keeps its type as its name.
pub fn parse_metrics(
    node: Node<'_>,
    fields: &[ScorerField],
    scorer_type: &str,
    compiler: &mut TemplateCompiler,
) -> Result<Vec<MetricSpec>, TaskError> {
    let mut metrics = Vec::new();
    let mut named = Vec::new();
    for m in node.seq("`metrics`")? {
        named.push(m.as_map().is_some_and(|map| map.get("name").is_some()));
        metrics.push(parse_metric(m, fields, scorer_type, compiler)?);
    }
    let unnamed = |t: &str| {
        metrics
            .iter()
            .zip(&named)
            .filter(|(m, &n)| !n && m.metric_type == t)
            .count()
    };
    let shared: Vec<bool> = metrics
        .iter()
        .zip(&named)
        .map(|(m, &n)| !n && unnamed(&m.metric_type) > 1)
        .collect();
    for (m, shared) in metrics.iter_mut().zip(shared) {
        if shared {
            m.name = format!("{}({})", m.metric_type, m.field);
        }
    }
    Ok(metrics)
}

/// Whether a metric input is a template rather than a name.
fn is_template(text: &str) -> bool {
    text.contains("{{") || text.contains("{%")
}

/// Parses one entry of a scorer's `metrics:`; `fields` are the fields the scorer produces,
/// `compiler` the task's, for inputs that are templates.
pub fn parse_metric(
    node: Node<'_>,
    fields: &[ScorerField],
    scorer_type: &str,
    compiler: &mut TemplateCompiler,
) -> Result<MetricSpec, TaskError> {
    let map = node.map("a metric")?;
    let names = registry::type_names();
    let type_node = map.get("type").ok_or_else(|| {
        map.err("metric has no `type`")
            .with_hint(format!("metric types: {}", names.join(", ")))
    })?;
    let metric_type = type_node.scalar_string("type")?;
    let ty = registry::find(&metric_type).ok_or_else(|| {
        let hint = match did_you_mean(&metric_type, &names) {
            Some(s) => format!("did you mean `{s}`? metric types: {}", names.join(", ")),
            None => format!("metric types: {}", names.join(", ")),
        };
        type_node
            .err(format!("unknown metric type `{metric_type}`"))
            .with_hint(hint)
    })?;
    let about = ty.about();
    map.check_keys(&about.keys(), &format!("metric `{metric_type}`"))?;
    let cx = ParseCx {
        map,
        metric_type: &metric_type,
        fields,
        scorer_type,
    };
    let pair = matches!(about.reads, MetricReads::Pair | MetricReads::NumberPair);
    let (field, mut inputs, mut sources) = if pair {
        let (gt, gt_node) = cx.required("field_gt", "ground_truth")?;
        let (pred, pred_node) = cx.required("field_pred", "value")?;
        let (gt_source, gt_kind) = source(&cx, compiler, "field_gt", &gt, gt_node)?;
        let (pred_source, pred_kind) = source(&cx, compiler, "field_pred", &pred, pred_node)?;
        if about.reads == MetricReads::NumberPair {
            check_numeric(&cx, &gt, gt_node, &gt_source, gt_kind)?;
            check_numeric(&cx, &pred, pred_node, &pred_source, pred_kind)?;
        }
        (
            format!("{gt},{pred}"),
            vec![gt, pred],
            vec![gt_source, pred_source],
        )
    } else if about.reads == MetricReads::ScoreTruth {
        let (score, score_node) = cx.required("field", "confidence")?;
        let (truth, truth_node) = cx.required("field_gt", "is_correct")?;
        let (score_source, fk) = source(&cx, compiler, "field", &score, score_node)?;
        check_numeric(&cx, &score, score_node, &score_source, fk)?;
        let (truth_source, fk) = source(&cx, compiler, "field_gt", &truth, truth_node)?;
        check_numeric(&cx, &truth, truth_node, &truth_source, fk)?;
        (
            format!("{score},{truth}"),
            vec![score, truth],
            vec![score_source, truth_source],
        )
    } else if about.reads == MetricReads::Battle {
        verdict_and_pair(&cx, compiler, "model")?
    } else if about.reads == MetricReads::Lengths {
        let (field, mut inputs, mut sources) = verdict_and_pair(&cx, compiler, "output")?;
        // The difficulty, when given, is the fourth input.
        if let Some(n) = cx.get("difficulty") {
            let d = n.scalar_string("difficulty")?;
            let (d_source, fk) = source(&cx, compiler, "difficulty", &d, n)?;
            check_numeric(&cx, &d, n, &d_source, fk)?;
            inputs.push(d);
            sources.push(d_source);
        }
        (field, inputs, sources)
    } else if about.reads == MetricReads::FieldGroup {
        let (field, field_node) = cx.required("field", "is_correct")?;
        let (src, fk) = source(&cx, compiler, "field", &field, field_node)?;
        check_numeric(&cx, &field, field_node, &src, fk)?;
        let (group, group_node) = cx.required("group", "\"{{ sample.problem_id }}\"")?;
        let group_source = source(&cx, compiler, "group", &group, group_node)?.0;
        (field.clone(), vec![field, group], vec![src, group_source])
    } else {
        let (field, field_node) = cx.required("field", "is_correct")?;
        let (src, fk) = source(&cx, compiler, "field", &field, field_node)?;
        if about.reads == MetricReads::Numbers {
            check_numeric(&cx, &field, field_node, &src, fk)?;
        }
        (field.clone(), vec![field], vec![src])
    };
    // A bootstrap reads the row keys as one more input, after what the type reads.
    if about.options.iter().any(|o| o.key == "row_key") && crate::bootstrap::wanted(&cx)? {
        let (text, src) = match cx.get("row_key") {
            Some(n) => {
                let text = n.scalar_string("row_key")?;
                let src = source(&cx, compiler, "row_key", &text, n)?.0;
                (text, src)
            }
            None => {
                let text = crate::bootstrap::DEFAULT_ROW_KEY.to_owned();
                let what = format!("{metric_type}.row_key");
                let column = compiler.column(text.clone(), map.location, &what);
                (text, MetricInput::Column(column))
            }
        };
        inputs.push(text);
        sources.push(src);
    }
    let options = ty.parse(&cx)?;
    let group_by = match map.get("group_by") {
        None => Vec::new(),
        Some(n) => match n.to_json() {
            json @ serde_json::Value::Array(_) => literal_list(&json)
                .ok_or_else(|| n.err("`group_by` must be a list of column names"))?,
            _ => vec![n.scalar_string("group_by")?],
        },
    };
    let name = cx.text("name")?.unwrap_or_else(|| metric_type.clone());
    let key = cx.text("key")?;
    Ok(MetricSpec {
        python: options.get::<PythonMetric>().cloned(),
        name,
        metric_type,
        reads: about.reads,
        field,
        inputs,
        sources,
        group_by,
        key,
        options,
        location: map.location,
    })
}

/// A verdict (`field`) and a pair (`{prefix}_a`, `{prefix}_b`: the models of a battle, or
/// its two answers), each a field, a column or a template: the field's name, the inputs and
/// their sources.
fn verdict_and_pair(
    cx: &ParseCx<'_>,
    compiler: &mut TemplateCompiler,
    prefix: &str,
) -> Result<(String, Vec<String>, Vec<MetricInput>), TaskError> {
    let (field, field_node) = cx.required("field", "winner")?;
    let mut sources = vec![source(cx, compiler, "field", &field, field_node)?.0];
    let mut inputs = vec![field.clone()];
    for side in ["a", "b"] {
        let key = format!("{prefix}_{side}");
        let (text, node) = cx.required(&key, &format!("\"{{{{ sample.{key} }}}}\""))?;
        sources.push(source(cx, compiler, &key, &text, node)?.0);
        inputs.push(text);
    }
    Ok((field, inputs, sources))
}

/// Where a metric input comes from: a scorer field when the scorer has one of that name
/// (with its kind), else a column or a template (no kind: the data's type is known at bind
/// time).
fn source(
    cx: &ParseCx<'_>,
    compiler: &mut TemplateCompiler,
    key: &str,
    text: &str,
    n: Node<'_>,
) -> Result<(MetricInput, Option<FieldKind>), TaskError> {
    if let Some(f) = cx.fields.iter().find(|f| f.name == text) {
        return Ok((MetricInput::Field, Some(f.kind)));
    }
    let what = format!("{}.{key}", cx.metric_type);
    if !is_template(text) {
        return Ok((
            MetricInput::Column(compiler.column(text.to_owned(), n.location, &what)),
            None,
        ));
    }
    let t = compiler.compile(n, &what)?;
    if t.uses_model_output() {
        return Err(n
            .err(format!(
                "template of `{what}` reads the model output, which a metric cannot read"
            ))
            .with_hint(format!(
                "a metric reads the input row (`sample`); the scored text is a field of the scorer: {}",
                cx.field_hint()
            )));
    }
    Ok((MetricInput::Template(t), None))
}

/// A numeric metric's field: not a text field of the scorer, nor a template that gives text.
fn check_numeric(
    cx: &ParseCx<'_>,
    field: &str,
    field_node: Node<'_>,
    src: &MetricInput,
    fk: Option<FieldKind>,
) -> Result<(), TaskError> {
    let (metric_type, scorer_type) = (cx.metric_type, cx.scorer_type);
    let numeric = || -> String {
        let names: Vec<&str> = cx
            .fields
            .iter()
            .filter(|f| f.kind == FieldKind::Number)
            .map(|f| f.name)
            .collect();
        if names.is_empty() {
            format!("scorer `{scorer_type}` has no numeric field")
        } else {
            format!("numeric fields: {}", names.join(", "))
        }
    };
    if fk == Some(FieldKind::Text) {
        return Err(field_node
            .err(format!(
                "metric `{metric_type}` needs a numeric field, and `{field}` of scorer `{scorer_type}` is text"
            ))
            .with_hint(format!(
                "{}; use `frequency` to count text values",
                numeric()
            )));
    }
    if let MetricInput::Template(t) = src {
        if !matches!(t.kind, TemplateKind::Column(_)) {
            return Err(field_node
                .err(format!(
                    "metric `{metric_type}` needs a numeric field, and the template `{field}` gives text"
                ))
                .with_hint(format!(
                    "a template that is one column reference (`{{{{ sample.col }}}}`) reads a numeric column as numbers; {}; use `frequency` to count text values",
                    numeric()
                )));
        }
    }
    Ok(())
}
