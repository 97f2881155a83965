// fabricsim: command-line entry point.  Thin: parses the command line and
// hands over to the subcommands.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "fabricsim/stats/h5_writer.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/signals.hpp"
#include "fabricsim/version_info.hpp"

int main(int argc, char** argv) {
  using namespace fabricsim;
  CLI::App cli{"fabricsim: parallel packet-level simulator of ML and HPC networks"};
  cli.require_subcommand(0, 1);
  cli.set_version_flag("--version",
                       std::string("fabricsim ") + build_info::version + " (git " + build_info::git_sha + ")");

  app::RunOptions run_opts;
  auto* run = cli.add_subcommand("run", "Run a simulation (the built-in default scenario without CONFIG)");
  run->add_option("config", run_opts.config, "TOML configuration file")->check(CLI::ExistingFile);
  run->add_option("--set", run_opts.overrides, "Override a parameter: SECTION.KEY=VALUE (repeatable)")
      ->type_name("SECTION.KEY=VALUE");
  run->add_option("-o,--output", run_opts.output, "HDF5 result file (default: output.file)");

  app::InfoOptions info_opts;
  auto* info = cli.add_subcommand("info", "Describe what a configuration would build, without simulating");
  info->add_option("config", info_opts.config, "TOML configuration file")->check(CLI::ExistingFile);
  info->add_option("--set", info_opts.overrides, "Override a parameter: SECTION.KEY=VALUE (repeatable)")
      ->type_name("SECTION.KEY=VALUE");
  info->add_option("--ranks", info_opts.ranks, "Also report partition quality for N ranks")->check(CLI::Range(1, 1 << 20));
  info->add_flag("--json", info_opts.json, "Print one JSON object");
  info->add_flag("--full", info_opts.full,
                 "Build fabrics over 10 M directed links and compute the fluid estimate on those over 200,000 too "
                 "(minutes on the largest)");

  cli.add_subcommand("params", "Print every parameter with unit, default and documentation (Markdown)");

  app::ExportOptions export_opts;
  auto* exp = cli.add_subcommand("export-chakra",
                                 "Write the configured dnn, collective or trace job out as a Chakra trace (PREFIX.RANK.et)");
  exp->add_option("config", export_opts.config, "TOML configuration file")->check(CLI::ExistingFile);
  exp->add_option("--set", export_opts.overrides, "Override a parameter: SECTION.KEY=VALUE (repeatable)")
      ->type_name("SECTION.KEY=VALUE");
  exp->add_option("-o,--output", export_opts.output, "PREFIX of the files: PREFIX.0.et, PREFIX.1.et, ...")->required();

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help and the version itself (exit code 0).  Errors get
    // the one-line form of configuration errors, and exit 2 like them.
    if (e.get_exit_code() == 0) return cli.exit(e);
    std::string what = e.what();
    for (char& c : what)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "error: command line: %s (fabricsim --help for usage)\n", util::one_line(what).c_str());
    return 2;
  }

  if (cli.got_subcommand("params")) return app::params_command();
  if (cli.got_subcommand("info")) return app::info_command(info_opts);
  if (cli.got_subcommand("export-chakra")) return app::export_chakra_command(export_opts);
  if (cli.got_subcommand("run") || cli.get_subcommands().empty()) {
    if (cli.get_subcommands().empty()) {
      std::cout << cli.help();
      return 0;
    }
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    // After MPI's own set-up: an interrupted run removes its unfinished
    // output and exits with 128 + the signal (util/signals.hpp).
    util::install_interrupt_handlers();
    int rc = app::run_command(run_opts);
    if (stats::H5Writer::library_unusable()) {
      // HDF5 failed to close an abandoned file (its error was reported) and
      // would crash in its clean-up inside MPI_Finalize: leave without it.
      std::fflush(nullptr);
      std::_Exit(rc);
    }
    MPI_Finalize();
    return rc;
  }
  return 0;
}
