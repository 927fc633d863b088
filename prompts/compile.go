package prompts

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"

	"github.com/arbiter-sim/arbiter/world"
)

// A tick renders the same few templates tens of thousands of times, and
// text/template finds every field by its name, through reflection, at
// every use, and prints every value through fmt: that was a tenth of the
// engine's CPU. A narrative template (its data is this package's) made
// only of what the default ones use (text;
// fields of the data, of a range's element or of its variables; if, with
// and range over a slice, with else; the functions or, join and latest;
// strings, whole numbers and booleans printed) is compiled, for the type
// of the data it is given, into a program that finds each field by its
// index once. Anything else (another node, function or type, a field the
// type lacks) is left to text/template, which also renders whatever the
// program cannot (an error, a value of an unexpected kind): the text is
// always text/template's.

// ownPackage is this package's path: the data compiled for is the
// narrative's (IntentionData, ResolutionData), which the differential tests
// cover; a game's data is left to text/template.
var ownPackage = reflect.TypeFor[IntentionData]().PkgPath()

// program renders a compiled template; it returns false where it cannot,
// and the caller renders with text/template instead.
type program func(w *limitedBuffer, dot reflect.Value, vars []reflect.Value) bool

// compiled caches the program of each template for each data type; nil
// where the template does not compile for it.
type compiled struct {
	mu    sync.RWMutex
	progs map[reflect.Type]program
}

func (c *compiled) program(t *template.Template, typ reflect.Type) program {
	c.mu.RLock()
	p, ok := c.progs[typ]
	c.mu.RUnlock()
	if ok {
		return p
	}
	if t.Tree != nil && t.Tree.Root != nil && typ != nil && typ.PkgPath() == ownPackage {
		p, _ = compileList(t.Tree.Root, typ, nil)
	}
	c.mu.Lock()
	if c.progs == nil {
		c.progs = map[reflect.Type]program{}
	}
	c.progs[typ] = p
	c.mu.Unlock()
	return p
}

// scope is the static type of each variable in scope, by name; index i of
// the runtime vars holds the variable of scope[i].
type scope []binding

// binding is a variable's name and static type.
type binding struct {
	name string
	typ  reflect.Type
}

func (s scope) lookup(name string) (int, reflect.Type, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].name == name {
			return i, s[i].typ, true
		}
	}
	return 0, nil, false
}

func compileList(l *parse.ListNode, dot reflect.Type, sc scope) (program, bool) {
	if l == nil {
		return func(*limitedBuffer, reflect.Value, []reflect.Value) bool { return true }, true
	}
	if len(sc) == 0 {
		sc = scope{{"$", dot}}
	}
	progs := make([]program, 0, len(l.Nodes))
	for _, n := range l.Nodes {
		p, ok := compileNode(n, dot, sc)
		if !ok {
			return nil, false
		}
		progs = append(progs, p)
	}
	return func(w *limitedBuffer, d reflect.Value, vars []reflect.Value) bool {
		if len(vars) == 0 {
			vars = []reflect.Value{d}
		}
		for _, p := range progs {
			if !p(w, d, vars) {
				return false
			}
		}
		return true
	}, true
}

func compileNode(n parse.Node, dot reflect.Type, sc scope) (program, bool) {
	switch n := n.(type) {
	case *parse.TextNode:
		text := string(n.Text)
		return func(w *limitedBuffer, _ reflect.Value, _ []reflect.Value) bool {
			_, err := w.WriteString(text)
			return err == nil
		}, true
	case *parse.ActionNode:
		if len(n.Pipe.Decl) > 0 {
			return nil, false
		}
		get, _, ok := compilePipe(n.Pipe, dot, sc)
		if !ok {
			return nil, false
		}
		return func(w *limitedBuffer, d reflect.Value, vars []reflect.Value) bool {
			v, ok := get(d, vars)
			return ok && printValue(w, v)
		}, true
	case *parse.IfNode:
		return compileBranch(&n.BranchNode, dot, sc, false)
	case *parse.WithNode:
		return compileBranch(&n.BranchNode, dot, sc, true)
	case *parse.RangeNode:
		return compileRange(n, dot, sc)
	}
	return nil, false
}

