package prompts

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
)

// A template's work is bounded twice. text/template cannot be stopped from
// outside (a context or a timer does not reach its loops), and a template
// that writes nothing never meets MaxRenderedSize, so
// `{{range 100000}}{{range 100000}}{{end}}{{end}}` would spin for hours
// and ignore Ctrl-C. Hence:
//
//   - when a template is parsed, a step (an empty write) is put before every
//     node of every list that does not write itself and at the start of every
//     empty list, so each loop iteration, each template call and each action
//     writes at least once. The writer counts the writes and stops the
//     rendering at MaxSteps: the bound is in the parse tree, which the
//     template's text cannot get around;
//   - the writer also looks at the clock every 64 steps and stops the
//     rendering at MaxRenderTime, for steps that are each slow (an action
//     formatting a megabyte it does not write). A template stopped by
//     either bound is broken: its later renderings fail at once, so a
//     command rendering it for every character is not held up again;
//   - New refuses, naming file and line, what can only be a runaway: loops
//     over integer constants repeating their body more than MaxRepeat times
//     (nested, the counts multiply), and a template that calls itself.

// MaxSteps bounds the steps (writes, loop iterations, template calls,
// actions) of one rendering: far above what a default template over a large
// world takes, and low enough that a runaway is stopped quickly.
const MaxSteps = 1 << 20

// MaxRenderTime bounds the wall time of one rendering, and a command stops
// within about this long when a template runs away. A default template
// needs little CPU, but wall time also counts the wait for a core: a tick
// renders thousands of prompts at once on a machine with a few, so the
// bound is far above that, or a loaded machine would halt a sound template
// and with it the run.
const MaxRenderTime = 10 * time.Second

// MaxRepeat bounds how often loops over integer constants may repeat a
// template's text, nested loops multiplying their counts.
const MaxRepeat = 10000

// ErrTooManySteps is the cause of a *TemplateError whose rendering was
// stopped at MaxSteps.
var ErrTooManySteps = fmt.Errorf("rendering took more than %d steps (loop iterations, template calls, actions), stopped there", MaxSteps)

// ErrTooSlow is the cause of a *TemplateError whose rendering was stopped
// at MaxRenderTime.
var ErrTooSlow = fmt.Errorf("rendering took more than %v, stopped there", MaxRenderTime)

// ErrUnbounded is the cause of a *TemplateError for a template New refuses
// because its loops or calls could run without end.
var ErrUnbounded = fmt.Errorf("a prompt template's loops over numbers repeat its text at most %d times, and no template calls itself", MaxRepeat)

// step is the node put into the parse tree: an empty text, whose write the
// writer counts. Execution only reads it, so one serves every place.
var step = &parse.TextNode{NodeType: parse.NodeText, Text: []byte{}}

// guard puts the steps into every tree of t.
func guard(t *template.Template) {
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Tree.Root != nil {
			guardList(tt.Tree.Root)
		}
	}
}

// guardList puts a step before every node of list that does not write
// itself (every node but text), or one step into an empty list, and does
// the same in the lists the nodes hold.
func guardList(list *parse.ListNode) {
	if list == nil {
		return
	}
	nodes := make([]parse.Node, 0, 2*len(list.Nodes)+1)
	for _, n := range list.Nodes {
		if _, text := n.(*parse.TextNode); !text {
			nodes = append(nodes, step)
		}
		nodes = append(nodes, n)
		switch n := n.(type) {
		case *parse.IfNode:
			guardList(n.List)
			guardList(n.ElseList)
		case *parse.RangeNode:
			guardList(n.List)
			guardList(n.ElseList)
		case *parse.WithNode:
			guardList(n.List)
			guardList(n.ElseList)
		}
	}
	if len(nodes) == 0 {
		nodes = append(nodes, step)
	}
	list.Nodes = nodes
}

