//! The filter language's syntax: tokens (each with its 1-based character column, which
//! every syntax error names) and a recursive-descent parser into [`Expr`].

use super::{Expr, Leaf, Lit, LitKind, Name, Op};
use std::fmt;

/// A token and its 1-based character column.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A name; `true` when backquoted (never a keyword).
    Word(String, bool),
    Str(String),
    Int(i64),
    Op(Op),
    Open,
    Close,
    Comma,
    End,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w, false) => write!(f, "`{w}`"),
            Tok::Word(w, true) => write!(f, "`` `{w}` ``"),
            Tok::Str(s) => write!(f, "`'{}'`", s.replace('\'', "''")),
            Tok::Int(i) => write!(f, "`{i}`"),
            Tok::Op(op) => write!(f, "`{}`", op_text(*op)),
            Tok::Open => f.write_str("`(`"),
            Tok::Close => f.write_str("`)`"),
            Tok::Comma => f.write_str("`,`"),
            Tok::End => f.write_str("the end"),
        }
    }
}

fn op_text(op: Op) -> &'static str {
    match op {
        Op::Eq => "=",
        Op::Ne => "!=",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Gt => ">",
        Op::Ge => ">=",
    }
}

/// A syntax error's message and hint.
pub(super) type SyntaxError = (String, Option<String>);

/// The tokens of `text`, each with its column; the last is `End`.
fn tokens(text: &str) -> Result<Vec<(Tok, usize)>, SyntaxError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
        let (tok, len) = match c {
            '(' => (Tok::Open, 1),
            ')' => (Tok::Close, 1),
            ',' => (Tok::Comma, 1),
            '=' if two == "==" => (Tok::Op(Op::Eq), 2),
            '=' => (Tok::Op(Op::Eq), 1),
            '!' | '<' if two == "!=" || two == "<>" => (Tok::Op(Op::Ne), 2),
            '<' if two == "<=" => (Tok::Op(Op::Le), 2),
            '>' if two == ">=" => (Tok::Op(Op::Ge), 2),
            '<' => (Tok::Op(Op::Lt), 1),
            '>' => (Tok::Op(Op::Gt), 1),
            '\'' | '"' | '`' => {
                let (s, len) = quoted(&chars[i..], at)?;
                let tok = if c == '`' {
                    Tok::Word(s, true)
                } else {
                    Tok::Str(s)
                };
                (tok, len)
            }
            '-' | '0'..='9' => {
                let len = 1 + chars[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == '_' || **c == '.')
                    .count();
                let word: String = chars[i..i + len].iter().collect();
                let n = word.parse::<i64>().map_err(|_| {
                    (
                        format!("`{word}` at column {at} is not an integer"),
                        Some("numbers are integers such as `7` or `-3`; quote anything else: `'1.5'`".to_owned()),
                    )
                })?;
                (Tok::Int(n), len)
            }
            c if c.is_alphabetic() || c == '_' => {
                let len = chars[i..]
                    .iter()
                    .take_while(|c| c.is_alphanumeric() || **c == '_')
                    .count();
                (Tok::Word(chars[i..i + len].iter().collect(), false), len)
            }
            other => {
                return Err((
                    format!("unexpected character `{other}` at column {at}"),
                    Some(SYNTAX_HINT.to_owned()),
                ))
            }
        };
        out.push((tok, at));
        i += len;
    }
    out.push((Tok::End, chars.len() + 1));
    Ok(out)
}

const SYNTAX_HINT: &str = "a filter compares partition columns with values: `model = 'm1' and date >= '2001-02-03'`, `run in (1, 2)`, `model is not null`, with `and`, `or`, `not` and parentheses";

/// A quoted string or name starting at `chars[0]` (the quote), the quote doubled inside to
/// stand for itself: its text and its length with the quotes.
fn quoted(chars: &[char], at: usize) -> Result<(String, usize), SyntaxError> {
    let q = chars[0];
    let mut s = String::new();
    let mut i = 1;
    loop {
        match chars.get(i) {
            None => {
                return Err((
                    format!("the string starting at column {at} has no closing {q}"),
                    Some(format!("end it with {q}; write {q}{q} for a {q} inside it")),
                ))
            }
            Some(c) if *c == q && chars.get(i + 1) == Some(&q) => {
                s.push(q);
                i += 2;
            }
            Some(c) if *c == q => return Ok((s, i + 1)),
            Some(c) => {
                s.push(*c);
                i += 1;
            }
        }
    }
}

/// A recursive descent over the tokens.
struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
}

/// The most `and`, `or`, `not` and `(` an expression holds: each nests the tree one level,
/// and the parser, the checks and the evaluation all recurse over it.
pub(super) const MAX_OPERATORS: usize = 1_000;

