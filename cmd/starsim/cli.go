package main

// The command tree on spf13/cobra (dispatch, help, --version) and
// spf13/pflag (GNU flags: --flag value, --flag=value, before or after the
// positional arguments, -- ending them).

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runner runs a command on its positional arguments, once its flags are
// parsed.
type runner func(pos []string, stdout, stderr io.Writer) error

// leaf makes a command: use is its name and the arguments it takes
// ("replay TASKS.rec"), doc its help; setup declares its flags on fs and
// returns what runs it.
func leaf(use, short, doc string, setup func(fs *pflag.FlagSet) runner) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Long: strings.TrimSpace(doc)}
	run := setup(c.Flags())
	c.RunE = func(c *cobra.Command, pos []string) error { return run(pos, c.OutOrStdout(), c.ErrOrStderr()) }
	return c
}

// group makes a command of subcommands. Without a subcommand it writes its
// usage to stderr (exit 2); an unknown one is a usage error listing them.
func group(name, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: name, Short: short, Annotations: map[string]string{isGroup: "yes"}}
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			writeHelp(c.ErrOrStderr(), c)
			return errUsageShown
		}
		return unknownCommand(c, args[0])
	}
	c.AddCommand(subs...)
	return c
}

// isGroup marks a group's annotations.
const isGroup = "group"

// newRoot builds the command tree for one invocation (args: the command
// line after the program name, written into traces' headers).
func newRoot(args []string, stdout, stderr io.Writer) *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:           "starsim",
		Short:         "predict StarPU-style task runtimes on CPU+GPU machines, in simulated time",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(c, args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error {
			if showVersion {
				return printVersion(c.OutOrStdout())
			}
			writeHelp(c.ErrOrStderr(), c)
			return errUsageShown
		},
	}
	// --version is a flag of ours, not cobra's: cobra's prints through a
	// text/template, and any template use keeps the linker from dropping
	// unused methods (go build and compare the binary's size to see it).
	root.Flags().BoolVarP(&showVersion, "version", "v", false, "print the version")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagParseError)
	root.SetHelpFunc(func(c *cobra.Command, _ []string) { writeHelp(c.OutOrStdout(), c) })
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetHelpCommand(&cobra.Command{
		Use:    "help [COMMAND [SUBCOMMAND]]",
		Short:  "print a command's help",
		Hidden: true,
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil {
				return err
			}
			if len(rest) > 0 {
				return unknownCommand(target, rest[0])
			}
			writeHelp(c.OutOrStdout(), target)
			return nil
		},
	})
	cmdline := "starsim " + strings.Join(args, " ")
	root.AddCommand(
		platformCmd(), calibrateCmd(), runCmd(cmdline), replayCmd(cmdline), sweepCmd(), netsimCmd(), compareCmd(), dagCmd(),
		&cobra.Command{Use: "version", Short: "print the version", Args: cobra.ArbitraryArgs,
			Long: "Prints starsim's version (as --version does), with the commit it was built from\nwhen the build recorded it.",
			RunE: func(c *cobra.Command, args []string) error {
				if len(args) > 0 {
					return &usageError{fmt.Sprintf("unexpected argument %q", args[0])}
				}
				return printVersion(c.OutOrStdout())
			}},
	)
	root.InitDefaultHelpCmd() // now, for commandName's Find
	return root
}

// subcommands lists c's subcommands people use (not help), sorted.
func subcommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// unknownCommand is the usage error for a command or subcommand c lacks,
// listing those it has.
func unknownCommand(c *cobra.Command, name string) error {
	var names []string
	for _, s := range subcommands(c) {
		names = append(names, s.Name())
	}
	what := "subcommand"
	if !c.HasParent() {
		what = "command"
	}
	if len(names) == 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q (%s has no subcommands)", name, c.CommandPath())}
	}
	return &usageError{fmt.Sprintf("unknown %s %q (want %s; see %s --help)", what, name, strings.Join(names, ", "), c.CommandPath())}
}

// helpWidth is the width help texts wrap the flags' descriptions at.
const helpWidth = 100

