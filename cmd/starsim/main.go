// Command starsim predicts how a StarPU-style task runtime performs on a
// hybrid CPU+GPU machine, in simulated time. Run `starsim help`.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// version is the tool version written in every output header.
const version = "0.1.0"

// command is one `starsim` subcommand (or group of subcommands).
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// usageError makes main print the message and exit 2, as for bad flags.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func commands() []command {
	return []command{
		{"platform", "SimGrid platform files: show, build from a calibration", runPlatform},
		{"calibrate", "calibration files: import from StarPU, show, fit from samples", runCalibrate},
		{"run", "predict an application's performance (Cholesky, LU) on a calibrated machine", runRun},
		{"replay", "re-run a recorded tasks.rec under any scheduler (starpu_replay)", runReplay},
		{"sweep", "run many predictions (sizes, schedulers, what-if machines); CSV, JSON, plots, shards", runSweep},
		{"netsim", "simulate flows on a fluid network", runNetsim},
		{"compare", "compare two traces (native vs simulated): makespan, kernels, workers, transfers, distributions", runCompare},
		{"version", "print the version", func(_ []string, out, _ io.Writer) error {
			_, err := fmt.Fprintf(out, "starsim %s\n", version)
			return err
		}},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			return run([]string{args[1], "--help"}, stdout, stderr)
		}
		printUsage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			var ue *usageError
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.As(err, &ue):
				fmt.Fprintf(stderr, "starsim %s: %s\n", c.name, ue.msg)
				return 2
			default:
				fmt.Fprintf(stderr, "starsim: %v\n", err)
				return 1
			}
		}
	}
	fmt.Fprintf(stderr, "starsim: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "starsim %s: predict StarPU-style task runtimes on CPU+GPU machines, in simulated time.\n\nUsage: starsim COMMAND [flags] [args]\n\nCommands:\n", version)
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun `starsim COMMAND --help` for a command's flags.\n")
}

// newFlagSet returns a flag set that prints its usage to stderr and reports
// errors instead of exiting.
func newFlagSet(name, argsUsage, doc string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: starsim %s [flags] %s\n\n%s\n", name, argsUsage, strings.TrimSpace(doc))
		var has bool
		fs.VisitAll(func(*flag.Flag) { has = true })
		if has {
			fmt.Fprintf(stderr, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseInterspersed parses flags that may come before or after positional
// arguments (`show FILE --json` as well as `show --json FILE`).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// subcommand is one subcommand of a command group (platform, calibrate).
type subcommand struct {
	name string
	run  func(args []string, stdout, stderr io.Writer) error
}

// dispatch runs the subcommand args[0] of a command group, printing usage for help.
func dispatch(usage string, subs []subcommand, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return &usageError{"missing subcommand"}
		}
		return nil
	}
	var names []string
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(args[1:], stdout, stderr)
		}
		names = append(names, s.name)
	}
	return &usageError{fmt.Sprintf("unknown subcommand %q (want: %s)", args[0], strings.Join(names, ", "))}
}
