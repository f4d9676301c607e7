//! Unit tests of templates: classification, the column-at-a-time plans against minijinja's
//! row-by-row results, and conditions.

use super::*;

/// `source` compiled as a template (or, `condition`, as a condition) of one task, whose
/// environment is finished.
fn compile(source: &str, condition: bool) -> Template {
    let yaml = serde_json::to_string(source).unwrap_or_default();
    let doc = crate::document::parse_yaml(&yaml).unwrap_or_else(|e| panic!("{e}"));
    let node = crate::raw::Node::new(&doc);
    let mut compiler = TemplateCompiler::new();
    let t = if condition {
        compiler.compile_condition(node, "custom.condition")
    } else {
        compiler.compile(node, "string_equals.ground_truth")
    };
    compiler.finish();
    t.unwrap_or_else(|e| panic!("{e}"))
}

mod classify_tests {
    use super::*;

    #[test]
    fn classifies_templates() {
        assert_eq!(classify("YES"), TemplateKind::Literal("YES".into()));
        assert_eq!(
            classify("{{ sample.answer }}"),
            TemplateKind::Column("answer".into())
        );
        assert_eq!(
            classify("{{sample.answer}}"),
            TemplateKind::Column("answer".into())
        );
        assert_eq!(
            classify("{{- sample.answer -}}"),
            TemplateKind::Column("answer".into())
        );
        assert_eq!(
            classify("{{ sample[\"my col\"] }}"),
            TemplateKind::Column("my col".into())
        );
        assert_eq!(
            classify("{{ solver_output.output }}"),
            TemplateKind::ModelOutput
        );
        assert_eq!(
            classify("{{ sample.answer_key | upper }}"),
            TemplateKind::Expression("sample.answer_key | upper".into())
        );
        assert_eq!(
            classify("The country is {{ sample.country }}"),
            TemplateKind::Render
        );
        assert_eq!(classify(" {{ sample.a }}"), TemplateKind::Render);
        assert_eq!(
            classify("{{ sample.a }}{{ sample.b }}"),
            TemplateKind::Render
        );
        assert_eq!(classify("{% if x %}a{% endif %}"), TemplateKind::Render);
    }

    #[test]
    fn finds_statements_that_need_a_loader() {
        assert_eq!(loader_statement("{% include 'a' %}"), Some("include"));
        assert_eq!(loader_statement("x{%- import 'a' as m -%}"), Some("import"));
        assert_eq!(loader_statement("{%+\n from 'a' import b %}"), Some("from"));
        assert_eq!(loader_statement("{%extends 'a'%}"), Some("extends"));
        assert_eq!(loader_statement("{% if included %}{% endif %}"), None);
        assert_eq!(loader_statement("{% for f in from_x %}{% endfor %}"), None);
        assert_eq!(loader_statement("{{ sample.include }} {%"), None);
    }
}

mod vector_tests {
    use super::*;
    use arrow::array::{Array, Int64Array, LargeStringArray, StringArray, StringViewArray};
    use arrow::datatypes::{DataType, Field};

    #[test]
    fn vector_plans() {
        assert_eq!(
            vector_plan("sample.answer | trim"),
            Some(("answer".into(), vec![TextFilter::Trim]))
        );
        assert_eq!(
            vector_plan("sample[\"a b\"]|trim|lower|upper()"),
            Some((
                "a b".into(),
                vec![TextFilter::Trim, TextFilter::Lower, TextFilter::Upper]
            ))
        );
        assert_eq!(vector_plan("sample.answer"), None);
        assert_eq!(vector_plan("sample.answer | trim('x')"), None);
        assert_eq!(vector_plan("sample.answer | title"), None);
        assert_eq!(vector_plan("sample.a ~ sample.b | trim"), None);
    }

    const CELLS: [Option<&str>; 9] = [
        Some("  Yes \n"),
        None,
        Some(""),
        Some("   "),
        Some("ÉCOLE straße İ"),
        Some("a much longer answer that does not fit in a view  "),
        Some("\u{3000}全角\u{3000}"),
        Some("ǅ title-case digraph"),
        Some("x"),
    ];

