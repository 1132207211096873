// Package network is a fluid network model in simulated time, SimGrid's
// CM02 model as StarPU configures it: flows share link bandwidth by
// weighted max-min fairness (package emulator/maxmin).
//
// Key concepts
//
//   - Link: bandwidth (B/s), latency (s) and a sharing policy: SHARED links
//     split their bandwidth among the flows crossing them, FATPIPE links
//     bound each flow alone.
//   - Route: a fixed sequence of links; a link listed twice counts twice
//     for latency and bandwidth. Its sharing penalty is its latency (1 for
//     a route of latency exactly 0).
//   - Flow (Send): bytes along a route. It first spends the route latency
//     without using bandwidth (a zero-byte flow ends there), then shares
//     bandwidth with the active flows, weighted by 1/penalty, until its
//     bytes are sent; rates are recomputed whenever a flow starts sharing
//     or finishes, so completion times are exact.
//
// Flows of one route always have equal rates: the solver handles one
// variable per route (k flows: one variable of penalty/k), and only the
// connected component of routes and links a change touches is re-solved,
// once per simulated instant (solve.go); links crossed by the very same
// routes form one group, scanned once (groups.go).
package network
