//! Argument parsers, defaults and checks shared by the subcommands.

use hwzip::config::Config;
use hwzip::engines;
use std::path::PathBuf;

/// `--engine` and `--config`, as `gen`, `cosim` and `eval` take them.
#[derive(clap::Args)]
pub struct EngineArgs {
    /// Engine.
    #[arg(long, default_value = "zvc", value_parser = engine_arg())]
    pub engine: String,
    /// YAML configuration (parameters); defaults otherwise.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// `--engine` values: the registry's engine names (listed by `--help`).
pub fn engine_arg() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(engines::ALL.iter().map(|e| e.name()))
}

/// `--unit` help, from the registry: every engine's units (with `cosim`, also the test-only
/// loop-backs and `all`).
pub fn unit_help(cosim: bool) -> String {
    let per: Vec<String> = engines::ALL
        .iter()
        .map(|&e| {
            let u: Vec<String> = if cosim {
                engines::known_cosim_units(e)
            } else {
                e.unit_names().iter().map(|u| u.to_string()).collect()
            };
            format!("{}: {}", e.name(), u.join(" | "))
        })
        .collect();
    if cosim {
        format!("Unit ({}), or all [default: all]", per.join("; "))
    } else {
        format!("Only this unit ({}) [default: every unit]", per.join("; "))
    }
}

/// `--gate-cosim` / `--energy` counts: gate-level runs are about 10^3 times slower than RTL
/// ones, so at most 10^6 (hours for the largest netlist).
pub fn gate_count() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(0..=1_000_000)
}

/// `--jobs`: at least 1; by default the number of cores.
pub fn default_jobs(jobs: Option<usize>) -> Result<usize, String> {
    match jobs {
        Some(0) => Err("--jobs must be at least 1".into()),
        Some(j) => Ok(j),
        None => Ok(std::thread::available_parallelism().map_or(2, |n| n.get())),
    }
}

/// The `--config` file, or the defaults without one.
pub fn load_config(path: &Option<PathBuf>) -> Result<Config, String> {
    match path {
        Some(p) => Config::load(p),
        None => Ok(Config::default()),
    }
}

/// How reports name the `--config` file: its stem, or `default` without one.
pub fn config_label(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => p
            .file_stem()
            .map_or("custom".into(), |s| s.to_string_lossy().into_owned()),
        None => "default".into(),
    }
}

/// `--lines` of any command: at least 1, at most [`hwzip::config::MAX_COSIM_LINES`].
pub fn check_lines(l: u64) -> Result<(), String> {
    if !(1..=hwzip::config::MAX_COSIM_LINES).contains(&l) {
        return Err(format!(
            "--lines {} must be in 1..={}",
            l,
            hwzip::config::MAX_COSIM_LINES
        ));
    }
    Ok(())
}
