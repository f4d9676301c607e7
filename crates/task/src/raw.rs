//! The untyped, located shape of a task file: every node keeps its line and column and maps
//! keep their key order, so that the typed layer can point at the exact spot of a mistake.

use crate::{Location, TaskError};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_saphyr::Spanned;
use std::fmt;

/// A YAML node with the locations of everything below it.
#[derive(Debug, Clone)]
pub(crate) enum Tree {
    Scalar(Value),
    Seq(Vec<Spanned<Tree>>),
    Map(Vec<(Spanned<String>, Spanned<Tree>)>),
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tree;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Tree, E> {
                Ok(Tree::Scalar(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Tree, E> {
                Ok(Tree::Scalar(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Tree, E> {
                Ok(Tree::Scalar(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Tree, E> {
                Ok(Tree::Scalar(
                    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number),
                ))
            }
            fn visit_str<E>(self, v: &str) -> Result<Tree, E> {
                Ok(Tree::Scalar(Value::String(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Tree, E> {
                Ok(Tree::Scalar(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<Tree, E> {
                Ok(Tree::Scalar(Value::Null))
            }
            fn visit_none<E>(self) -> Result<Tree, E> {
                Ok(Tree::Scalar(Value::Null))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Tree, D2::Error> {
                Tree::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Spanned<Tree>>()? {
                    items.push(item);
                }
                Ok(Tree::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<Spanned<String>, Spanned<Tree>>()? {
                    entries.push((k, v));
                }
                Ok(Tree::Map(entries))
            }
        }
        d.deserialize_any(V)
    }
}

impl Tree {
    /// The plain JSON value of this node (locations dropped).
    pub fn to_json(&self) -> Value {
        match self {
            Tree::Scalar(v) => v.clone(),
            Tree::Seq(items) => Value::Array(items.iter().map(|i| i.value.to_json()).collect()),
            Tree::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.value.clone(), v.value.to_json()))
                    .collect(),
            ),
        }
    }

    fn kind_name(&self) -> &'static str {
        match self {
            Tree::Scalar(Value::Null) => "null",
            Tree::Scalar(Value::Bool(_)) => "a boolean",
            Tree::Scalar(Value::Number(_)) => "a number",
            Tree::Scalar(_) => "a string",
            Tree::Seq(_) => "a list",
            Tree::Map(_) => "a mapping",
        }
    }
}

/// A located reference to one node of a task file: what scorer parsers read options from.
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    pub(crate) tree: &'a Tree,
    pub location: Option<Location>,
}

impl<'a> Node<'a> {
    pub(crate) fn new(spanned: &'a Spanned<Tree>) -> Self {
        Node {
            tree: &spanned.value,
            location: Location::from_saphyr(&spanned.referenced),
        }
    }

    pub fn err(&self, message: impl Into<String>) -> TaskError {
        TaskError::new(message, self.location)
    }

    pub fn map(&self, what: &str) -> Result<MapNode<'a>, TaskError> {
        match self.tree {
            Tree::Map(entries) => Ok(MapNode {
                entries,
                location: self.location,
            }),
            other => Err(self.err(format!(
                "{what} must be a mapping, found {}",
                other.kind_name()
            ))),
        }
    }

    pub fn seq(&self, what: &str) -> Result<Vec<Node<'a>>, TaskError> {
        match self.tree {
            Tree::Seq(items) => Ok(items.iter().map(Node::new).collect()),
            Tree::Scalar(Value::Null) => Ok(Vec::new()),
            other => Err(self.err(format!(
                "{what} must be a list, found {}",
                other.kind_name()
            ))),
        }
    }

    /// A scalar as text: strings as they are, numbers and booleans in their YAML spelling.
    pub fn scalar_string(&self, key: &str) -> Result<String, TaskError> {
        match self.tree {
            Tree::Scalar(Value::String(s)) => Ok(s.clone()),
            Tree::Scalar(Value::Number(n)) => Ok(n.to_string()),
            Tree::Scalar(Value::Bool(b)) => Ok(b.to_string()),
            other => Err(self.err(format!(
                "`{key}` must be a string, found {}",
                other.kind_name()
            ))),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.tree, Tree::Scalar(Value::Null))
    }

    /// The mapping, when this node is one (no error otherwise).
    pub fn as_map(&self) -> Option<MapNode<'a>> {
        match self.tree {
            Tree::Map(entries) => Some(MapNode {
                entries,
                location: self.location,
            }),
            _ => None,
        }
    }

    /// A YAML boolean?
    pub fn is_bool(&self) -> bool {
        matches!(self.tree, Tree::Scalar(Value::Bool(_)))
    }

    /// A whole number that fits an `i64`, when the node is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self.tree {
            Tree::Scalar(Value::Number(x)) => x.as_i64(),
            _ => None,
        }
    }

    /// The plain JSON value of this node (locations dropped).
    pub fn to_json(&self) -> Value {
        self.tree.to_json()
    }

    /// A YAML boolean (`true` / `false`).
    pub fn boolean(&self, key: &str) -> Result<bool, TaskError> {
        match self.tree {
            Tree::Scalar(Value::Bool(b)) => Ok(*b),
            other => Err(self.err(format!(
                "`{key}` must be true or false, found {}",
                other.kind_name()
            ))),
        }
    }
}

/// A located mapping.
#[derive(Debug, Clone, Copy)]
pub struct MapNode<'a> {
    pub(crate) entries: &'a [(Spanned<String>, Spanned<Tree>)],
    pub location: Option<Location>,
}

impl<'a> MapNode<'a> {
    pub fn get(&self, key: &str) -> Option<Node<'a>> {
        self.entries
            .iter()
            .find(|(k, _)| k.value == key)
            .map(|(_, v)| Node::new(v))
    }

    /// The entries in the order written: each key and its value's node.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, Node<'a>)> + 'a {
        self.entries
            .iter()
            .map(|(k, v)| (k.value.as_str(), Node::new(v)))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn keys(&self) -> impl Iterator<Item = (&'a str, Option<Location>)> + 'a {
        self.entries
            .iter()
            .map(|(k, _)| (k.value.as_str(), Location::from_saphyr(&k.referenced)))
    }

    /// Rejects keys outside `allowed`, with a "did you mean" hint.
    pub fn check_keys(&self, allowed: &[&str], what: &str) -> Result<(), TaskError> {
        for (key, loc) in self.keys() {
            if !allowed.contains(&key) {
                let hint = match crate::error::did_you_mean(key, allowed) {
                    Some(s) => format!("did you mean `{s}`? allowed keys: {}", allowed.join(", ")),
                    None => format!("allowed keys: {}", allowed.join(", ")),
                };
                return Err(
                    TaskError::new(format!("unknown key `{key}` in {what}"), loc).with_hint(hint),
                );
            }
        }
        Ok(())
    }

    pub fn err(&self, message: impl Into<String>) -> TaskError {
        TaskError::new(message, self.location)
    }
}
