// Command starsim predicts how a StarPU-style task runtime performs on a
// hybrid CPU+GPU machine, in simulated time. Run `starsim help`.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/starsim/starsim/internal/atomicfile"
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
	args := os.Args[1:]
	handleSignals(commandName(args))
	os.Exit(run(args, os.Stdout, os.Stderr))
}

// handleSignals makes SIGINT and SIGTERM remove every output not yet
// complete (see atomicfile) and say what was not written before the
// process exits with 128 + the signal number.
func handleSignals(cmd string) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-c
		lost := atomicfile.RemovePending()
		msg := fmt.Sprintf("starsim %s: interrupted by %s", cmd, signalName(sig))
		if note := interruptNote.Load(); note != nil {
			msg += "; " + (*note)()
		}
		if len(lost) > 0 {
			msg += "; not written: " + strings.Join(lost, ", ")
		} else {
			msg += "; no output left behind"
		}
		fmt.Fprintln(os.Stderr, msg)
		code := 130
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		os.Exit(code)
	}()
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// interruptNote, when set, says how far the command got (a sweep: how many
// jobs had finished), for the interruption message.
var interruptNote atomic.Pointer[func() string]

// groups are the commands with subcommands, named with them in messages.
var groups = map[string][]string{
	"platform":  {"show", "build"},
	"calibrate": {"import", "show", "fit"},
	"sweep":     {"merge"},
}

// commandName is the command args run, as messages name it: "run",
// "calibrate import", "sweep merge".
func commandName(args []string) string {
	if len(args) == 0 {
		return ""
	}
	if len(args) > 1 {
		for _, sub := range groups[args[0]] {
			if args[1] == sub {
				return args[0] + " " + sub
			}
		}
	}
	return args[0]
}

// run is main without the process: it returns the exit status. A failure
// prints one line, "starsim CMD: what was wrong", on stderr and nothing on
// stdout: exit 2 for a usage error (a bad flag, argument or flag value), 1
// for bad input or a failed run.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			return run([]string{args[1], "--help"}, stdout, stderr)
		}
		printUsage(stdout)
		return 0
	}
	atomicfile.Reset()
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
				fmt.Fprintf(stderr, "starsim %s: %s\n", commandName(args), oneLine(ue.msg))
				return 2
			default:
				msg := errorText(err)
				if lost := atomicfile.NotWritten(); len(lost) > 0 {
					msg += " (not written: " + strings.Join(lost, ", ") + ")"
				}
				fmt.Fprintf(stderr, "starsim %s: %s\n", commandName(args), msg)
				return 1
			}
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	sort.Strings(names)
	fmt.Fprintf(stderr, "starsim: unknown command %q (want %s; see starsim help)\n", args[0], strings.Join(names, ", "))
	return 2
}

// errorText is an error's message on one line; an error of the os
// package reads "PATH: reason".
func errorText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) && err.Error() == pe.Error() {
		return oneLine(pe.Path + ": " + pe.Err.Error())
	}
	return oneLine(err.Error())
}

// oneLine joins a message's lines (errors.Join's, for one) with "; ".
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
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
// arguments (`show FILE --json` as well as `show --json FILE`). A bad flag
// is a one-line usage error; -h prints the usage.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	usage := fs.Usage
	fs.Usage = func() {} // the flag package calls it on errors too
	defer func() { fs.Usage = usage }()
	out := fs.Output()
	fs.SetOutput(io.Discard) // and prints the error: it is returned instead
	defer fs.SetOutput(out)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				usage()
				return nil, err
			}
			return nil, &usageError{err.Error() + " (see starsim " + fs.Name() + " --help)"}
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
	var names []string
	for _, s := range subs {
		names = append(names, s.name)
	}
	if len(args) == 0 {
		return &usageError{fmt.Sprintf("missing subcommand (want %s; see --help)", strings.Join(names, ", "))}
	}
	if args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		return nil
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(args[1:], stdout, stderr)
		}
	}
	return &usageError{fmt.Sprintf("unknown subcommand %q (want %s)", args[0], strings.Join(names, ", "))}
}
