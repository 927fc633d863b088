package command

// Command is one complete reading of a statement: the values of its fields
// and its items.
type Command struct {
	Spec *Spec
	Line int // 1-based line of the message where the command starts
	// Fields holds the value of every field given, by Field.Key: the name as
	// written (quotes removed, spaces collapsed), the enum value as the spec
	// spells it, the free text, the number in decimal, or for a flag its
	// keyword.
	Fields map[string]string
	Items  []Item

	penalty int // keyword words read against the command's letter case
}

// Item is one item line of a command, e.g. "- YES: Magic exists".
type Item struct {
	Kind string // as the spec spells it, e.g. "YES"
	Text string
	Line int
}

// Get returns the value of the field key, "" when it was not given.
func (c Command) Get(key string) string { return c.Fields[key] }

// Has reports whether the field key was given.
func (c Command) Has(key string) bool {
	_, ok := c.Fields[key]
	return ok
}

// Choice returns the key and value of the field given from group, or "" and
// "" when none was.
func (c Command) Choice(group string) (key, value string) {
	if c.Spec == nil {
		return "", ""
	}
	for _, f := range c.Spec.Fields {
		if v, ok := c.Fields[f.Key]; ok && f.Group == group {
			return f.Key, v
		}
	}
	return "", ""
}
