//! Compiling and classifying templates: the environment, the variables a template uses,
//! and the checks made when the task is loaded.

use super::*;

/// Builds the task's template environment and classifies templates as they are added. The
/// templates it gives share one environment, which they can use once [`TemplateCompiler::finish`]
/// has run.
pub struct TemplateCompiler {
    env: Environment<'static>,
    count: usize,
    shared: Arc<OnceLock<Environment<'static>>>,
}

impl std::fmt::Debug for TemplateCompiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TemplateCompiler")
            .field("templates", &self.count)
            .finish_non_exhaustive()
    }
}

impl Default for TemplateCompiler {
    fn default() -> Self {
        TemplateCompiler::new()
    }
}

impl TemplateCompiler {
    pub fn new() -> Self {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_fuel(Some(TEMPLATE_FUEL));
        env.set_recursion_limit(64);
        // No loader is set, so templates cannot include or import anything.
        env.set_formatter(|out, state, value| {
            if value.is_none() {
                return Err(minijinja::Error::new(
                    ErrorKind::InvalidOperation,
                    NULL_MARKER,
                ));
            }
            if has_undefined(value, 0) {
                return Err(minijinja::Error::new(
                    ErrorKind::UndefinedError,
                    UNDEFINED_MESSAGE,
                ));
            }
            // A list printed whole shows a null item as the empty text, as `join` does.
            if value.kind() == ValueKind::Seq
                && value.try_iter().is_ok_and(|mut i| i.any(|v| v.is_none()))
            {
                let items: Vec<Value> = value
                    .try_iter()?
                    .map(|v| if v.is_none() { Value::from("") } else { v })
                    .collect();
                return minijinja::escape_formatter(out, state, &Value::from(items));
            }
            minijinja::escape_formatter(out, state, value)
        });
        add_null_safe_filters(&mut env);
        TemplateCompiler {
            env,
            count: 0,
            shared: Arc::default(),
        }
    }

    /// Hands the finished environment to every template compiled so far.
    pub fn finish(self) {
        // Set once: `self` is consumed here.
        let _ = self.shared.set(self.env);
    }

    /// The template `{{ sample.<name> }}` (a deprecated `*_field` option names the column).
    pub fn column(&self, name: String, location: Option<Location>, what: &str) -> Template {
        self.make_with_columns(
            format!("{{{{ sample.{name} }}}}"),
            location,
            what,
            TemplateKind::Column(name.clone()),
            BTreeSet::from([name]),
            false,
            false,
        )
    }

    /// Compiles the template at `node` (a string, or a YAML list for a literal list).
    pub fn compile(&mut self, node: Node<'_>, what: &str) -> Result<Template, TaskError> {
        let source = match node.tree {
            Tree::Seq(_) => {
                let json = node.tree.to_json();
                let list = crate::value::literal_list(&json)
                    .ok_or_else(|| node.err(format!("`{what}` must be a list of strings")))?;
                return Ok(self.make(
                    json_text(&json),
                    node.location,
                    what,
                    TemplateKind::LiteralList(list),
                ));
            }
            _ => node.scalar_string(what)?,
        };
        let multi_line = source.contains('\n');
        let syntax_err = |e: minijinja::Error| {
            let mut msg = format!(
                "template syntax error in `{what}`: {}",
                e.detail().unwrap_or("invalid template")
            );
            if let Some(line) = e.line() {
                if multi_line {
                    msg.push_str(&format!(" (template line {line})"));
                }
            }
            TaskError::new(msg, node.location)
                .with_hint("templates are Jinja: `{{ sample.column }}`, filters like `{{ sample.answer | upper }}`")
        };
        if let Some(stmt) = loader_statement(&source) {
            return Err(TaskError::new(
                format!(
                    "template of `{what}` uses `{{% {stmt} %}}`, which evalscore does not allow"
                ),
                node.location,
            )
            .with_hint(
                "templates cannot read files: there is no include, import, from or extends",
            ));
        }
        check_depth(&source, false, node, what)?;
        let kind = classify(&source);
        let vars: std::collections::HashSet<String> = match &kind {
            TemplateKind::Literal(_) => Default::default(),
            TemplateKind::Column(c) => {
                return Ok(self.make_with_columns(
                    source.clone(),
                    node.location,
                    what,
                    kind.clone(),
                    [c.clone()].into(),
                    false,
                    false,
                ));
            }
            TemplateKind::ModelOutput => {
                return Ok(self.make_with_columns(
                    source.clone(),
                    node.location,
                    what,
                    kind,
                    BTreeSet::new(),
                    false,
                    true,
                ));
            }
            TemplateKind::Expression(expr) => self
                .env
                .compile_expression(expr)
                .map_err(syntax_err)?
                .undeclared_variables(true),
            TemplateKind::Render => self
                .env
                .template_from_str(&source)
                .map_err(syntax_err)?
                .undeclared_variables(true),
            TemplateKind::LiteralList(_) | TemplateKind::Condition(_) => Default::default(),
        };
        let mut reads = Reads::default();
        for var in &vars {
            match reads.add(var) {
                None => {}
                // Built-in functions (`range`, `dict`, `namespace`, ...) are globals, not data.
                Some(other) if self.env.globals().any(|(name, _)| name == other) => {}
                Some(other) => {
                    return Err(TaskError::new(
                        format!("template of `{what}` uses unknown variable `{other}`"),
                        node.location,
                    )
                    .with_hint("templates see `sample` (the input row), `solver_output.output` (the model output text) and `model_output` (the model output as a chat completion)"))
                }
            }
        }
        let mut t = self.make_reading(source.clone(), node.location, what, kind, reads);
        if t.kind == TemplateKind::Render {
            self.count += 1;
            t.name = format!("{what}#{}", self.count);
            self.env
                .add_template_owned(t.name.clone(), source)
                .map_err(syntax_err)?;
        }
        Ok(t)
    }

