//! A judge scorer over one batch, a window of at most [`WINDOW_ROWS`] rows at a time: the
//! prompt templates are rendered ([`Prompts`]), each row's request key is computed from the
//! rendered texts without building the request (a row whose submission or another prompt
//! part is null is *missing* and sends nothing), the window's replies are fetched into the
//! batch's memo ([`JudgeRuntime::fetch`]: identical requests sent once, cached replies
//! reused, only the requests to send built), and a failed request is a row error at its row.

use crate::input::text::{text, Text};
use crate::judge::runtime::{JudgeRuntime, Kept, Memo, Reading};
use crate::row_error::{CellRef, RowError};
use arrow::array::{ArrayRef, RecordBatch};
use evalscore_judge::{ChatKeys, ChatRequest, JudgeError, Key, Message};
use evalscore_task::{ModelSpec, RowContext, Template};
use evalscore_text::TextColumn;
use std::borrow::Cow;

/// Rows a judge window holds at most.
pub(crate) const WINDOW_ROWS: usize = 4096;

/// The version of the reply parsers (`evalscore_kernels::judge`), part of every request's cache
/// key: a parser that reads replies differently must not reuse scores cached for another.
pub const JUDGE_PARSER_VERSION: u32 = 1;

/// Composes one user message from the texts of a prompt's parts.
pub(crate) type MessageFn<'a> = Box<dyn Fn(&[&str]) -> String + 'a>;

/// A judge kind's prompt: its templates and how their texts make the messages.
pub(crate) enum Prompt<'a> {
    /// A system message (the template's text, then `instruction`) and a user message.
    SystemUser {
        system: Option<&'a Template>,
        user: &'a Template,
        instruction: String,
    },
    /// One user message, `message` of the parts' texts (`None`: the model output).
    User {
        parts: Vec<Option<&'a Template>>,
        message: MessageFn<'a>,
    },
    /// A system message (as `SystemUser`'s) and a user message composed by `message` from
    /// the parts' texts.
    SystemParts {
        system: Option<&'a Template>,
        parts: Vec<&'a Template>,
        message: MessageFn<'a>,
        instruction: String,
    },
}

/// A slice of a batch and its model output, owning what a [`RowContext`] borrows.
pub(crate) struct SlicedCtx {
    batch: RecordBatch,
    model_output: Option<ArrayRef>,
    raw: Option<ArrayRef>,
}

impl SlicedCtx {
    pub fn new(ctx: &RowContext<'_>, start: usize, len: usize) -> SlicedCtx {
        SlicedCtx {
            batch: ctx.batch.slice(start, len),
            model_output: ctx.model_output.map(|a| a.slice(start, len)),
            raw: ctx.model_output_raw.map(|a| a.slice(start, len)),
        }
    }

    pub fn ctx(&self) -> RowContext<'_> {
        RowContext {
            batch: &self.batch,
            model_output: self.model_output.as_ref(),
            model_output_raw: self.raw.as_ref(),
        }
    }
}

/// One window's rendered prompt parts, from which each row's messages (its request, its key)
/// are read without copying the texts.
pub(crate) struct Prompts<'j> {
    model: &'j ModelSpec,
    texts: Vec<Text>,
    shape: Shape<'j>,
    rows: usize,
}

enum Shape<'j> {
    /// A system message (`texts[0]`, then the instruction) and a user message (`texts[1]`);
    /// `fixed` is the system message when it is the same on every row.
    SystemUser {
        instruction: String,
        fixed: Option<String>,
    },
    /// One user message composed from `texts`.
    User { message: MessageFn<'j> },
    /// A system message (`texts[0]`, then the instruction) and a user message composed from
    /// `texts[1..]`.
    SystemParts {
        instruction: String,
        fixed: Option<String>,
        message: MessageFn<'j>,
    },
}

/// A row's messages, borrowing the window's texts where it can.
pub(crate) enum RowMessages<'a> {
    SystemUser(Cow<'a, str>, Cow<'a, str>),
    User(String),
}

