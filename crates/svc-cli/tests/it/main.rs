//! CLI tests: the real `svc` binary, run as a child process, against an emulated unit
//! started in the test process (`svc device`), and the `svc emulator` command.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: fixed inputs, a panic is a failure

mod device;
mod device_logger;
mod device_safety;
mod device_stream;
mod emulator;
mod fleet;
mod logs;
mod output;
mod process;
mod resources;
mod support;
mod webhooks;
mod webhooks_listen;
