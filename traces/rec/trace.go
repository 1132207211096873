package rec

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/starsim/starsim/internal/inputfile"
	"github.com/starsim/starsim/internal/srcerr"
	"github.com/starsim/starsim/internal/timeline"
	"github.com/starsim/starsim/traces"
)

// Read reads data, the tasks.rec file, as a Trace named name; a file named
// "tasks.rec" picks up a data.rec beside it.
//
// Errors name the place: "FILE:LINE: reason" for a line that does not
// parse, for an executed task (a record with a WorkerId) without StartTime
// or EndTime (a truncated record), for a worker found on two memory nodes;
// "FILE: reason" for a file with no executed task.
//
// Transfers: tasks.rec does not record copies; with a data.rec (home node
// of every handle), they are inferred by replaying the tasks in StartTime
// order with an MSI-like protocol: a task on node m reading a handle with
// no valid copy on m copies it there (from RAM if RAM holds a valid copy,
// else from the lowest-numbered valid node), and a task writing it leaves
// m the only valid copy. That is a lower bound: no eviction, no write-back
// at the end, no prefetch of data that went unused.
func Read(data []byte, file, name string) (*traces.Trace, error) {
	dataFile := ""
	if filepath.Base(file) == "tasks.rec" {
		d := filepath.Join(filepath.Dir(file), "data.rec")
		if st, err := os.Stat(d); err == nil && !st.IsDir() {
			dataFile = d
		}
	}
	recs, err := ReadTasks(bytes.NewReader(data), file)
	if err != nil {
		return nil, err
	}
	t := &traces.Trace{Name: name, Format: "tasks.rec", Panel: &traces.Panel{Absent: map[string]string{
		timeline.GroupReady: "not in tasks.rec", timeline.GroupMemory: "not in tasks.rec", timeline.GroupInFlight: "not in tasks.rec"}}}
	workers := map[int]traces.WorkerInfo{}
	workerLine := map[int]int{}
	for _, r := range recs {
		if r.WorkerID == nil || r.Control != "" {
			continue
		}
		if r.StartTime == nil || r.EndTime == nil {
			return nil, srcerr.Errorf(file, r.Line, "task %s has a WorkerId but no StartTime or EndTime (truncated record?)", traces.TaskLabel(r))
		}
		node := 0
		if r.MemoryNode != nil {
			node = *r.MemoryNode
		}
		id := *r.WorkerID
		if w, ok := workers[id]; ok {
			if w.Node != node {
				return nil, srcerr.Errorf(file, r.Line, "worker %d on memory node %d, but on node %d in the record of line %d",
					id, node, w.Node, workerLine[id])
			}
		} else {
			w := traces.WorkerInfo{ID: id, Name: "CPU", Type: traces.WorkerCPU, Node: node}
			if node != 0 {
				w.Name, w.Type = "CUDA"+strconv.Itoa(node-1), traces.WorkerCUDA
			}
			workers[id] = w
			workerLine[id] = r.Line
		}
		if r.Name == "" {
			r.Name = r.Model
		}
		r.StartTime, r.EndTime = traces.RoundNs(*r.StartTime), traces.RoundNs(*r.EndTime)
		t.Tasks = append(t.Tasks, r)
	}
	if len(t.Tasks) == 0 {
		return nil, srcerr.Errorf(file, 0, "no executed task (no record with WorkerId, StartTime and EndTime): not a tasks.rec trace?")
	}
	t.Workers = traces.SortedWorkers(workers)
	traces.SortTasks(t.Tasks)
	if dataFile != "" {
		fh, err := inputfile.Open(dataFile)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		drecs, err := ReadData(fh, dataFile)
		if err != nil {
			return nil, err
		}
		if t.Transfers, err = inferTransfers(t.Tasks, drecs); err != nil {
			return nil, srcerr.Errorf(file, 0, "%v", err)
		}
		t.TransferSource = "data.rec"
	}
	return t, nil
}

// inferTransfers replays tasks (in StartTime order) against the handles'
// home nodes; see Read.
func inferTransfers(tasks []traces.TaskRecord, data []traces.DataRecord) ([]traces.Transfer, error) {
	home := map[string]int{}
	for _, d := range data {
		if d.Handle != "" && d.HomeNode != nil && *d.HomeNode >= 0 {
			home[d.Handle] = *d.HomeNode
		}
	}
	valid := map[string]map[int]bool{}
	type dir struct{ src, dst int }
	acc := map[dir]*traces.Transfer{}
	for _, t := range tasks {
		node := 0
		if t.MemoryNode != nil {
			node = *t.MemoryNode
		}
		for i, h := range t.Handles {
			mode := ""
			if i < len(t.Modes) {
				mode = t.Modes[i]
			}
			v := valid[h]
			if v == nil {
				v = map[int]bool{home[h]: true}
				valid[h] = v
			}
			if strings.Contains(mode, "R") && !v[node] {
				src := -1
				if v[0] {
					src = 0
				} else {
					for n := range v {
						if src < 0 || n < src {
							src = n
						}
					}
				}
				k := dir{src, node}
				x := acc[k]
				if x == nil {
					x = &traces.Transfer{Src: traces.NodeName(src), Dst: traces.NodeName(node)}
					acc[k] = x
				}
				x.Count++
				if i < len(t.Sizes) {
					if x.Bytes > math.MaxInt64-t.Sizes[i] {
						return nil, fmt.Errorf("copies %s->%s add up to more than 2^63 bytes", x.Src, x.Dst)
					}
					x.Bytes += t.Sizes[i]
				}
				v[node] = true
			}
			if strings.Contains(mode, "W") {
				valid[h] = map[int]bool{node: true}
			}
		}
	}
	keys := make([]dir, 0, len(acc))
	for k := range acc {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].src != keys[j].src {
			return keys[i].src < keys[j].src
		}
		return keys[i].dst < keys[j].dst
	})
	out := make([]traces.Transfer, 0, len(keys))
	for _, k := range keys {
		out = append(out, *acc[k])
	}
	return out, nil
}