impl RowMessages<'_> {
    fn key(&self, keys: &mut ChatKeys) -> Key {
        match self {
            RowMessages::SystemUser(s, u) => keys.key(&[("system", s), ("user", u)]),
            RowMessages::User(p) => keys.key(&[("user", p)]),
        }
    }

    pub fn into_messages(self) -> Vec<Message> {
        let message = |role: &str, content: String| Message {
            role: role.to_owned(),
            content,
        };
        match self {
            RowMessages::SystemUser(s, u) => vec![
                message("system", s.into_owned()),
                message("user", u.into_owned()),
            ],
            RowMessages::User(p) => vec![message("user", p)],
        }
    }
}

/// The system message: the scorer's system prompt, then the instruction.
fn system_message(system: &str, instruction: &str) -> String {
    if system.is_empty() {
        instruction.to_owned()
    } else {
        format!("{system}\n\n{instruction}")
    }
}

/// The system template's text over the rows (empty without one), and the system message
/// when it is the same on every row.
fn system_text(
    system: Option<&Template>,
    instruction: &str,
    ctx: &RowContext<'_>,
) -> Result<(Text, Option<String>), RowError> {
    let system = match system {
        Some(t) => text(Some(t), ctx)?,
        None => Text::Scalar(String::new()),
    };
    let fixed = match &system {
        Text::Scalar(s) => Some(system_message(s, instruction)),
        _ => None,
    };
    Ok((system, fixed))
}

impl<'j> Prompts<'j> {
    /// Renders `prompt`, asked of `model`, over the `rows` rows of `ctx`.
    pub fn render(
        model: &'j ModelSpec,
        prompt: Prompt<'j>,
        ctx: &RowContext<'_>,
        rows: usize,
    ) -> Result<Self, RowError> {
        match prompt {
            Prompt::SystemUser {
                system,
                user,
                instruction,
            } => {
                let (system, fixed) = system_text(system, &instruction, ctx)?;
                Ok(Prompts {
                    model,
                    texts: vec![system, text(Some(user), ctx)?],
                    shape: Shape::SystemUser { instruction, fixed },
                    rows,
                })
            }
            Prompt::SystemParts {
                system,
                parts,
                message,
                instruction,
            } => {
                let (system, fixed) = system_text(system, &instruction, ctx)?;
                let mut texts = vec![system];
                for t in parts {
                    texts.push(text(Some(t), ctx)?);
                }
                Ok(Prompts {
                    model,
                    texts,
                    shape: Shape::SystemParts {
                        instruction,
                        fixed,
                        message,
                    },
                    rows,
                })
            }
            Prompt::User { parts, message } => Ok(Prompts {
                model,
                texts: parts
                    .iter()
                    .map(|t| text(*t, ctx))
                    .collect::<Result<_, _>>()?,
                shape: Shape::User { message },
                rows,
            }),
        }
    }

    /// The texts as columns.
    pub fn columns(&self) -> Result<Vec<TextColumn<'_>>, RowError> {
        self.texts
            .iter()
            .map(|t| {
                t.column().map_err(|e| RowError {
                    row: 0,
                    message: e.to_string(),
                    ..RowError::default()
                })
            })
            .collect()
    }

    /// Row `r`'s messages; `None` when a prompt part is null (the row is missing: nothing is
    /// sent).
    pub fn messages<'a>(&'a self, columns: &[TextColumn<'a>], r: usize) -> Option<RowMessages<'a>> {
        match &self.shape {
            Shape::SystemUser { instruction, fixed } => {
                let system = columns[0].get(r)?;
                let user = columns[1].get(r)?;
                let system = match fixed {
                    Some(f) => Cow::Borrowed(f.as_str()),
                    None => Cow::Owned(system_message(system, instruction)),
                };
                Some(RowMessages::SystemUser(system, Cow::Borrowed(user)))
            }
            Shape::SystemParts {
                instruction,
                fixed,
                message,
            } => {
                let system = columns[0].get(r)?;
                let parts: Option<Vec<&str>> = columns[1..].iter().map(|c| c.get(r)).collect();
                let user = message(&parts?);
                let system = match fixed {
                    Some(f) => Cow::Borrowed(f.as_str()),
                    None => Cow::Owned(system_message(system, instruction)),
                };
                Some(RowMessages::SystemUser(system, Cow::Owned(user)))
            }
            Shape::User { message } => {
                let parts: Option<Vec<&str>> = columns.iter().map(|c| c.get(r)).collect();
                Some(RowMessages::User(message(&parts?)))
            }
        }
    }

    /// Each row's request key; `None` for a missing row.
    pub fn keys(&self, chat_keys: &mut ChatKeys) -> Result<Vec<Option<Key>>, RowError> {
        let columns = self.columns()?;
        Ok((0..self.rows)
            .map(|r| self.messages(&columns, r).map(|m| m.key(chat_keys)))
            .collect())
    }

    /// The request of `messages`.
    pub fn build(&self, messages: Vec<Message>) -> ChatRequest {
        let model = self.model;
        ChatRequest {
            base_url: model.base_url.clone(),
            model: model.model.clone(),
            messages,
            temperature: model.temperature,
            seed: model.seed,
            max_tokens: model.max_tokens,
            parser_version: JUDGE_PARSER_VERSION,
        }
    }
}

