package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// MaxReplyBytes bounds one reply line.
const MaxReplyBytes = 1 << 20

// Process is an agent process and the line protocol on its stdin/stdout.
// Wall-clock timeouts bound every exchange; nothing here reads the
// simulated time.
type Process struct {
	name    string // the command line, for errors
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan line
	waited  chan error // the process's exit
	timeout time.Duration
	// exited holds the exit once seen (waited delivers it once).
	exited     bool
	exitErr    error
	transcript io.Writer
}

type line struct {
	b   []byte
	err error
}

// Start starts args[0] with args[1:] (no shell), its stderr going to
// stderr (nil: discarded). transcript (nil: none) receives every line
// exchanged, starsim's prefixed "> ", the agent's "< ".
func Start(args []string, stderr, transcript io.Writer, timeout time.Duration) (*Process, error) {
	if len(args) == 0 {
		return nil, errors.New("no command")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %v", args[0], err)
	}
	p := &Process{name: strings.Join(args, " "), cmd: cmd, stdin: in, lines: make(chan line, 1),
		waited: make(chan error, 1), timeout: timeout, transcript: transcript}
	go p.read(out)
	return p, nil
}

// read passes the agent's lines on; at the end of its stdout it waits for
// the process (so Wait is called once its output is read, as exec wants).
func (p *Process) read(out io.Reader) {
	r := bufio.NewReaderSize(out, 64<<10)
	for {
		b, err := readLine(r)
		if err != nil {
			if err != io.EOF {
				p.lines <- line{err: err}
			}
			close(p.lines)
			p.waited <- p.cmd.Wait()
			return
		}
		p.lines <- line{b: b}
	}
}

// readLine reads one line, without its end, of at most MaxReplyBytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > MaxReplyBytes {
			return nil, fmt.Errorf("a reply line longer than %d bytes", MaxReplyBytes)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(b) > 0:
			return nil, fmt.Errorf("a reply cut short: %q without its newline", clip(b))
		case err != nil:
			return nil, err
		}
		return bytes.TrimRight(b, "\r\n"), nil
	}
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// send writes v as one line, within the timeout.
func (p *Process) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if p.transcript != nil {
		p.transcript.Write(append([]byte("> "), b...))
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.stdin.Write(b)
		done <- err
	}()
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return p.gone("could not be written to")
		}
		return nil
	case <-timer.C:
		return fmt.Errorf("the agent read nothing for %v (wall clock)", p.timeout)
	}
}

// Exchange sends v and returns the agent's reply line, within the timeout.
func (p *Process) Exchange(v any) ([]byte, error) {
	if err := p.send(v); err != nil {
		return nil, err
	}
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	select {
	case l, ok := <-p.lines:
		if !ok {
			return nil, p.gone("exited before replying")
		}
		if l.err != nil {
			return nil, l.err
		}
		if p.transcript != nil {
			p.transcript.Write(append(append([]byte("< "), l.b...), '\n'))
		}
		return l.b, nil
	case <-timer.C:
		return nil, fmt.Errorf("no reply within %v (wall clock)", p.timeout)
	}
}

// gone describes the agent's exit (waiting for it a short while).
func (p *Process) gone(what string) error {
	if !p.exited {
		select {
		case p.exitErr = <-p.waited:
			p.exited = true
		case <-time.After(min(p.timeout, time.Second)):
			return fmt.Errorf("the agent %s", what)
		}
	}
	if p.exitErr != nil {
		return fmt.Errorf("the agent %s (%v)", what, p.exitErr)
	}
	return fmt.Errorf("the agent %s (exit status 0)", what)
}

// Close sends end (no reply), closes the agent's stdin and waits for it to
// exit, killing it after the timeout. An exit status other than 0 is an
// error; a line it wrote after end too.
func (p *Process) Close(end any) error {
	var first error
	if end != nil {
		if err := p.send(end); err != nil {
			first = err
		}
	}
	p.stdin.Close()
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if ok && first == nil {
				if l.err != nil {
					first = l.err
				} else {
					first = fmt.Errorf("the agent wrote %q after the end", clip(l.b))
				}
			}
			if !ok {
				p.lines = nil // drained: wait for the exit
			}
		case err := <-p.waited:
			p.exited, p.exitErr = true, err
			if err != nil && first == nil {
				first = fmt.Errorf("the agent ended with %v", err)
			}
			return first
		case <-timer.C:
			p.cmd.Process.Kill()
			<-p.waited
			p.exited = true
			if first == nil {
				first = fmt.Errorf("the agent did not exit within %v of its stdin's end (killed)", p.timeout)
			}
			return first
		}
	}
}

// Kill ends the process at once (after an error).
func (p *Process) Kill() {
	if p.exited {
		return
	}
	p.stdin.Close()
	p.cmd.Process.Kill()
	for range p.lines {
	}
	p.exitErr, p.exited = <-p.waited, true
}
