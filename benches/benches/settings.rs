//! Settings trees: the minimal diff and the partial write of `svc_core::settings`,
//! against `json_patch::diff` (RFC 6902) and `json_patch::merge` (RFC 7386) in the same
//! run.
//!
//! Inputs: `unit_default_1pct`, the unit's default tree (built from the document's
//! `Settings` schema, about a thousand leaves) with 1% of its leaves changed by a
//! seeded PRNG; `large_1pct`, ten copies of it under different top-level keys (ten
//! times larger, same shape), 1% of leaves changed likewise.
//!
//! `cargo bench -p svc-benches --bench settings`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::Value;
use svc_core::settings::{self, testing};

/// Fixed seed: the same leaves change on every run.
const SEED: u64 = 0x5e77_1265;

fn inputs() -> Vec<(&'static str, Value, Value)> {
    let unit = testing::unit_default_tree();
    let large = testing::large_tree(&unit, 10);
    let unit_changed = testing::change_leaves(&unit, 0.01, SEED);
    let large_changed = testing::change_leaves(&large, 0.01, SEED);
    vec![
        ("unit_default_1pct", unit, unit_changed),
        ("large_1pct", large, large_changed),
    ]
}

fn bench_diff(c: &mut Criterion) {
    let mut group = c.benchmark_group("settings_diff");
    for (name, old, new) in inputs() {
        let patch = settings::diff(&old, &new);
        assert!(!patch.changed.is_empty() && patch.removed.is_empty());
        group.bench_with_input(
            BenchmarkId::new("svc_core", name),
            &(&old, &new),
            |b, (old, new)| {
                b.iter(|| settings::diff(black_box(old), black_box(new)));
            },
        );
        group.bench_with_input(
            BenchmarkId::new("json_patch", name),
            &(&old, &new),
            |b, (old, new)| {
                b.iter(|| json_patch::diff(black_box(old), black_box(new)));
            },
        );
    }
    group.finish();
}

fn bench_apply(c: &mut Criterion) {
    let mut group = c.benchmark_group("settings_apply");
    for (name, old, new) in inputs() {
        let write = settings::diff(&old, &new).tree;
        // Same result both ways (the write holds no null, which RFC 7386 would delete).
        let mut merged = old.clone();
        json_patch::merge(&mut merged, &write);
        assert!(settings::apply(&old, &write) == new && merged == new);
        group.bench_with_input(
            BenchmarkId::new("svc_core", name),
            &(&old, &write),
            |b, (old, write)| {
                b.iter(|| settings::apply(black_box(old), black_box(write)));
            },
        );
        group.bench_with_input(
            BenchmarkId::new("json_patch", name),
            &(&old, &write),
            |b, (old, write)| {
                b.iter(|| {
                    let mut doc = black_box(*old).clone();
                    json_patch::merge(&mut doc, black_box(write));
                    doc
                });
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench_diff, bench_apply);
criterion_main!(benches);