/// The endpoint a judge scorer asks: its `models:` key and entry.
#[derive(Debug)]
pub(crate) struct Asked {
    pub model_key: String,
    pub model: ModelSpec,
}

impl Asked {
    /// The keys of this endpoint's requests (they differ only in their messages).
    pub fn chat_keys(&self) -> ChatKeys {
        ChatKeys::new(
            &self.model.base_url,
            &self.model.model,
            self.model.temperature,
            self.model.seed,
            self.model.max_tokens,
            JUDGE_PARSER_VERSION,
        )
    }

    /// Gets into `memo` the replies of a window's rows, asked each prompt of `prompts` (with
    /// the keys of the same entry of `keys`, `None` for a missing row), in one call, so that
    /// a request two prompts share counts as deduplicated; each reply read by `read` (its
    /// text, and whether to keep its reasoning) as it arrives.
    pub fn fetch_window(
        &self,
        runtime: &JudgeRuntime,
        memo: &Memo,
        prompts: &[Prompts<'_>],
        keys: &[Vec<Option<Key>>],
        read: &dyn Fn(&str, bool) -> Reading,
    ) -> Result<(), RowError> {
        // (prompt, row) of each request sent.
        let asked: Vec<(usize, usize)> = keys
            .iter()
            .enumerate()
            .flat_map(|(p, k)| {
                (0..k.len())
                    .filter(|&r| k[r].is_some())
                    .map(move |r| (p, r))
            })
            .collect();
        let sent: Vec<Key> = keys.iter().flatten().flatten().copied().collect();
        let columns = prompts
            .iter()
            .map(Prompts::columns)
            .collect::<Result<Vec<_>, _>>()?;
        runtime
            .fetch(
                &self.model_key,
                &sent,
                |i| {
                    // A row with a key has messages (a missing row has neither).
                    let (p, r) = asked[i];
                    let messages = prompts[p].messages(&columns[p], r);
                    prompts[p].build(messages.map_or_else(Vec::new, RowMessages::into_messages))
                },
                memo,
                |reply| Kept::Reading(read(&reply.content, memo.keep_reasoning)),
            )
            .map_err(|e| RowError {
                row: 0,
                message: e.text(),
                hint: e.hint(),
                ..RowError::default()
            })
    }

    /// Checks that every row of a window (rows `start..` of the batch, `keys` as in
    /// [`Prompts::keys`]) has its reply in `memo`; a failed request is a row error at its row.
    pub fn check_window(
        &self,
        memo: &Memo,
        start: usize,
        keys: &[Option<Key>],
    ) -> Result<(), RowError> {
        let memo = memo.entries();
        for (i, key) in keys.iter().enumerate() {
            let Some(key) = key else {
                continue;
            };
            let row = start + i;
            match memo.get(key) {
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    return Err(RowError {
                        row,
                        message: format!(
                            "judge model `{}` ({}): {e}",
                            self.model_key, self.model.base_url
                        ),
                        per_row: true,
                        hint: Some(match e {
                            JudgeError::Offline => "run without --offline to send it, or `evalscore judge export` and `judge import` it through a Batch API".to_owned(),
                            JudgeError::Request(_) => "the request was retried as `max_retries` allows; a rerun sends only the requests without a cached reply".to_owned(),
                        }),
                        cell: Some(Box::new(CellRef {
                            column: Some(self.model_key.clone()),
                            value: None,
                        })),
                        ..RowError::default()
                    })
                }
                None => {
                    return Err(RowError {
                        row,
                        message: "internal error: fewer judge replies than requests".to_owned(),
                        ..RowError::default()
                    })
                }
            }
        }
        Ok(())
    }
}