// writeHelp writes c's help: the command list for the root and for a
// group, else the usage line, the description and the flags.
func writeHelp(w io.Writer, c *cobra.Command) {
	c.InitDefaultHelpFlag() // cobra adds it to the command it runs only
	var b strings.Builder
	subs := subcommands(c)
	switch {
	case !c.HasParent():
		fmt.Fprintf(&b, "starsim %s: %s.\n\nUsage: starsim COMMAND [flags] [args]\n\nCommands:\n", version, c.Short)
		listCommands(&b, subs)
		fmt.Fprintf(&b, "\nFlags:\n%s\nRun `starsim COMMAND --help` (or `starsim help COMMAND`) for a command's flags.\n", c.LocalFlags().FlagUsagesWrapped(helpWidth))
	case c.Annotations[isGroup] != "":
		fmt.Fprintf(&b, "Usage: %s SUBCOMMAND [flags] [args]\n\n%s.\n\nSubcommands:\n", c.CommandPath(), capitalize(c.Short))
		listCommands(&b, subs)
		fmt.Fprintf(&b, "\nRun `%s SUBCOMMAND --help` for a subcommand's flags.\n", c.CommandPath())
	default:
		args := ""
		if _, a, ok := strings.Cut(c.Use, " "); ok {
			args = " " + a
		}
		fmt.Fprintf(&b, "Usage: %s [flags]%s\n\n%s\n", c.CommandPath(), args, c.Long)
		if len(subs) > 0 {
			fmt.Fprintf(&b, "\nSubcommands:\n")
			listCommands(&b, subs)
		}
		fmt.Fprintf(&b, "\nFlags:\n%s", c.LocalFlags().FlagUsagesWrapped(helpWidth))
	}
	io.WriteString(w, b.String())
}

// listCommands writes one line per command: its name and summary.
func listCommands(b *strings.Builder, cs []*cobra.Command) {
	width := 0
	for _, c := range cs {
		width = max(width, len(c.Name()))
	}
	for _, c := range cs {
		fmt.Fprintf(b, "  %-*s  %s\n", width, c.Name(), c.Short)
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flagsSet lists the flags given on the command line.
func flagsSet(fs *pflag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *pflag.Flag) { set[fl.Name] = true })
	return set
}

// flagParseError turns pflag's errors into usage errors in the words of
// every other flag message ("--ncpu 1e3: want an integer"), pointing to
// the command's help.
func flagParseError(c *cobra.Command, err error) error {
	see := fmt.Sprintf(" (see %s --help)", c.CommandPath())
	var (
		notExist *pflag.NotExistError
		invalid  *pflag.InvalidValueError
		noValue  *pflag.ValueRequiredError
	)
	switch {
	case errors.As(err, &notExist) && notExist.GetSpecifiedShortnames() != "":
		given := notExist.GetSpecifiedShortnames()
		name, _, _ := strings.Cut(given, "=")
		if len(name) > 1 && c.Flags().Lookup(name) != nil {
			return &usageError{fmt.Sprintf("-%s: unknown flag: long flags take two dashes, --%s%s", name, name, see)}
		}
		return &usageError{fmt.Sprintf("-%s: unknown flag%s", given[:1], see)}
	case errors.As(err, &notExist):
		return &usageError{fmt.Sprintf("--%s: unknown flag%s", notExist.GetSpecifiedName(), see)}
	case errors.As(err, &invalid):
		want := "want a value of type " + invalid.GetFlag().Value.Type()
		switch invalid.GetFlag().Value.Type() {
		case "int":
			want = "want an integer"
		case "uint64":
			want = "want an integer >= 0"
		case "float64":
			want = "want a number"
		case "bool":
			want = "want true or false"
		}
		if errors.Is(err, strconv.ErrRange) {
			want = "out of range"
		}
		return flagError(written(invalid.GetFlag()), invalid.GetValue(), "%s%s", want, see)
	case errors.As(err, &noValue):
		return &usageError{fmt.Sprintf("%s: needs a value%s", dashed(written(noValue.GetFlag())), see)}
	}
	return &usageError{err.Error() + see}
}

// written is the name messages give a flag (see dashed): its letter when
// it has one ("-j", "-o": how it is documented), else its name.
func written(fl *pflag.Flag) string {
	if fl.Shorthand != "" {
		return "-" + fl.Shorthand
	}
	return fl.Name
}

// printVersion prints "starsim VERSION" (buildVersion).
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "starsim %s\n", buildVersion(debug.ReadBuildInfo()))
	return err
}

// buildVersion is the version `starsim version` prints: the module's
// version when the binary was built from a tagged module (go install
// ...@v1.2.3), else the constant; with the commit and whether the tree
// was modified when the build recorded them (a build inside the git
// checkout, without -buildvcs=false).
func buildVersion(info *debug.BuildInfo, ok bool) string {
	v := version
	if !ok || info == nil {
		return v
	}
	if mv := info.Main.Version; mv != "" && mv != "(devel)" && !strings.Contains(mv, "-0.") && !strings.HasPrefix(mv, "v0.0.0-") {
		v = strings.TrimPrefix(mv, "v")
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (commit " + rev
		if modified == "true" {
			v += ", modified"
		}
		v += ")"
	}
	return v
}
