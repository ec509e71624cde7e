//! `hwzip`: generate, co-simulate, synthesize and evaluate GPU compression hardware. The
//! options and each subcommand live in [`cli`]; this file parses, dispatches and maps the
//! outcome to the exit code (0 passed, 1 ran but failed or mismatched, 2 error).

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || matches!(
                    e.kind(),
                    ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                )
            {
                let _ = e.print();
                return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
            }
            // One line: clap's message without the usage block and the --help tip.
            let text = e.render().to_string();
            let msg: Vec<&str> = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            // clap quotes values with '…': a long value is cut like hwzip's own messages.
            let joined = msg.join(" ");
            let parts: Vec<String> = joined
                .split('\'')
                .enumerate()
                .map(|(i, p)| {
                    if i % 2 == 1 {
                        hwzip::files::quote(p)
                    } else {
                        p.to_string()
                    }
                })
                .collect();
            eprintln!("{}", hwzip::files::clip(&parts.join("'")));
            return ExitCode::from(2);
        }
    };
    if let Err(e) = hwzip::proc::install_signal_handlers() {
        eprintln!("error: cannot install signal handlers: {}", e);
        return ExitCode::from(2);
    }
    match cli::run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {}", e);
            ExitCode::from(2)
        }
    }
}
