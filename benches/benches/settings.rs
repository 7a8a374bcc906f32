//! Settings trees: the minimal diff (of `SettingsTree`s and of `serde_json` values) and
//! the partial write of `svc_core::settings`, against `json_patch::diff` (RFC 6902) and
//! `json_patch::merge` (RFC 7386) in the same run; and what building a `SettingsTree`
//! costs.
//!
//! Inputs: `unit_default_1pct`, the emulated unit's default tree (the document's whole
//! `Settings` schema with the emulator's defaults, about a thousand leaves) with 1% of
//! its leaves changed by a seeded PRNG; `large_1pct`, ten copies of it under different
//! top-level keys (ten times larger, same shape), 1% of leaves changed likewise.
//!
//! The text diff (`settings_diff_text`) starts from the JSON texts of the same trees
//! (written alike, or the old one with its keys in reverse order, which takes the walk
//! of the texts' nodes); the fleet case (`settings_fleet_text`) from a kept reference
//! tree and the new text.
//!
//! `cargo bench -p svc-benches --bench settings`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::Value;
use svc_core::settings::{self, SettingsTree};
use svc_test_support::settings as testing;
use svc_test_support::settings::reversed;

/// Fixed seed: the same leaves change on every run.
const SEED: u64 = 0x5e77_1265;