    /// Every vectorized shape gives exactly what minijinja's per-row evaluation gives, over
    /// the three string layouts, with nulls, whitespace-only, Unicode case and long strings.
    #[test]
    fn vectorized_filters_match_minijinja_row_by_row() {
        let layouts: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(CELLS.to_vec())),
            Arc::new(LargeStringArray::from(CELLS.to_vec())),
            Arc::new(StringViewArray::from(CELLS.to_vec())),
        ];
        for shape in [
            "sample.a | trim",
            "sample.a | lower",
            "sample.a | upper",
            "sample.a | trim | lower",
            "sample.a|upper|trim",
        ] {
            let fast = compile(&format!("{{{{ {shape} }}}}"), false);
            assert!(fast.vector.is_some(), "{shape}");
            let mut slow = fast.clone();
            slow.vector = None;
            for col in &layouts {
                let schema = Schema::new(vec![Field::new("a", col.data_type().clone(), true)]);
                let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::clone(col)]).unwrap();
                let ctx = RowContext {
                    batch: &batch,
                    model_output: None,
                    model_output_raw: None,
                };
                let (TemplateOutput::Array(f), TemplateOutput::Array(s)) =
                    (fast.evaluate(&ctx).unwrap(), slow.evaluate(&ctx).unwrap())
                else {
                    panic!("{shape}: not arrays");
                };
                assert_eq!(f.data_type(), &DataType::Utf8View);
                let f = f.as_any().downcast_ref::<StringViewArray>().unwrap();
                let s = arrow::compute::cast(&s, &DataType::Utf8View).unwrap();
                let s = s.as_any().downcast_ref::<StringViewArray>().unwrap();
                let fv: Vec<Option<&str>> = f.iter().collect();
                let sv: Vec<Option<&str>> = s.iter().collect();
                assert_eq!(fv, sv, "{shape} over {}", col.data_type());
            }
        }
    }

    /// A non-text column takes minijinja's path: `{{ sample.n | trim }}` on integers gives
    /// the numbers' text, as before.
    #[test]
    fn non_text_columns_fall_back_to_row_by_row() {
        let t = compile("{{ sample.n | trim }}", false);
        let schema = Schema::new(vec![Field::new("n", DataType::Int64, true)]);
        let col: ArrayRef = Arc::new(Int64Array::from(vec![Some(3), None]));
        let batch = RecordBatch::try_new(Arc::new(schema), vec![col]).unwrap();
        let ctx = RowContext {
            batch: &batch,
            model_output: None,
            model_output_raw: None,
        };
        let TemplateOutput::Array(out) = t.evaluate(&ctx).unwrap() else {
            panic!("not an array");
        };
        let out = arrow::compute::cast(&out, &DataType::Utf8).unwrap();
        let out = out.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(out.iter().collect::<Vec<_>>(), [Some("3"), None]);
    }
}

mod concat_tests {
    use super::*;
    use arrow::array::{
        Array, BooleanArray, Int32Array, Int64Array, LargeStringArray, StringArray,
        StringViewArray, UInt8Array,
    };
    use arrow::datatypes::{DataType, Field};

    #[test]
    fn concat_plans() {
        use Piece::*;
        assert_eq!(
            concat_plan(
                "Row {{ sample.id }}. Q: {{sample[\"q x\"]}}\nA: {{ solver_output.output }}"
            ),
            Some(vec![
                Text("Row ".into()),
                Column("id".into()),
                Text(". Q: ".into()),
                Column("q x".into()),
                Text("\nA: ".into()),
                ModelOutput,
            ])
        );
        assert_eq!(
            concat_plan("{{ sample.a }}{{ sample.b }}"),
            Some(vec![Column("a".into()), Column("b".into())])
        );
        for other in [
            "no tags",
            "{{ sample.a }}\n",
            "{{- sample.a }} x",
            "x {{ sample.a -}}",
            "x {{+ sample.a }}",
            "x {{ sample.a | upper }}",
            "x {{ sample.a.b }}",
            "x {{ model_output.choices[0].message.content }}",
            "x {% if sample.a %}y{% endif %}",
            "x {# note #} {{ sample.a }}",
            "x }} {{ sample.a }}",
            "x {{ sample.a ",
            "x {{ 'a' }}",
        ] {
            assert_eq!(concat_plan(other), None, "{other}");
        }
    }

