package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// fields decodes one reply line into its keys, refusing unknown keys and
// anything but one JSON object.
func fields(line []byte, allowed ...string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object: null")
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	for k := range m {
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("unknown key %q (want %s)", k, strings.Join(allowed, ", "))
		}
	}
	return m, nil
}

// intField reads key as an integer; ok is false when it is absent.
func intField(m map[string]json.RawMessage, key string) (v int, ok bool, err error) {
	raw, ok := m[key]
	if !ok {
		return 0, false, nil
	}
	var n json.Number
	if len(raw) > 0 && raw[0] == '"' { // json.Number takes "5" too
		return 0, true, fmt.Errorf("%s: %s is not an integer", key, raw)
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, true, fmt.Errorf("%s: %s is not an integer", key, raw)
	}
	i, err := n.Int64()
	if err != nil || i != int64(int(i)) {
		return 0, true, fmt.Errorf("%s: %s is not an integer", key, raw)
	}
	return int(i), true, nil
}

func boolField(m map[string]json.RawMessage, key string) (v, ok bool, err error) {
	raw, ok := m[key]
	if !ok {
		return false, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, true, fmt.Errorf("%s: %s is not true or false", key, raw)
	}
	return v, true, nil
}

// checkSeq checks a reply's seq against the message's.
func checkSeq(m map[string]json.RawMessage, want int) error {
	seq, ok, err := intField(m, "seq")
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("no seq (want %d)", want)
	case seq != want:
		return fmt.Errorf("seq %d answers another message (want %d)", seq, want)
	}
	return nil
}

// ParseHelloReply reads the agent's answer to hello.
func ParseHelloReply(line []byte) (HelloReply, error) {
	var r HelloReply
	m, err := fields(line, "type", "version", "name")
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(m["type"], &r.Type); err != nil || r.Type != "hello" {
		return r, fmt.Errorf(`type %s: want "hello"`, m["type"])
	}
	v, ok, err := intField(m, "version")
	if err != nil {
		return r, err
	}
	if !ok || v != Version {
		return r, fmt.Errorf("version %s: starsim speaks version %d", m["version"], Version)
	}
	r.Version = v
	if raw, ok := m["name"]; ok {
		if err := json.Unmarshal(raw, &r.Name); err != nil {
			return r, fmt.Errorf("name: %s is not a string", raw)
		}
	}
	return r, nil
}

// ParsePushReply reads the answer to push message seq: a worker among
// candidates (with an optional prefetch), or a deferral.
func ParsePushReply(line []byte, seq int, candidates []Candidate) (PushReply, error) {
	r := PushReply{Seq: seq, Worker: -1}
	m, err := fields(line, "seq", "worker", "prefetch", "defer")
	if err != nil {
		return r, err
	}
	if err := checkSeq(m, seq); err != nil {
		return r, err
	}
	w, hasW, err := intField(m, "worker")
	if err != nil {
		return r, err
	}
	d, hasD, err := boolField(m, "defer")
	if err != nil {
		return r, err
	}
	p, hasP, err := boolField(m, "prefetch")
	if err != nil {
		return r, err
	}
	switch {
	case hasW && hasD:
		return r, fmt.Errorf("both worker and defer: want one")
	case hasD:
		if !d {
			return r, fmt.Errorf("defer false: want a worker, or defer true")
		}
		if hasP {
			return r, fmt.Errorf("prefetch with defer: prefetch goes with a worker")
		}
		r.Defer = true
		return r, nil
	case !hasW:
		return r, fmt.Errorf("neither worker nor defer")
	}
	ok := false
	var ids []string
	for _, c := range candidates {
		ok = ok || c.Worker == w
		ids = append(ids, fmt.Sprint(c.Worker))
	}
	if !ok {
		return r, fmt.Errorf("worker %d cannot run the task (candidates: %s)", w, strings.Join(ids, ", "))
	}
	r.Worker, r.Prefetch = w, p
	return r, nil
}

// ParsePopReply reads the answer to pop message seq: a task id (checked
// by the caller) or null.
func ParsePopReply(line []byte, seq int) (PopReply, error) {
	r := PopReply{Seq: seq, Task: -1}
	m, err := fields(line, "seq", "task")
	if err != nil {
		return r, err
	}
	if err := checkSeq(m, seq); err != nil {
		return r, err
	}
	raw, ok := m["task"]
	if !ok {
		return r, fmt.Errorf("no task (want a deferred task's id, or null)")
	}
	if string(raw) == "null" {
		return r, nil
	}
	t, _, err := intField(m, "task")
	if err != nil {
		return r, err
	}
	if t < 0 {
		return r, fmt.Errorf("task %d: want a task id >= 0, or null", t)
	}
	r.Task = t
	return r, nil
}