fn inputs() -> Vec<(&'static str, Value, Value)> {
    let unit = match svc_emulator::device::default_settings() {
        Ok(tree) => tree,
        Err(error) => panic!("the emulator's default tree: {error}"),
    };
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
        // The trees are built (parsed) once, as a fleet's trees are; not timed here
        // (`settings_tree/build` is).
        let (old_tree, new_tree) = (
            SettingsTree::from_value(&old),
            SettingsTree::from_value(&new),
        );
        assert!(old_tree.same_shape(&new_tree));
        assert!(
            old_tree.diff(&new_tree).to_patch() == patch,
            "both diffs agree"
        );
        group.bench_with_input(
            BenchmarkId::new("svc_core", name),
            &(&old_tree, &new_tree),
            |b, (old, new)| {
                b.iter(|| black_box(old).diff(black_box(new)));
            },
        );
        // The same, with the partial tree built as a `serde_json::Value` and the paths
        // copied out (`Patch`, what `svc_core_json` returns).
        group.bench_with_input(
            BenchmarkId::new("svc_core_to_patch", name),
            &(&old_tree, &new_tree),
            |b, (old, new)| {
                b.iter(|| black_box(old).diff(black_box(new)).to_patch());
            },
        );
        group.bench_with_input(
            BenchmarkId::new("svc_core_json", name),
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

/// The diff of two JSON texts (what the bindings and the fleet comparison of files get):
/// `settings::diff_json`, which parses only what differs, against parsing both texts
/// into `serde_json::Value`s and diffing them, and against the same with `json_patch`;
/// on texts written alike (compact, indented) and one of each.
fn bench_diff_text(c: &mut Criterion) {
    let mut group = c.benchmark_group("settings_diff_text");
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    for (name, old, new) in inputs().into_iter().take(1) {
        for (format, old_text, new_text) in [
            ("compact", old.to_string(), new.to_string()),
            ("indented", pretty(&old), pretty(&new)),
            ("indented_vs_compact", pretty(&old), new.to_string()),
            // The old tree's keys in reverse order: not the byte-by-byte path but the
            // settings walk of the two texts' nodes.
            ("reordered", reversed(&old).to_string(), new.to_string()),
        ] {
            let Ok(patch) = settings::diff_json(&old_text, &new_text) else {
                panic!("the texts are JSON")
            };
            assert!(patch == settings::diff(&old, &new), "both diffs agree");
            let id = format!("{name}_{format}");
            let texts = (old_text.as_str(), new_text.as_str());
            group.bench_with_input(BenchmarkId::new("svc_core", &id), &texts, |b, (o, n)| {
                b.iter(|| settings::diff_json(black_box(o), black_box(n)));
            });
            group.bench_with_input(
                BenchmarkId::new("serde_json_parse_then_diff", &id),
                &texts,
                |b, (o, n)| {
                    b.iter(|| {
                        let parse = |text: &str| serde_json::from_str::<Value>(text).ok();
                        let (old, new) = (parse(black_box(o)), parse(black_box(n)));
                        old.zip(new).map(|(old, new)| settings::diff(&old, &new))
                    });
                },
            );
            group.bench_with_input(
                BenchmarkId::new("serde_json_parse_then_json_patch", &id),
                &texts,
                |b, (o, n)| {
                    b.iter(|| {
                        let parse = |text: &str| serde_json::from_str::<Value>(text).ok();
                        let (old, new) = (parse(black_box(o)), parse(black_box(n)));
                        old.zip(new).map(|(old, new)| json_patch::diff(&old, &new))
                    });
                },
            );
        }
    }
    group.finish();
}

/// The fleet case: a reference `SettingsTree` kept, each unit's export arriving as JSON
/// text (compact, as a serializer writes the tree it read; or indented). `diff_json`
/// on the kept tree, against reading the text into a tree and diffing, and against
/// parsing it and `json_patch::diff` with the reference's value.
fn bench_fleet_text(c: &mut Criterion) {
    let mut group = c.benchmark_group("settings_fleet_text");
    for (name, old, new) in inputs() {
        let reference = SettingsTree::from_value(&old);
        for (format, text) in [
            ("compact", new.to_string()),
            (
                "indented",
                serde_json::to_string_pretty(&new).unwrap_or_default(),
            ),
        ] {
            let Ok(patch) = reference.diff_json(&text) else {
                panic!("the text is JSON")
            };
            assert!(patch == settings::diff(&old, &new), "both diffs agree");
            let id = format!("{name}_{format}");
            group.bench_with_input(BenchmarkId::new("diff_json", &id), &text, |b, text| {
                b.iter(|| reference.diff_json(black_box(text)));
            });
            group.bench_with_input(
                BenchmarkId::new("from_json_then_diff", &id),
                &text,
                |b, text| {
                    b.iter(|| {
                        SettingsTree::from_json(black_box(text))
                            .map(|tree| reference.diff(&tree).to_patch())
                    });
                },
            );
            group.bench_with_input(
                BenchmarkId::new("serde_json_parse_then_json_patch", &id),
                &text,
                |b, text| {
                    b.iter(|| {
                        serde_json::from_str::<Value>(black_box(text))
                            .map(|new| json_patch::diff(&old, &new))
                    });
                },
            );
        }
    }
    group.finish();
}

/// What a `SettingsTree` costs to build from a JSON value, against cloning the value:
/// of a shape no live tree has (the shape is built), and of the shape of a live tree
/// (the keys are checked against it; the usual case of a fleet or of successive reads).
fn bench_tree(c: &mut Criterion) {
    let mut group = c.benchmark_group("settings_tree");
    for (name, old, new) in inputs() {
        group.bench_with_input(BenchmarkId::new("build_new_shape", name), &old, |b, old| {
            b.iter(|| SettingsTree::from_value(black_box(old)));
        });
        let reference = SettingsTree::from_value(&new);
        group.bench_with_input(
            BenchmarkId::new("build_known_shape", name),
            &old,
            |b, old| {
                b.iter(|| SettingsTree::from_value(black_box(old)));
            },
        );
        assert!(SettingsTree::from_value(&old).same_shape(&reference));
        drop(reference);
        group.bench_with_input(BenchmarkId::new("clone_json", name), &old, |b, old| {
            b.iter(|| black_box(old).clone());
        });
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
        // The same write on a `SettingsTree`: a new tree sharing the shape and the
        // unchanged long values with the old one.
        let tree = SettingsTree::from_value(&old);
        assert!(tree.apply(&write).to_value() == new, "both applies agree");
        group.bench_with_input(
            BenchmarkId::new("svc_core_tree", name),
            &(&tree, &write),
            |b, (tree, write)| {
                b.iter(|| black_box(*tree).apply(black_box(write)));
            },
        );
    }
    group.finish();
}

criterion_group!(
    benches,
    bench_diff,
    bench_diff_text,
    bench_fleet_text,
    bench_apply,
    bench_tree
);
criterion_main!(benches);