    /// Joined a column at a time, a template gives exactly what minijinja's rendering gives
    /// row by row: text in the three layouts, integers of several widths, nulls (a missing
    /// row), empty cells, Unicode, newlines and quotes; and falls back to minijinja for a
    /// column of another type.
    #[test]
    fn joined_columns_match_minijinja_row_by_row() {
        let texts = [
            Some("Paris"),
            None,
            Some(""),
            Some("ÉCOLE «straße» \"q\" {{ x }}"),
            Some("two\nlines\r\n"),
            Some("x"),
        ];
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("s", Arc::new(StringArray::from(texts.to_vec()))),
            ("l", Arc::new(LargeStringArray::from(texts.to_vec()))),
            ("v", Arc::new(StringViewArray::from(texts.to_vec()))),
            (
                "i",
                Arc::new(Int64Array::from(vec![
                    Some(i64::MIN),
                    Some(-7),
                    Some(0),
                    None,
                    Some(42),
                    Some(i64::MAX),
                ])),
            ),
            (
                "j",
                Arc::new(Int32Array::from(vec![
                    Some(1),
                    Some(2),
                    None,
                    Some(-3),
                    Some(4),
                    Some(5),
                ])),
            ),
            (
                "u",
                Arc::new(UInt8Array::from(vec![
                    Some(255),
                    Some(0),
                    Some(1),
                    Some(2),
                    Some(3),
                    None,
                ])),
            ),
            (
                "b",
                Arc::new(BooleanArray::from(vec![
                    Some(true),
                    Some(false),
                    None,
                    Some(true),
                    Some(true),
                    Some(false),
                ])),
            ),
        ];
        let fields: Vec<Field> = columns
            .iter()
            .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
            .collect();
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(fields)),
            columns.iter().map(|(_, c)| Arc::clone(c)).collect(),
        )
        .unwrap();
        let output: ArrayRef = Arc::new(StringViewArray::from(vec![
            Some("The answer is Paris."),
            Some("no"),
            Some("ok"),
            None,
            Some(""),
            Some("é"),
        ]));
        let ctx = RowContext {
            batch: &batch,
            model_output: Some(&output),
            model_output_raw: Some(&output),
        };
        for template in [
            "Row {{ sample.i }}. Question: {{ sample.s }}\nResponse: {{ solver_output.output }}",
            "{{ sample.l }}|{{ sample.v }}",
            "[{{ sample.j }}] [{{ sample.u }}] {{ sample['s'] }} done",
            "{{ sample.i }}{{ sample.i }}",
            "flag {{ sample.b }}: {{ sample.s }}",
        ] {
            let fast = compile(template, false);
            assert!(fast.concat.is_some(), "{template}");
            let mut slow = fast.clone();
            slow.concat = None;
            let (TemplateOutput::Array(f), TemplateOutput::Array(s)) =
                (fast.evaluate(&ctx).unwrap(), slow.evaluate(&ctx).unwrap())
            else {
                panic!("{template}: not arrays");
            };
            assert_eq!(f.data_type(), s.data_type(), "{template}");
            let f = f.as_any().downcast_ref::<StringArray>().unwrap();
            let s = s.as_any().downcast_ref::<StringArray>().unwrap();
            let fv: Vec<Option<&str>> = f.iter().collect();
            let sv: Vec<Option<&str>> = s.iter().collect();
            assert_eq!(fv, sv, "{template}");
            assert!(sv.iter().any(Option::is_none) && sv.iter().any(Option::is_some));
        }
        // A Boolean column is not joined (minijinja writes it), with the same result.
        let pieces = concat_plan("flag {{ sample.b }}").unwrap();
        assert!(concat_column(&pieces, &ctx).is_none());
        assert_eq!(
            concat_column(&concat_plan("{{ sample.i }}").unwrap(), &ctx)
                .unwrap()
                .data_type(),
            &DataType::Utf8
        );
    }
}