    /// Compiles a `custom` scorer's `condition:` (a bare expression, or one wrapped in
    /// `{{ }}`), checking its syntax and the variables it uses.
    pub(crate) fn compile_condition(
        &mut self,
        node: Node<'_>,
        what: &str,
    ) -> Result<Template, TaskError> {
        let source = node.scalar_string(what)?;
        let t = source.trim();
        let expr = t
            .strip_prefix("{{")
            .and_then(|s| s.strip_suffix("}}"))
            .unwrap_or(t)
            .trim()
            .to_owned();
        check_depth(&expr, true, node, what)?;
        let compiled = self.env.compile_expression(&expr).map_err(|e| {
            TaskError::new(
                format!(
                    "syntax error in `{what}`: {}",
                    e.detail().unwrap_or("invalid expression")
                ),
                node.location,
            )
            .with_hint("a condition is a Jinja expression, e.g. `value | length <= 280 and 'sorry' not in value | lower`")
        })?;
        let vars = compiled.undeclared_variables(true);
        let mut reads = Reads::default();
        for var in &vars {
            match reads.add(var) {
                None | Some("value" | "ground_truth") => {}
                Some(other) => {
                    return Err(TaskError::new(
                        format!("`{what}` uses unknown variable `{other}`"),
                        node.location,
                    )
                    .with_hint("a condition sees `value`, `ground_truth`, `sample` (the input row), `solver_output.output` and `model_output`"))
                }
            }
        }
        Ok(self.make_reading(
            source.clone(),
            node.location,
            what,
            TemplateKind::Condition(expr),
            reads,
        ))
    }

    fn make(
        &self,
        source: String,
        location: Option<Location>,
        what: &str,
        kind: TemplateKind,
    ) -> Template {
        self.make_with_columns(source, location, what, kind, BTreeSet::new(), false, false)
    }

    /// [`Self::make_with_columns`] with what `reads` gathered, paths included.
    fn make_reading(
        &self,
        source: String,
        location: Option<Location>,
        what: &str,
        kind: TemplateKind,
        reads: Reads,
    ) -> Template {
        let mut t = self.make_with_columns(
            source,
            location,
            what,
            kind,
            reads.columns,
            reads.all_columns,
            reads.model_output,
        );
        t.paths = reads.paths;
        t
    }

