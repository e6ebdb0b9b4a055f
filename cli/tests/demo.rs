//! The demo is the main job: it must run the seed scenarios end to end on the embedded server
//! and every result must match what the scenario file expects.

use std::process::Command;

#[test]
fn demo_runs_every_seed_scenario_and_matches() {
    let out = Command::new(env!("CARGO_BIN_EXE_riverlet"))
        .arg("demo")
        .output()
        .expect("run riverlet demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "demo failed:\n{stdout}\n{stderr}");
    assert!(!stdout.contains("MISMATCH"), "{stdout}");
    // 10 seed reads plus 5 time-range windows, each marked ok.
    assert_eq!(stdout.matches("[ok]").count(), 15, "{stdout}");
    assert!(stdout.contains("Server stopped cleanly"), "{stdout}");
}
