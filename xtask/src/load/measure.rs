//! The scenarios' measurement: the clients started and their tallies gathered, the
//! figures printed and what the check needs.

use std::time::Duration;

use super::clients::{Scenario, Shared, Tally, access_token, client, client_loop, prepare_listing};
use super::emulator::{Emulator, clock_ticks};
use super::{KEPT_ERRORS, MAX_RSS_GROWTH, Options};
use anyhow::{Context, Result};
use tokio::time::Instant;

/// What the check needs of one scenario.
pub(super) struct Report {
    scenario: Scenario,
    /// The emulator's highest memory during the warm-up (or at its end).
    baseline_kib: u64,
    /// Its memory once the clients have stopped.
    last_kib: u64,
    errors: u64,
}

impl Report {
    pub(super) fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let name = self.scenario.title();
        if self.errors > 0 {
            problems.push(format!("{name}: {} errors", self.errors));
        }
        if self.last_kib as f64 > self.baseline_kib as f64 * MAX_RSS_GROWTH {
            problems.push(format!(
                "{name}: emulator memory grew from {} (warm-up) to {}",
                mib(self.baseline_kib),
                mib(self.last_kib)
            ));
        }
        problems
    }
}

pub(super) async fn scenarios(emulator: &Emulator, options: &Options) -> Result<Vec<Report>> {
    let http = client()?;
    let shared = Shared {
        cloud: emulator.field("base_url")?,
        organization: emulator.field("organization_id")?,
        token: access_token(&http, emulator).await?,
        device: emulator.field("device_url")?,
    };
    prepare_listing(&http, &shared).await?;
    // Built before any measurement: each client is one connection per server, kept
    // across its requests as an SDK client keeps it.
    let clients = (0..options.clients)
        .map(|_| client())
        .collect::<Result<Vec<_>>>()?;
    let mut reports = Vec::new();
    for scenario in [
        Scenario::ListContainers,
        Scenario::Upload,
        Scenario::UnitSettings,
    ] {
        reports.push(measure(emulator, options, &shared, &clients, scenario).await?);
    }
    Ok(reports)
}

async fn measure(
    emulator: &Emulator,
    options: &Options,
    shared: &Shared,
    http: &[reqwest::Client],
    scenario: Scenario,
) -> Result<Report> {
    println!("--- {}", scenario.title());
    let start = Instant::now();
    let measured_from = start + Duration::from_secs_f64(options.warmup);
    let until = measured_from + Duration::from_secs_f64(options.seconds);
    let clients: Vec<_> = http
        .iter()
        .enumerate()
        .map(|(index, http)| {
            let (shared, http) = (shared.clone(), http.clone());
            tokio::spawn(async move {
                client_loop(scenario, index, &http, &shared, measured_from, until).await
            })
        })
        .collect();

    // Memory every second: during the warm-up (the level the check compares with),
    // then from the end of the warm-up on (the figures); CPU over the measured span.
    let mut warmup_kib = vec![emulator.rss_kib()?];
    let mut tick = start;
    while tick + Duration::from_secs(1) < measured_from {
        tick += Duration::from_secs(1);
        tokio::time::sleep_until(tick).await;
        warmup_kib.push(emulator.rss_kib()?);
    }
    tokio::time::sleep_until(measured_from).await;
    let cpu_from = emulator.cpu_ticks()?;
    let mut rss_kib = vec![emulator.rss_kib()?];
    let mut tick = measured_from;
    while tick + Duration::from_secs(1) < until {
        tick += Duration::from_secs(1);
        tokio::time::sleep_until(tick).await;
        rss_kib.push(emulator.rss_kib()?);
    }
    tokio::time::sleep_until(until).await;
    let cpu = emulator.cpu_ticks()?.saturating_sub(cpu_from) as f64 / clock_ticks();
    let mut total = Tally::default();
    for client in clients {
        let tally = client.await.context("a load client panicked")?;
        total.latencies.extend(tally.latencies);
        total.other += tally.other;
        total.errors += tally.errors;
        for message in tally.messages {
            if total.messages.len() < KEPT_ERRORS {
                total.messages.push(message);
            }
        }
    }
    rss_kib.push(emulator.rss_kib()?);
    print_figures(options, &mut total, &rss_kib, cpu);
    let baseline_kib = warmup_kib
        .iter()
        .chain(rss_kib.first())
        .copied()
        .max()
        .unwrap_or_default();
    Ok(Report {
        scenario,
        baseline_kib,
        last_kib: rss_kib.last().copied().unwrap_or_default(),
        errors: total.errors,
    })
}

fn print_figures(options: &Options, total: &mut Tally, rss_kib: &[u64], cpu_seconds: f64) {
    let seconds = options.seconds;
    total.latencies.sort_unstable();
    let count = total.latencies.len();
    let at = |q: f64| -> f64 {
        if count == 0 {
            return 0.0;
        }
        // Nearest rank: the smallest latency with at least q of them at or below it.
        let rank = ((q * count as f64).ceil() as usize).clamp(1, count);
        f64::from(total.latencies[rank - 1]) / 1000.0
    };
    println!(
        "  {count} requests ({:.0}/s), {} other requests, {} errors; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        count as f64 / seconds,
        total.other,
        total.errors,
        at(0.5),
        at(0.99),
        at(1.0)
    );
    let max = rss_kib.iter().copied().max().unwrap_or_default();
    println!(
        "  emulator RSS: first {}, last {}, max {} ({} samples, 1 s apart); emulator CPU {:.0}% of one core",
        mib(rss_kib.first().copied().unwrap_or_default()),
        mib(rss_kib.last().copied().unwrap_or_default()),
        mib(max),
        rss_kib.len(),
        cpu_seconds / seconds * 100.0
    );
    let series: Vec<String> = rss_kib
        .iter()
        .map(|kib| format!("{:.1}", *kib as f64 / 1024.0))
        .collect();
    println!("  emulator RSS MiB each second: {}", series.join(" "));
    for message in &total.messages {
        println!("  error: {message}");
    }
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}