    #[allow(clippy::too_many_arguments)]
    fn make_with_columns(
        &self,
        source: String,
        location: Option<Location>,
        what: &str,
        kind: TemplateKind,
        columns: BTreeSet<String>,
        all_columns: bool,
        model_output: bool,
    ) -> Template {
        let vector = match &kind {
            TemplateKind::Expression(e) => vector_plan(e),
            _ => None,
        };
        let concat = match &kind {
            TemplateKind::Render => concat_plan(&source),
            _ => None,
        };
        Template {
            vector,
            concat,
            source,
            location,
            what: what.to_owned(),
            kind,
            columns,
            paths: BTreeSet::new(),
            all_columns,
            model_output,
            list: false,
            name: String::new(),
            env: Arc::clone(&self.shared),
        }
    }
}

/// The string filters, redefined so that none stays none: minijinja's own turn a null cell
/// into the text "none", which would then compare as an answer. What they build is charged
/// to the render's byte budget ([`TEMPLATE_BYTES`](super::TEMPLATE_BYTES)), as minijinja's own
/// filters are.
pub(super) fn add_null_safe_filters(env: &mut Environment<'static>) {
    use minijinja::budget::charge;
    fn text(v: &Value) -> Result<String, minijinja::Error> {
        match v.as_str() {
            Some(s) => Ok(s.to_owned()),
            None => {
                let s = v.to_string();
                charge(s.len())?;
                Ok(s)
            }
        }
    }
    /// Case mappings grow a string at most threefold, so they are charged once built.
    fn null_safe(v: &Value, f: impl FnOnce(String) -> String) -> Result<Value, minijinja::Error> {
        if v.is_none() || v.is_undefined() {
            Ok(Value::from(()))
        } else {
            let out = f(text(v)?);
            charge(out.len())?;
            Ok(Value::from(out))
        }
    }
    env.add_filter("trim", |v: Value, chars: Option<String>| {
        null_safe(&v, |s| match &chars {
            Some(c) => s.trim_matches(|x| c.contains(x)).to_owned(),
            None => s.trim().to_owned(),
        })
    });
    env.add_filter("lower", |v: Value| null_safe(&v, |s| s.to_lowercase()));
    env.add_filter("upper", |v: Value| null_safe(&v, |s| s.to_uppercase()));
    env.add_filter("title", |v: Value| {
        null_safe(&v, |s| minijinja::filters::title(s.into()))
    });
    env.add_filter("capitalize", |v: Value| {
        null_safe(&v, |s| {
            let mut c = s.chars();
            match c.next() {
                Some(f) => f
                    .to_uppercase()
                    .chain(c.flat_map(char::to_lowercase))
                    .collect(),
                None => String::new(),
            }
        })
    });
    // A null list where text is expected is missing, as a null column is; a null item of a
    // list joins as the empty text, never as "none". minijinja's own `join` does the rest
    // (and charges what it builds), over the items with their `attribute` already taken.
    env.add_filter(
        "join",
        |state: &mut minijinja::State,
         v: Value,
         joiner: Option<Value>,
         attribute: Option<String>,
         kwargs: minijinja::value::Kwargs| {
            if v.is_none() || v.is_undefined() {
                return Ok(Value::from(()));
            }
            let joiner = match joiner {
                Some(j) => Some(j),
                None => kwargs.get::<Option<Value>>("d")?,
            };
            let attribute = match attribute {
                Some(a) => Some(a),
                None => kwargs.get::<Option<String>>("attribute")?,
            };
            kwargs.assert_all_used()?;
            let items = match v.kind() {
                ValueKind::Seq | ValueKind::Iterable => Value::from(
                    v.try_iter()?
                        .map(|item| match &attribute {
                            Some(a) if !item.is_undefined() => attribute_of(&item, a),
                            _ => item,
                        })
                        .map(|item| {
                            if item.is_none() {
                                Value::from("")
                            } else {
                                item
                            }
                        })
                        .collect::<Vec<Value>>(),
                ),
                _ => v,
            };
            let joiner = joiner
                .as_ref()
                .map(|j| minijinja::value::StringInput::new(state, j))
                .transpose()?;
            minijinja::filters::join(
                state,
                &items,
                joiner,
                None,
                minijinja::value::Kwargs::from_iter(std::iter::empty::<(&str, Value)>()),
            )
        },
    );
    // A null value is missing rather than the JSON text `null` (items inside stay JSON nulls).
    env.add_filter(
        "tojson",
        |v: Value, indent: Option<Value>, kwargs: minijinja::value::Kwargs| {
            if v.is_none() || v.is_undefined() {
                return Ok(Value::from(()));
            }
            minijinja::filters::tojson(&v, indent, kwargs)
        },
    );
    // Repeated, `replace` multiplies a string: its size is charged before it is built.
    env.add_filter("replace", |v: Value, from: String, to: String| {
        if v.is_none() || v.is_undefined() {
            return Ok(Value::from(()));
        }
        let s = text(&v)?;
        let hits = s.matches(from.as_str()).count();
        charge(s.len().saturating_add(hits.saturating_mul(to.len())))?;
        Ok(Value::from(s.replace(&from, &to)))
    });
}