mod condition_tests {
    use super::*;
    use arrow::array::StringArray;
    use arrow::datatypes::{DataType, Field};

    /// A condition sees `value`, `ground_truth`, `sample` and `solver_output.output` together
    /// (the row's own variables merged with the shared row context).
    #[test]
    fn condition_sees_value_ground_truth_sample_and_model_output() {
        let condition = compile(
            "value == solver_output.output and ground_truth == sample.answer and sample.answer in value",
            true,
        );
        let output: ArrayRef = Arc::new(StringArray::from(vec![Some("yes!"), Some("no"), None]));
        let answer: ArrayRef =
            Arc::new(StringArray::from(vec![Some("yes"), Some("yes"), Some("x")]));
        let schema = Schema::new(vec![Field::new("answer", DataType::Utf8, true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::clone(&answer)]).unwrap();
        let ctx = RowContext {
            batch: &batch,
            model_output: Some(&output),
            model_output_raw: None,
        };
        let got = condition
            .evaluate_condition(&ctx, output.as_ref(), Some(answer.as_ref()))
            .unwrap();
        assert_eq!(got, [Some(true), Some(false), None]);
    }
}

mod null_list_tests {
    use super::*;
    use arrow::array::{Array, StringArray};
    use arrow::datatypes::{DataType, Field};

    /// `template` over a list<string> column `choices` of [A, null, B], null and [C], as text.
    fn over_choices(template: &str) -> Vec<Option<String>> {
        let mut b = ListBuilder::new(StringBuilder::new());
        b.values().append_value("A");
        b.values().append_null();
        b.values().append_value("B");
        b.append(true);
        b.append(false);
        b.values().append_value("C");
        b.append(true);
        let col: ArrayRef = Arc::new(b.finish());
        let schema = Schema::new(vec![Field::new("choices", col.data_type().clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![col]).unwrap();
        let ctx = RowContext {
            batch: &batch,
            model_output: None,
            model_output_raw: None,
        };
        let TemplateOutput::Array(out) = compile(template, false).evaluate(&ctx).unwrap() else {
            panic!("not an array");
        };
        let out = arrow::compute::cast(&out, &DataType::Utf8).unwrap();
        let out = out.as_any().downcast_ref::<StringArray>().unwrap();
        out.iter().map(|v| v.map(str::to_owned)).collect()
    }

    fn texts(v: &[Option<&str>]) -> Vec<Option<String>> {
        v.iter().map(|t| t.map(str::to_owned)).collect()
    }

    /// A null item joins as the empty text; a null list is missing, in an expression and in
    /// a render alike.
    #[test]
    fn join_reads_a_null_item_as_empty_and_a_null_list_as_missing() {
        assert_eq!(
            over_choices("{{ sample.choices | join('|') }}"),
            texts(&[Some("A||B"), None, Some("C")])
        );
        assert_eq!(
            over_choices("Choices: {{ sample.choices | join(d='|') }}."),
            texts(&[Some("Choices: A||B."), None, Some("Choices: C.")])
        );
        assert_eq!(
            over_choices("{{ sample.choices | join }}"),
            texts(&[Some("AB"), None, Some("C")])
        );
        assert_eq!(
            over_choices("Choices: {{ sample.choices }}"),
            texts(&[
                Some("Choices: ['A', '', 'B']"),
                None,
                Some("Choices: ['C']")
            ])
        );
    }

    /// `tojson` of a null list is missing, not the text `null`; a null item stays JSON null.
    #[test]
    fn tojson_of_a_null_list_is_missing() {
        assert_eq!(
            over_choices("{{ sample.choices | tojson }}"),
            texts(&[Some("[\"A\", null, \"B\"]"), None, Some("[\"C\"]")])
        );
    }
}
