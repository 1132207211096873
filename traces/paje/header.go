package paje

// The header of a Paje trace: event definitions, types and entity values,
// as StarPU writes them.

import (
	"strconv"

	"github.com/starsim/starsim/runtime/sim"
)

// pajeWorkerStates are StarPU's entity values of the "WS" state type, with
// its aliases and colors (starpu_paje.c). An executing worker's state value
// is the codelet name instead of Executing.
var pajeWorkerStates = []struct{ alias, name, color string }{
	{"I", "Idle", ".9 .1 .0"},
	{"In", "Initializing", "0.0 .7 1.0"},
	{"D", "Deinitializing", "0.0 .1 .7"},
	{"Fi", "FetchingInput", "1.0 .1 1.0"},
	{"Po", "PushingOutput", "0.1 1.0 1.0"},
	{"C", "Callback", ".0 .3 .8"},
	{"B", "Overhead", ".5 .18 .0"},
	{"Ps", "Parallel sync", ".5 .18 1.0"},
	{"E", "Executing", ".0 .6 .5"},
	{"Sc", "Scheduling", ".7 .36 .0"},
	{"Sl", "Sleeping", ".9 .1 .0"},
	{"P", "Progressing", ".1 .3 .1"},
	{"U", "Unpartitioning", ".0 .0 1.0"},
	{"H", "Hypervisor", ".5 .18 .0"},
	{"Bu", "Building task", ".5 .18 .0"},
	{"Su", "Submitting task", ".3 .09 .0"},
	{"Th", "Throttling task submission", ".8 .6 .6"},
}

// pajeLinkTypes maps the runtime's transfer kinds to StarPU's link types
// (F, TF, PF, IF); write-backs, a memory state in StarPU, get a link type of
// their own, WB.
var pajeLinkTypes = map[string]string{
	sim.KindFetch:        "F",
	sim.KindTaskPrefetch: "TF",
	sim.KindPrefetch:     "PF",
	sim.KindIdleFetch:    "IF",
	sim.KindWriteBack:    "WB",
}

// pajeEventDefs are the Paje event definitions, with StarPU's numbering and
// field sets. 20 is StarPU's extended PajeSetState for executing tasks.
const pajeEventDefs = `%EventDef	PajeDefineContainerType	1
%	Alias	string
%	Type	string
%	Name	string
%EndEventDef
%EventDef	PajeDefineEventType	2
%	Alias	string
%	Type	string
%	Name	string
%	Color	color
%EndEventDef
%EventDef	PajeDefineStateType	3
%	Alias	string
%	Type	string
%	Name	string
%EndEventDef
%EventDef	PajeDefineVariableType	4
%	Alias	string
%	Type	string
%	Name	string
%EndEventDef
%EventDef	PajeDefineLinkType	5
%	Alias	string
%	Type	string
%	StartContainerType	string
%	EndContainerType	string
%	Name	string
%EndEventDef
%EventDef	PajeDefineEntityValue	6
%	Alias	string
%	Type	string
%	Name	string
%	Color	color
%EndEventDef
%EventDef	PajeCreateContainer	7
%	Time	date
%	Alias	string
%	Type	string
%	Container	string
%	Name	string
%EndEventDef
%EventDef	PajeDestroyContainer	8
%	Time	date
%	Name	string
%	Type	string
%EndEventDef
%EventDef	PajeNewEvent	9
%	Time	date
%	Type	string
%	Container	string
%	Value	string
%EndEventDef
%EventDef	PajeSetState	10
%	Time	date
%	Container	string
%	Type	string
%	Value	string
%EndEventDef
%EventDef	PajePushState	11
%	Time	date
%	Container	string
%	Type	string
%	Value	string
%EndEventDef
%EventDef	PajePopState	12
%	Time	date
%	Container	string
%	Type	string
%EndEventDef
%EventDef	PajeSetVariable	13
%	Time	date
%	Container	string
%	Type	string
%	Value	double
%EndEventDef
%EventDef	PajeAddVariable	14
%	Time	date
%	Type	string
%	Container	string
%	Value	double
%EndEventDef
%EventDef	PajeSubVariable	15
%	Time	date
%	Type	string
%	Container	string
%	Value	double
%EndEventDef
%EventDef	PajeStartLink	18
%	Time	date
%	Type	string
%	Container	string
%	Value	string
%	StartContainer	string
%	Key	string
%EndEventDef
%EventDef	PajeEndLink	19
%	Time	date
%	Type	string
%	Container	string
%	Value	string
%	EndContainer	string
%	Key	string
%EndEventDef
%EventDef	PajeSetState	20
%	Time	date
%	Container	string
%	Type	string
%	Value	string
%	Size	string
%	Params	string
%	Footprint	string
%	Tag	string
%	JobId	string
%	SubmitOrder	string
%	Priority	string
%	GFlop	string
%	X	string
%	Y	string
%	Iteration	string
%	Subiteration	string
%	NumaNodes	string
%EndEventDef
`

// pajeTypes is StarPU's container hierarchy (MPIP > P > Mn > T > W, Mm in
// Mn, Sc in P) and the state, variable and link types used.
const pajeTypes = `1	MPIP	0	"MPI Program"
1	P	MPIP	"Program"
1	Mn	P	"Memory Node"
1	T	Mn	"Thread"
1	Mm	Mn	"Memory Manager"
1	W	T	"Worker"
1	Sc	P	"Scheduler State"
3	WS	W	"Worker State"
4	nready	Sc	"Number of Ready Tasks"
4	use	Mm	"Used (MB)"
5	F	P	Mm	Mm	"Intra-node data Fetch"
5	TF	P	Mm	Mm	"Intra-node data TaskPreFetch"
5	PF	P	Mm	Mm	"Intra-node data PreFetch"
5	IF	P	Mm	Mm	"Intra-node data IdleFetch"
5	WB	P	Mm	Mm	"Intra-node data WriteBack"
`

func (p *Writer) writeHeader() {
	b := p.buf[:0]
	b = append(b, "# Paje trace written by "...)
	b = append(b, headerLine(p.h.Tool)...)
	if p.h.Version != "" {
		b = append(b, ' ')
		b = append(b, headerLine(p.h.Version)...)
	}
	b = append(b, "\n# command: "...)
	b = append(b, headerLine(p.h.Command)...)
	if p.h.Machine != "" {
		b = append(b, "\n# machine: "...)
		b = append(b, headerLine(p.h.Machine)...)
	}
	b = append(b, "\n# seed: "...)
	b = strconv.AppendUint(b, p.h.Seed, 10)
	b = append(b, "\n# StarPU's vocabulary (starpu_paje.c); times in ms of simulated time\n"...)
	b = append(b, pajeEventDefs...)
	b = append(b, pajeTypes...)
	for _, v := range pajeWorkerStates {
		b = appendValueDef(b, v.alias, v.name, v.color)
	}
	p.write(b)
}

func appendValueDef(b []byte, alias, name, color string) []byte {
	b = append(b, "6\t"...)
	b = append(b, alias...)
	b = append(b, "\tWS\t\""...)
	b = append(b, name...)
	b = append(b, "\"\t\""...)
	b = append(b, color...)
	return append(b, "\"\n"...)
}