// bounded returns an error naming source and line when a template of t
// loops over integer constants more than MaxRepeat times or calls itself
// (directly or through others). text is what t was parsed from, for the
// line.
func bounded(t *template.Template, source, text string) error {
	b := bounds{source: source, text: text, calls: map[string][]*parse.TemplateNode{}}
	all := t.Templates() // in no order: sorted, the first problem is the same each time
	slices.SortFunc(all, func(a, b *template.Template) int { return cmp.Compare(a.Name(), b.Name()) })
	for _, tt := range all {
		if tt.Tree == nil || tt.Tree.Root == nil {
			continue
		}
		b.name = tt.Name()
		if err := b.list(tt.Tree.Root, 1); err != nil {
			return err
		}
	}
	state := map[string]int{} // 1: on the path being followed, 2: done
	for _, tt := range all {
		if call, chain := b.cycle(tt.Name(), nil, state); call != nil {
			return fmt.Errorf("%s: template %q calls itself (%s): %w", b.at(call.Position()), call.Name, strings.Join(chain, " -> "), ErrUnbounded)
		}
	}
	return nil
}

// bounds walks the trees of one file: the template walked now, and every
// template call found, by caller.
type bounds struct {
	source, text, name string
	calls              map[string][]*parse.TemplateNode
}

// at is the file and line of node position pos.
func (b *bounds) at(pos parse.Pos) string {
	p := min(int(pos), len(b.text))
	return fmt.Sprintf("%s:%d", b.source, 1+strings.Count(b.text[:p], "\n"))
}

// list checks the nodes of list, run times over by the loops around it.
func (b *bounds) list(list *parse.ListNode, times int) error {
	if list == nil {
		return nil
	}
	for _, n := range list.Nodes {
		var err error
		switch n := n.(type) {
		case *parse.IfNode:
			err = cmp.Or(b.list(n.List, times), b.list(n.ElseList, times))
		case *parse.WithNode:
			err = cmp.Or(b.list(n.List, times), b.list(n.ElseList, times))
		case *parse.RangeNode:
			inner := times
			if c, ok := constantCount(n.Pipe); ok {
				if c > MaxRepeat || inner*c > MaxRepeat {
					return fmt.Errorf("%s: %s repeats its text %s times: %w", b.at(n.Position()), rangeText(n), repeats(times, c), ErrUnbounded)
				}
				inner *= max(c, 1)
			}
			err = cmp.Or(b.list(n.List, inner), b.list(n.ElseList, times))
		case *parse.TemplateNode:
			b.calls[b.name] = append(b.calls[b.name], n)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// repeats says how often nested loops repeat: "100000", "1000 x 1000",
// or "more than 10000" for a count past MaxRepeat, which constantCount
// does not keep.
func repeats(outer, c int) string {
	switch {
	case c > MaxRepeat:
		return fmt.Sprintf("more than %d", MaxRepeat)
	case outer == 1:
		return fmt.Sprint(c)
	}
	return fmt.Sprintf("%d x %d", outer, c)
}

// rangeText is how the range was written, "{{range 100000}}", as far as
// text/template keeps it.
func rangeText(n *parse.RangeNode) string { return "{{range " + n.Pipe.String() + "}}" }

// cycle follows the calls from template name, path being the templates
// that led to it, and returns the call that goes back to one of them with
// the chain of names, or nil. A template whose calls were all followed is
// marked done in state, so each is followed once.
func (b *bounds) cycle(name string, path []string, state map[string]int) (*parse.TemplateNode, []string) {
	if state[name] == 2 {
		return nil, nil
	}
	state[name] = 1
	path = append(path, name)
	for _, call := range b.calls[name] {
		if state[call.Name] == 1 {
			return call, append(path[slices.Index(path, call.Name):], call.Name)
		}
		if c, chain := b.cycle(call.Name, path, state); c != nil {
			return c, chain
		}
	}
	state[name] = 2
	return nil, nil
}

// constantCount is the count of a range over an integer constant
// ({{range 5}}, {{range $i := 5}}, {{range (5)}}).
func constantCount(pipe *parse.PipeNode) (int, bool) {
	if pipe == nil || len(pipe.Cmds) != 1 || len(pipe.Cmds[0].Args) != 1 {
		return 0, false
	}
	switch a := pipe.Cmds[0].Args[0].(type) {
	case *parse.NumberNode:
		if !a.IsInt {
			return 0, false
		}
		return int(max(0, min(a.Int64, MaxRepeat+1))), true
	case *parse.PipeNode:
		return constantCount(a)
	}
	return 0, false
}
