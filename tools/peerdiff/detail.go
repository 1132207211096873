package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/starsim/starsim/traces"
	"github.com/starsim/starsim/traces/formats"
	"github.com/starsim/starsim/traces/rec"
)

// task is one executed task of a side, on the common worker labels and
// time origin.
type task struct {
	rec        *traces.TaskRecord
	order      int64 // the record's SubmitOrder (StarPU counts non-task submissions too)
	rank       int   // 1-based rank among the side's executed tasks, in submission order
	kernel     string
	worker     string
	start, end float64 // ms from the side's first submitted task's start
}

// side reads a tasks.rec into executed tasks in submission order.
func side(path string) ([]task, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := rec.ReadTasks(f, path)
	if err != nil {
		return nil, err
	}
	var ts []task
	cpus := map[int]bool{}
	for i := range recs {
		r := &recs[i]
		if r.Control != "" || r.WorkerID == nil || r.StartTime == nil || r.EndTime == nil || r.MemoryNode == nil {
			continue
		}
		o := int64(-1)
		switch {
		case r.SubmitOrder != nil:
			o = *r.SubmitOrder
		case r.JobID != nil:
			o = *r.JobID
		}
		if *r.MemoryNode == 0 {
			cpus[*r.WorkerID] = true
		}
		ts = append(ts, task{rec: r, order: o, start: *r.StartTime, end: *r.EndTime})
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("%s: no executed task", path)
	}
	// CPU workers are named by rank: StarPU and starsim number them apart.
	var ids []int
	for id := range cpus {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	rank := map[int]int{}
	for i, id := range ids {
		rank[id] = i
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].order < ts[j].order })
	t0 := ts[0].start
	for i := range ts {
		r := ts[i].rec
		ts[i].rank = i + 1
		ts[i].kernel = kernelName(r)
		if *r.MemoryNode == 0 {
			ts[i].worker = fmt.Sprintf("CPU#%d", rank[*r.WorkerID])
		} else {
			ts[i].worker = fmt.Sprintf("CUDA%d", *r.MemoryNode-1)
		}
		ts[i].start -= t0
		ts[i].end -= t0
	}
	return ts, nil
}

// detail prints what --trace adds for one configuration.
func detail(w io.Writer, o options, peerDir, ssDir string, j *starsimJSON) error {
	pt, err := side(filepath.Join(peerDir, "tasks.rec"))
	if err != nil {
		return err
	}
	st, err := side(filepath.Join(ssDir, "tasks.rec"))
	if err != nil {
		return err
	}
	kernelTable(w, pt, st)
	if err := transferTable(w, peerDir, j); err != nil {
		return err
	}
	fmt.Fprintf(w, "starsim evictions: %s  write-backs: %s  (the peer's traces do not record them)\n", compact(j.Evictions), compact(j.WriteBacks))
	firstDivergence(w, o, pt, st)
	return nil
}