pub(super) fn parse(text: &str) -> Result<Expr<Name, Lit>, SyntaxError> {
    let toks = tokens(text)?;
    let operators = toks
        .iter()
        .filter(|(t, _)| match t {
            Tok::Open => true,
            Tok::Word(w, false) => ["and", "or", "not"]
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k)),
            _ => false,
        })
        .count();
    if operators > MAX_OPERATORS {
        return Err((
            format!("the expression holds {operators} of `and`, `or`, `not` and `(`; at most {MAX_OPERATORS} are read"),
            Some("list the values a column may take with `column in ('a', 'b', ...)`".to_owned()),
        ));
    }
    let mut p = Parser { toks, pos: 0 };
    if p.peek() == &Tok::End {
        return Err((
            "the expression is empty".to_owned(),
            Some(SYNTAX_HINT.to_owned()),
        ));
    }
    let e = p.or()?;
    if p.peek() != &Tok::End {
        return Err(p.unexpected("`and`, `or` or the end"));
    }
    Ok(e)
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }

    fn at(&self) -> usize {
        self.toks[self.pos].1
    }

    fn next(&mut self) {
        if self.peek() != &Tok::End {
            self.pos += 1;
        }
    }

    /// Whether the next token is the keyword `kw`; takes it when it is.
    fn keyword(&mut self, kw: &str) -> bool {
        let is = matches!(self.peek(), Tok::Word(w, false) if w.eq_ignore_ascii_case(kw));
        if is {
            self.pos += 1;
        }
        is
    }

    fn unexpected(&self, expected: &str) -> SyntaxError {
        (
            format!(
                "expected {expected} at column {}, found {}",
                self.at(),
                self.peek()
            ),
            Some(SYNTAX_HINT.to_owned()),
        )
    }

    fn or(&mut self) -> Result<Expr<Name, Lit>, SyntaxError> {
        let mut e = self.and()?;
        while self.keyword("or") {
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr<Name, Lit>, SyntaxError> {
        let mut e = self.not()?;
        while self.keyword("and") {
            e = Expr::And(Box::new(e), Box::new(self.not()?));
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<Expr<Name, Lit>, SyntaxError> {
        if self.keyword("not") {
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        if self.peek() == &Tok::Open {
            self.next();
            let e = self.or()?;
            if self.peek() != &Tok::Close {
                return Err(self.unexpected("`)`"));
            }
            self.next();
            return Ok(e);
        }
        self.comparison()
    }

    /// `column op literal`, `literal op column`, `column [not] in (...)`,
    /// `column is [not] null`.
    fn comparison(&mut self) -> Result<Expr<Name, Lit>, SyntaxError> {
        if let Some(lit) = self.literal() {
            let Tok::Op(op) = *self.peek() else {
                return Err(self.unexpected("a comparison operator"));
            };
            self.next();
            let name = self.column()?;
            let flipped = match op {
                Op::Lt => Op::Gt,
                Op::Le => Op::Ge,
                Op::Gt => Op::Lt,
                Op::Ge => Op::Le,
                same => same,
            };
            return Ok(Expr::Leaf(Leaf::Cmp(name, flipped, lit)));
        }
        let name = self.column()?;
        if self.keyword("is") {
            let negated = self.keyword("not");
            if !self.keyword("null") {
                return Err(self.unexpected("`null`"));
            }
            return Ok(Expr::Leaf(Leaf::IsNull(name, negated)));
        }
        let negated = self.keyword("not");
        if self.keyword("in") {
            return Ok(Expr::Leaf(Leaf::In(name, self.list()?, negated)));
        }
        if negated {
            return Err(self.unexpected("`in`"));
        }
        let op = match self.peek() {
            Tok::Op(op) => *op,
            _ => {
                return Err(self
                    .unexpected("a comparison (`=`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `is null`)"))
            }
        };
        self.next();
        Ok(Expr::Leaf(Leaf::Cmp(name, op, self.value()?)))
    }

    /// A column name; a keyword is not one.
    fn column(&mut self) -> Result<Name, SyntaxError> {
        match self.peek().clone() {
            Tok::Word(w, quoted) if quoted || !is_keyword(&w) => {
                let at = self.at();
                self.next();
                Ok(Name { text: w, at })
            }
            _ => Err(self.unexpected("a partition column")),
        }
    }

    /// A literal, when the next token is one.
    fn literal(&mut self) -> Option<Lit> {
        let at = self.at();
        let kind = match self.peek() {
            Tok::Str(s) => LitKind::Str(s.clone()),
            Tok::Int(i) => LitKind::Int(*i),
            _ => return None,
        };
        self.next();
        Some(Lit { kind, at })
    }

    /// A literal where one must be; `null` there is an error pointing at `is null`.
    fn value(&mut self) -> Result<Lit, SyntaxError> {
        if let Some(lit) = self.literal() {
            return Ok(lit);
        }
        if matches!(self.peek(), Tok::Word(w, false) if w.eq_ignore_ascii_case("null")) {
            return Err((
                format!(
                    "a comparison with `null` at column {} is never true",
                    self.at()
                ),
                Some("write `column is null` or `column is not null`".to_owned()),
            ));
        }
        Err(self.unexpected("a value (a quoted string or an integer)"))
    }

    /// `(lit, lit, ...)` after `in`.
    fn list(&mut self) -> Result<Vec<Lit>, SyntaxError> {
        if self.peek() != &Tok::Open {
            return Err(self.unexpected("`(` after `in`"));
        }
        self.next();
        let mut values = vec![self.value()?];
        loop {
            match self.peek() {
                Tok::Comma => {
                    self.next();
                    values.push(self.value()?);
                }
                Tok::Close => {
                    self.next();
                    return Ok(values);
                }
                _ => return Err(self.unexpected("`,` or `)`")),
            }
        }
    }
}

fn is_keyword(w: &str) -> bool {
    ["and", "or", "not", "in", "is", "null"]
        .iter()
        .any(|k| w.eq_ignore_ascii_case(k))
}
