//! The tokio runtime the synchronous pipeline blocks on for every store call.

use std::sync::OnceLock;

/// The runtime every call blocks on: two threads are enough to drive many requests.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("evalscore-storage")
            .enable_all()
            .build()
            // Building a runtime fails only when the OS refuses threads or an epoll fd; there
            // is nothing to fall back to.
            .unwrap_or_else(|e| panic!("cannot start the storage runtime: {e}"))
    })
}

/// Runs `f` to completion on the storage runtime (also for other crates' async store calls).
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    runtime().block_on(f)
}
