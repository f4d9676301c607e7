//! Test servers and fixtures shared by the workspace's integration tests; a dev-dependency
//! only, never published. [`llama`] starts llama.cpp's `llama-server` with a small model,
//! [`chat_server`] serves scripted OpenAI-compatible chat replies, [`figures`] checks figures
//! against golden ones, and [`stores`] starts real object stores (moto, azurite) with a
//! fault-injecting proxy to put in front of them; [`special_files`] makes a FIFO, and
//! [`wait::until`] polls for what another process does. The real programs are installed and cached by `scripts/setup/*.sh`, which the starters run.
// Test code: a failed unwrap is a failed test, reported with its message and location.
#![allow(clippy::unwrap_used)]

pub mod chat_server;
pub mod figures;
pub mod generated;
pub mod llama;
mod setup;
pub mod special_files;
pub mod stores;
pub mod wait;