// branch compiles an if (with false) or a with.
func compileBranch(n *parse.BranchNode, dot reflect.Type, sc scope, with bool) (program, bool) {
	if len(n.Pipe.Decl) > 0 {
		return nil, false
	}
	get, typ, ok := compilePipe(n.Pipe, dot, sc)
	if !ok || !truthKnown(typ) {
		return nil, false
	}
	inner := dot
	if with {
		inner = typ
	}
	then, ok1 := compileList(n.List, inner, sc)
	els, ok2 := compileList(n.ElseList, dot, sc)
	if !ok1 || !ok2 {
		return nil, false
	}
	return func(w *limitedBuffer, d reflect.Value, vars []reflect.Value) bool {
		v, ok := get(d, vars)
		if !ok {
			return false
		}
		if truth(v) {
			if with {
				return then(w, v, vars)
			}
			return then(w, d, vars)
		}
		return els(w, d, vars)
	}, true
}

func compileRange(n *parse.RangeNode, dot reflect.Type, sc scope) (program, bool) {
	if len(n.Pipe.Decl) > 2 || n.Pipe.IsAssign {
		return nil, false
	}
	get, typ, ok := compilePipe(&parse.PipeNode{Cmds: n.Pipe.Cmds}, dot, sc)
	if !ok || typ.Kind() != reflect.Slice {
		return nil, false
	}
	elem := typ.Elem()
	inner := sc
	var names []string
	for _, v := range n.Pipe.Decl {
		names = append(names, v.Ident[0])
	}
	switch len(names) {
	case 1:
		inner = append(slices.Clip(sc), binding{names[0], elem})
	case 2:
		inner = append(slices.Clip(sc), binding{names[0], reflect.TypeFor[int]()}, binding{names[1], elem})
	}
	// In the else, text/template leaves each declared variable holding
	// the (empty) slice.
	outer := slices.Clip(sc)
	for _, name := range names {
		outer = append(outer, binding{name, typ})
	}
	body, ok1 := compileList(n.List, elem, inner)
	els, ok2 := compileList(n.ElseList, dot, outer)
	if !ok1 || !ok2 {
		return nil, false
	}
	return func(w *limitedBuffer, d reflect.Value, vars []reflect.Value) bool {
		v, ok := get(d, vars)
		if !ok || v.Kind() != reflect.Slice {
			return false
		}
		if v.Len() == 0 {
			vs := vars
			if len(names) > 0 {
				vs = make([]reflect.Value, len(vars), len(vars)+len(names))
				copy(vs, vars)
				for range names {
					vs = append(vs, v)
				}
			}
			return els(w, d, vs)
		}
		vs, base := vars, len(vars)
		if len(names) > 0 {
			vs = make([]reflect.Value, base+len(names))
			copy(vs, vars)
		}
		for i := range v.Len() {
			e := v.Index(i)
			switch len(names) {
			case 1:
				vs[base] = e
			case 2:
				vs[base], vs[base+1] = reflect.ValueOf(i), e
			}
			if !body(w, e, vs) {
				return false
			}
		}
		return true
	}, true
}

// getter yields a value of the pipeline; false where it cannot.
type getter func(dot reflect.Value, vars []reflect.Value) (reflect.Value, bool)

// pipe compiles a pipeline of one command: a field chain, dot, a
// variable, a string or number constant, or a call to or, join or latest.
func compilePipe(p *parse.PipeNode, dot reflect.Type, sc scope) (getter, reflect.Type, bool) {
	if p == nil || len(p.Cmds) != 1 {
		return nil, nil, false
	}
	args := p.Cmds[0].Args
	if id, ok := args[0].(*parse.IdentifierNode); ok {
		return compileCall(id.Ident, args[1:], dot, sc)
	}
	if len(args) != 1 {
		return nil, nil, false
	}
	return compileArg(args[0], dot, sc)
}

func compileArg(n parse.Node, dot reflect.Type, sc scope) (getter, reflect.Type, bool) {
	switch n := n.(type) {
	case *parse.DotNode:
		return func(d reflect.Value, _ []reflect.Value) (reflect.Value, bool) { return d, true }, dot, true
	case *parse.FieldNode:
		return fields(func(d reflect.Value, _ []reflect.Value) (reflect.Value, bool) { return d, true }, dot, n.Ident)
	case *parse.VariableNode:
		i, typ, ok := sc.lookup(n.Ident[0])
		if !ok {
			return nil, nil, false
		}
		return fields(func(_ reflect.Value, vars []reflect.Value) (reflect.Value, bool) {
			if i >= len(vars) {
				return reflect.Value{}, false
			}
			return vars[i], true
		}, typ, n.Ident[1:])
	case *parse.StringNode:
		v := reflect.ValueOf(n.Text)
		return func(reflect.Value, []reflect.Value) (reflect.Value, bool) { return v, true }, v.Type(), true
	case *parse.NumberNode:
		if !n.IsInt || strings.ContainsAny(n.Text, ".eEpP") { // 1e6 is text/template's float64
			return nil, nil, false
		}
		v := reflect.ValueOf(int(n.Int64))
		return func(reflect.Value, []reflect.Value) (reflect.Value, bool) { return v, true }, v.Type(), true
	}
	return nil, nil, false
}

