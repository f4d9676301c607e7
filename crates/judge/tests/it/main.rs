//! The judge crate's integration tests, in one test binary (one link, not one per file): a module
//! per area. `cargo test -p evalscore-judge --test it window::` runs one module's tests.

mod cache;
mod client;
mod embed;
mod fixtures;
mod llama_server;
mod reply_limits;
mod robust;
mod shared_cache;
mod window;
