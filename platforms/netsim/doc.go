// Package netsim runs network scenarios: a set of flows (bytes, start time)
// over links and routes given inline or by a SimGrid platform file, on the
// emulator's fluid network. It backs `starsim netsim`.
//
// Scenario file (JSON; units bytes, seconds, B/s):
//
//	{"links":  [{"id", "bandwidth", "latency"?, "sharing_policy"?}],
//	 "routes": [{"src", "dst", "links": [ids]}],
//	 "flows":  [{"id", "src", "dst", "bytes", "start"?}]}
//
// or "platform_file": PATH (relative to the scenario's directory) instead of
// links and routes. Routes are one-way. Unknown top-level keys are ignored;
// unknown keys inside a link, route or flow are errors (a misspelt optional
// field must not silently become its default). latency and start default to
// 0, sharing_policy to SHARED.
package netsim