// fields follows a chain of exported fields of structs from base's value
// of type typ, each found by its index once, here.
func fields(base getter, typ reflect.Type, names []string) (getter, reflect.Type, bool) {
	get := base
	for _, name := range names {
		if typ.Kind() != reflect.Struct || typ.NumMethod() > 0 || reflect.PointerTo(typ).NumMethod() > 0 {
			return nil, nil, false // a method of that name would come first
		}
		f, ok := typ.FieldByName(name)
		if !ok || len(f.Index) != 1 || !f.IsExported() {
			return nil, nil, false
		}
		prev, i := get, f.Index[0]
		get = func(d reflect.Value, vars []reflect.Value) (reflect.Value, bool) {
			v, ok := prev(d, vars)
			if !ok || v.Kind() != reflect.Struct {
				return reflect.Value{}, false
			}
			return v.Field(i), true
		}
		typ = f.Type
	}
	return get, typ, true
}

// call compiles or (its arguments evaluated until one is true), join and
// latest, the template functions of this package.
func compileCall(name string, args []parse.Node, dot reflect.Type, sc scope) (getter, reflect.Type, bool) {
	gets := make([]getter, len(args))
	types := make([]reflect.Type, len(args))
	for i, a := range args {
		var ok bool
		if gets[i], types[i], ok = compileArg(a, dot, sc); !ok {
			return nil, nil, false
		}
	}
	switch name {
	case "or":
		if len(args) == 0 {
			return nil, nil, false
		}
		for _, t := range types {
			if t != types[0] || !truthKnown(t) {
				return nil, nil, false
			}
		}
		return func(d reflect.Value, vars []reflect.Value) (reflect.Value, bool) {
			var v reflect.Value
			for _, g := range gets {
				var ok bool
				if v, ok = g(d, vars); !ok {
					return v, false
				}
				if truth(v) {
					break
				}
			}
			return v, true
		}, types[0], true
	case "join":
		if len(args) != 2 || types[0] != reflect.TypeFor[[]string]() || types[1] != reflect.TypeFor[string]() {
			return nil, nil, false
		}
		return func(d reflect.Value, vars []reflect.Value) (reflect.Value, bool) {
			list, ok1 := gets[0](d, vars)
			sep, ok2 := gets[1](d, vars)
			if !ok1 || !ok2 {
				return reflect.Value{}, false
			}
			return reflect.ValueOf(strings.Join(list.Interface().([]string), sep.String())), true
		}, types[1], true
	case "latest":
		memories := reflect.TypeFor[[]world.MemoryEntry]()
		if len(args) != 2 || types[0] != reflect.TypeFor[int]() || types[1] != memories {
			return nil, nil, false
		}
		return func(d reflect.Value, vars []reflect.Value) (reflect.Value, bool) {
			n, ok1 := gets[0](d, vars)
			list, ok2 := gets[1](d, vars)
			if !ok1 || !ok2 {
				return reflect.Value{}, false
			}
			return reflect.ValueOf(latest(int(n.Int()), list.Interface().([]world.MemoryEntry))), true
		}, memories, true
	}
	return nil, nil, false
}

// truthKnown reports whether truth reads values of type t as text/template
// does.
func truthKnown(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Int, reflect.Bool, reflect.Slice, reflect.Struct:
		return true
	}
	return false
}

// truth is text/template's truth of a value: a non-zero number, a true
// boolean, a non-empty string or slice, any struct.
func truth(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String, reflect.Slice:
		return v.Len() > 0
	case reflect.Int:
		return v.Int() != 0
	case reflect.Bool:
		return v.Bool()
	case reflect.Struct:
		return true
	}
	return false
}

// printValue writes v as text/template prints it (fmt.Fprint), for the kinds
// that have no methods to print them otherwise: strings, whole numbers,
// booleans.
func printValue(w *limitedBuffer, v reflect.Value) bool {
	if !v.IsValid() || v.Type().NumMethod() > 0 || reflect.PointerTo(v.Type()).NumMethod() > 0 {
		return false // a String or Error method would print it
	}
	var err error
	switch v.Kind() {
	case reflect.String:
		_, err = w.WriteString(v.String())
	case reflect.Int:
		var buf [20]byte
		_, err = w.Write(strconv.AppendInt(buf[:0], v.Int(), 10))
	case reflect.Bool:
		_, err = w.WriteString(strconv.FormatBool(v.Bool()))
	default:
		return false
	}
	return err == nil
}