/// `item`'s attribute at the dotted `path` (`a.b`, `choices.0`), as minijinja's `attribute=`
/// reads it; undefined where there is none.
fn attribute_of(item: &Value, path: &str) -> Value {
    let mut v = item.clone();
    for part in path.split('.') {
        let key = match part.parse::<i64>() {
            Ok(i) => Value::from(i),
            Err(_) => Value::from(part),
        };
        v = v.get_item(&key).unwrap_or(Value::UNDEFINED);
    }
    v
}

pub(super) fn json_text(v: &Json) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The first statement in `source` that would need a template loader (`include`, `import`,
/// `from`, `extends`). No loader is configured, so these could only fail at render time; they
/// are rejected when the task is loaded instead, with the task file's line and column.
pub(crate) fn loader_statement(source: &str) -> Option<&'static str> {
    const WORDS: [&str; 4] = ["include", "import", "from", "extends"];
    let mut rest = source;
    while let Some(i) = rest.find("{%") {
        rest = &rest[i + 2..];
        let body = rest.trim_start_matches(['-', '+']).trim_start();
        let word: String = body
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if let Some(w) = WORDS.iter().find(|w| **w == word) {
            return Some(w);
        }
    }
    None
}

/// Classifies template text (see the module docs).
pub(crate) fn classify(source: &str) -> TemplateKind {
    if !source.contains("{{") && !source.contains("{%") && !source.contains("{#") {
        return TemplateKind::Literal(source.to_owned());
    }
    let t = source.trim();
    let Some(inner) = t.strip_prefix("{{").and_then(|s| s.strip_suffix("}}")) else {
        return TemplateKind::Render;
    };
    // Whitespace around the braces is kept by Jinja, so `" {{ x }}"` is not a single expression.
    if t.len() != source.len()
        || inner.contains("{{")
        || inner.contains("}}")
        || inner.contains("{%")
        || inner.contains("{#")
    {
        return TemplateKind::Render;
    }
    let inner = inner.strip_prefix('-').unwrap_or(inner);
    let inner = inner.strip_suffix('-').unwrap_or(inner).trim();
    if let Some(col) = column_ref(inner) {
        return TemplateKind::Column(col);
    }
    if inner == "solver_output.output" || inner == "solver_output[\"output\"]" {
        return TemplateKind::ModelOutput;
    }
    TemplateKind::Expression(inner.to_owned())
}

/// `sample.name`, `sample["name"]` or `sample['name']` → `name`.
pub(super) fn column_ref(expr: &str) -> Option<String> {
    let rest = expr.strip_prefix(SAMPLE_VAR)?;
    if let Some(name) = rest.strip_prefix('.') {
        let ok = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        return ok.then(|| name.to_owned());
    }
    let rest = rest.strip_prefix('[')?.strip_suffix(']')?.trim();
    let quoted = rest
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| rest.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))?;
    (!quoted.contains(['"', '\'', '\\'])).then(|| quoted.to_owned())
}

/// Deepest nesting a template may have: brackets plus a run of unary operators (`not`, `-`).
pub const MAX_TEMPLATE_DEPTH: usize = 64;

/// Most operators one expression of a template may chain (see [`chain_length`]).
pub const MAX_TEMPLATE_CHAIN: usize = 256;