func compact(m json.RawMessage) string {
	s := strings.Join(strings.Fields(string(m)), "")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func kernelTable(w io.Writer, pt, st []task) {
	type key struct{ worker, kernel string }
	cnt := [2]map[key]int{{}, {}}
	wset, kset := map[string]bool{}, map[string]bool{}
	for s, ts := range [][]task{pt, st} {
		for _, t := range ts {
			k := key{t.worker, t.kernel}
			cnt[s][k]++
			wset[t.worker], kset[t.kernel] = true, true
		}
	}
	ws, ks := keys(wset), keys(kset)
	sort.Slice(ws, func(i, j int) bool { return workerLess(ws[i], ws[j]) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "tasks peer/starsim\t")
	for _, k := range ks {
		fmt.Fprintf(tw, "%s\t", k)
	}
	fmt.Fprintln(tw)
	for _, wk := range ws {
		fmt.Fprintf(tw, "%s\t", wk)
		for _, k := range ks {
			a, b := cnt[0][key{wk, k}], cnt[1][key{wk, k}]
			mark := ""
			if a != b {
				mark = "*"
			}
			fmt.Fprintf(tw, "%d/%d%s\t", a, b, mark)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func workerLess(a, b string) bool {
	if strings.HasPrefix(a, "CUDA") != strings.HasPrefix(b, "CUDA") {
		return strings.HasPrefix(a, "CUDA")
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// transferTable: the peer's copies from its paje.trace (exact), starsim's
// from its --json.
func transferTable(w io.Writer, peerDir string, j *starsimJSON) error {
	type dir struct{ src, dst string }
	pb, sb := map[dir]int64{}, map[dir]int64{}
	pn, sn := map[dir]int{}, map[dir]int{}
	var ds []dir
	seen := map[dir]bool{}
	add := func(d dir) {
		if !seen[d] {
			seen[d] = true
			ds = append(ds, d)
		}
	}
	if p := filepath.Join(peerDir, "paje.trace"); exists(p) {
		tr, err := formats.Load(p)
		if err != nil {
			return err
		}
		for _, x := range tr.Transfers {
			d := dir{nodeName(x.Src), nodeName(x.Dst)}
			pb[d] += x.Bytes
			pn[d] += x.Count
			add(d)
		}
	}
	for _, x := range j.Transfers {
		d := dir{x.Src, x.Dst}
		sb[d] += x.Bytes
		sn[d] += x.N
		add(d)
	}
	sort.Slice(ds, func(a, b int) bool {
		if ds[a].src != ds[b].src {
			return ds[a].src < ds[b].src
		}
		return ds[a].dst < ds[b].dst
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "transfers\tpeer copies\tstarsim copies\tpeer MB\tstarsim MB\terr %\t")
	for _, d := range ds {
		e := ""
		if pb[d] > 0 {
			e = fmt.Sprintf("%+.1f", float64(sb[d]-pb[d])/float64(pb[d])*100)
		}
		fmt.Fprintf(tw, "%s->%s\t%d\t%d\t%.1f\t%.1f\t%s\t\n", d.src, d.dst, pn[d], sn[d], float64(pb[d])/1e6, float64(sb[d])/1e6, e)
	}
	return tw.Flush()
}

// nodeName maps a paje memory-node name onto starsim's (RAM, CUDA<i>).
func nodeName(s string) string {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "ram") || l == "0" || strings.HasSuffix(l, "mn0") || strings.HasSuffix(l, "node0"):
		return "RAM"
	}
	return s
}

// kernelName names a task's kernel the same on both sides: StarPU's LU
// codelets have no name (its trace gives the model symbol), starsim's do.
func kernelName(r *traces.TaskRecord) string {
	for _, k := range []struct{ suffix, name string }{
		{"lu_model_getrf", "GETRF"}, {"lu_model_trsm_ll", "TRSM_LL"}, {"lu_model_trsm_ru", "TRSM_RU"}, {"lu_model_gemm", "GEMM"},
	} {
		if strings.Contains(r.Model, k.suffix) {
			return k.name
		}
	}
	if r.Name != "" {
		return r.Name
	}
	return r.Model
}

func (t task) String() string {
	r := t.rec
	p := 0
	if r.Priority != nil {
		p = *r.Priority
	}
	return fmt.Sprintf("task %d %s prio %d on %s %.3f-%.3f ms", t.rank, t.kernel, p, t.worker, t.start, t.end)
}

// firstDivergence reports the first task, in submission order, whose
// worker differs, and the first whose start or end differs by more than
// --tol-ms, with the tasks before it on the workers involved.
func firstDivergence(w io.Writer, o options, pt, st []task) {
	n := min(len(pt), len(st))
	if len(pt) != len(st) {
		fmt.Fprintf(w, "executed tasks: peer %d, starsim %d\n", len(pt), len(st))
	}
	firstW, firstT, firstE := -1, -1, -1
	for i := 0; i < n; i++ {
		a, b := pt[i], st[i]
		if a.kernel != b.kernel {
			fmt.Fprintf(w, "task graphs differ at submission %d: peer %s, starsim %s\n", i, a, b)
			return
		}
		wd := a.worker != b.worker
		td := math.Abs(a.start-b.start) > o.tolMs || math.Abs(a.end-b.end) > o.tolMs
		if firstW < 0 && wd {
			firstW = i
		}
		if firstT < 0 && td {
			firstT = i
		}
		// The earliest in simulated time: the first decision that parts.
		if wd && (firstE < 0 || min(a.start, b.start) < min(pt[firstE].start, st[firstE].start)) {
			firstE = i
		}
	}
	if firstW < 0 && firstT < 0 {
		fmt.Fprintf(w, "no divergence: all %d tasks on the same workers, starts and ends within %g ms\n", n, o.tolMs)
		return
	}
	if firstE >= 0 {
		mk := 0.0
		for _, t := range pt {
			mk = max(mk, t.end)
		}
		at := min(pt[firstE].start, st[firstE].start)
		fmt.Fprintf(w, "same workers until %.3f ms (%.1f %% of the peer's makespan)\n", at, at/mk*100)
	}
	for _, x := range []struct {
		what string
		i    int
	}{{"first time divergence (start or end beyond --tol-ms)", firstT}, {"first worker divergence", firstW},
		{"earliest worker divergence in simulated time", firstE}} {
		if x.i < 0 {
			fmt.Fprintf(w, "%s: none\n", x.what)
			continue
		}
		a, b := pt[x.i], st[x.i]
		fmt.Fprintf(w, "%s at task %d of %d (submission order):\n  peer    %s\n  starsim %s\n", x.what, x.i+1, n, a, b)
		for _, wk := range uniq(a.worker, b.worker) {
			fmt.Fprintf(w, "  before on %s:\n", wk)
			for s, ts := range [][]task{pt, st} {
				lbl := [2]string{"peer   ", "starsim"}[s]
				ref := [2]task{a, b}[s]
				for _, t := range before(ts, wk, ref.start, o.context) {
					fmt.Fprintf(w, "    %s %s\n", lbl, t)
				}
			}
		}
	}
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

// before lists the last k tasks started on worker wk at or before t.
func before(ts []task, wk string, t float64, k int) []task {
	var out []task
	for _, x := range ts {
		if x.worker == wk && x.start <= t {
			out = append(out, x)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	if len(out) > k {
		out = out[len(out)-k:]
	}
	return out
}
