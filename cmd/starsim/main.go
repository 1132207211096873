// Command starsim predicts how a StarPU-style task runtime performs on a
// hybrid CPU+GPU machine, in simulated time. Run `starsim help`.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/starsim/starsim/internal/atomicfile"
)

// version is the tool version written in every output header; `starsim
// version` adds what the build info knows (buildVersion).
const version = "0.1.0"

// usageError makes main print the message and exit 2, as for bad flags.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// errUsageShown is returned once a command's usage has been written to
// stderr (no command or subcommand given): exit 2 with no further line.
var errUsageShown = errors.New("usage shown")

func main() {
	args := os.Args[1:]
	handleSignals(commandName(args))
	code := run(args, os.Stdout, os.Stderr)
	waitIfInterrupted()
	os.Exit(code)
}

// interrupted is set once a signal is being handled: the handler removes
// the outputs and exits, and the command, whose writes may then fail,
// must neither report that nor exit first.
var interrupted atomic.Bool

// waitIfInterrupted blocks for good while a signal is handled (the handler
// exits the process).
func waitIfInterrupted() {
	if interrupted.Load() {
		select {}
	}
}

// handleSignals makes SIGINT and SIGTERM remove every output not yet
// complete (see atomicfile) and say what was not written before the
// process exits with 128 + the signal number.
func handleSignals(cmd string) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-c
		interrupted.Store(true)
		lost := atomicfile.RemovePending()
		msg := fmt.Sprintf("%s: interrupted by %s", prefix(cmd), signalName(sig))
		if note := interruptNote.Load(); note != nil {
			msg += "; " + (*note)()
			if isTerminal(os.Stderr) {
				msg = "\n" + msg // below the sweep's progress bar
			}
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

// prefix is what every message of a command starts with: "starsim run",
// "starsim calibrate import", "starsim" (cmd: commandName's result).
func prefix(cmd string) string {
	if cmd == "" {
		return "starsim"
	}
	return "starsim " + cmd
}

// commandName is the command args run, as messages name it: "run",
// "calibrate import", "sweep merge"; "" for none or an unknown one.
func commandName(args []string) string {
	c, _, err := newRoot(args, io.Discard, io.Discard).Find(args)
	if err != nil || c == nil || !c.HasParent() {
		return ""
	}
	return strings.TrimPrefix(c.CommandPath(), "starsim ")
}

// run is main without the process: it returns the exit status. Help goes
// to stdout (exit 0). A failure prints one line, "starsim CMD: what was
// wrong", on stderr and nothing on stdout: exit 2 for a usage error (a bad
// flag, argument or flag value), 1 for bad input or a failed run. With no
// command (or a group's subcommand) missing, the usage goes to stderr,
// exit 2.
func run(args []string, stdout, stderr io.Writer) int {
	atomicfile.Reset()
	root := newRoot(args, stdout, stderr)
	root.SetArgs(args)
	c, err := root.ExecuteC()
	name := ""
	if c != nil && c.HasParent() {
		name = strings.TrimPrefix(c.CommandPath(), "starsim ")
	}
	if err != nil {
		waitIfInterrupted()
	}
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsageShown):
		return 2
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %s\n", prefix(name), oneLine(ue.msg))
		return 2
	default:
		msg := errorText(err)
		if lost := atomicfile.NotWritten(); len(lost) > 0 {
			msg += " (not written: " + strings.Join(lost, ", ") + ")"
		}
		fmt.Fprintf(stderr, "%s: %s\n", prefix(name), msg)
		return 1
	}
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