/// Refuses a template nested deeper than [`MAX_TEMPLATE_DEPTH`], or with an expression of more
/// than [`MAX_TEMPLATE_CHAIN`] operators, before minijinja parses or evaluates it: both recurse
/// once per level, and `not not not ... x` or `x | lower | lower ...` thousands deep would
/// overflow a worker's stack. `bare`: `source` is one expression, not a template.
fn check_depth(source: &str, bare: bool, node: Node<'_>, what: &str) -> Result<(), TaskError> {
    let depth = nesting_depth(source);
    if depth > MAX_TEMPLATE_DEPTH {
        return Err(TaskError::new(
            format!(
                "template of `{what}` nests {depth} levels deep (brackets and unary operators such as `not`); the limit is {MAX_TEMPLATE_DEPTH}"
            ),
            node.location,
        )
        .with_hint("write the expression with fewer nested levels"));
    }
    let chain = chain_length(source, bare);
    if chain > MAX_TEMPLATE_CHAIN {
        return Err(TaskError::new(
            format!(
                "template of `{what}` chains {chain} operators in one expression (filters, tests, lookups, calls, binary operators); the limit is {MAX_TEMPLATE_CHAIN}"
            ),
            node.location,
        )
        .with_hint("split the expression with `{% set %}`, or write it with fewer operators"));
    }
    Ok(())
}

/// An upper bound of a template's nesting: open brackets plus the current run of unary
/// operators (`not`, `-`, `+`), maximized over the text (string literals included: a bound,
/// not a parse).
pub(super) fn nesting_depth(source: &str) -> usize {
    let bytes = source.as_bytes();
    let (mut brackets, mut unary, mut max) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'(' | b'[' | b'{' => brackets += 1,
            b')' | b']' | b'}' => brackets = brackets.saturating_sub(1),
            b'-' | b'+' => unary += 1,
            b'n' if source[i..].starts_with("not")
                && !bytes
                    .get(i + 3)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) =>
            {
                unary += 1;
                i += 3;
                max = max.max(brackets + unary);
                continue;
            }
            b if b.is_ascii_whitespace() => {}
            _ => unary = 0,
        }
        max = max.max(brackets + unary);
        i += 1;
    }
    max
}

/// An upper bound of the operators of one expression of `source` (of each `{{ }}` and `{% %}`
/// block; of the whole text when `bare`): filters, tests, attribute and item lookups, calls,
/// arithmetic, comparisons, `~`, `and`, `or`, `not`, `in` and inline `if`/`else`, maximized
/// over the expressions. minijinja reads such a chain in a loop but builds it as a tree one
/// level deeper per operator, which its compiler then walks recursively, so the chain's length
/// bounds the stack it needs. String literals are skipped.
pub(super) fn chain_length(source: &str, bare: bool) -> usize {
    let bytes = source.as_bytes();
    let (mut inside, mut count, mut max) = (bare, 0usize, 0usize);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        if !inside {
            if b == b'{' && matches!(next, Some(b'{' | b'%')) {
                (inside, count) = (true, 0);
                i += 1;
            }
            i += 1;
            continue;
        }
        match b {
            b'}' | b'%' if !bare && next == Some(b'}') => {
                inside = false;
                i += 2;
                continue;
            }
            b'\'' | b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'|' | b'.' | b'[' | b'(' | b'+' | b'-' | b'*' | b'/' | b'%' | b'~' | b'<' | b'>'
            | b'=' | b'!' => count += 1,
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while bytes
                    .get(i + 1)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    i += 1;
                }
                let word = &source[start..=i];
                count += usize::from(matches!(
                    word,
                    "and" | "or" | "not" | "in" | "is" | "if" | "else"
                ));
            }
            _ => {}
        }
        max = max.max(count);
        i += 1;
    }
    max
}

/// What a template reads from the row, gathered from its variables.
#[derive(Default)]
struct Reads {
    columns: BTreeSet<String>,
    paths: BTreeSet<String>,
    all_columns: bool,
    model_output: bool,
}

impl Reads {
    /// Notes what `var` reads; `Some(root)` when its root is none of the row's names.
    fn add<'v>(&mut self, var: &'v str) -> Option<&'v str> {
        let (root, rest) = var.split_once('.').unwrap_or((var, ""));
        match root {
            SAMPLE_VAR if rest.is_empty() => self.all_columns = true,
            SAMPLE_VAR => {
                self.columns
                    .insert(rest.split('.').next().unwrap_or(rest).to_owned());
                self.paths.insert(rest.to_owned());
            }
            MODEL_OUTPUT_VAR | MODEL_OUTPUT_OBJECT_VAR => self.model_output = true,
            other => return Some(other),
        }
        None
    }
}
