package main

import "encoding/json"

// Exporter writes a command's machine output on stdout as one JSON
// document (cli/cli's cmdutil.Exporter is the model). It is the one place
// that writes JSON to stdout: a command given one hands it its data and
// prints no text; logs and progress stay on stderr.
type Exporter interface {
	Write(io *IOStreams, data any) error
}

// jsonExporter prints data as indented JSON, with <, > and & as they are
// (model text and the names a person types are not HTML); encoding/json escapes the
// control characters a model may write.
type jsonExporter struct{}

func (jsonExporter) Write(io *IOStreams, data any) error {
	enc := json.NewEncoder(io.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(data)
}

// exportJSON is the exporter of the commands whose only output is JSON
// (export, and the kinds' own commands that print a document).
var exportJSON Exporter = jsonExporter{}

// exporter is the exporter --json asks for, nil without it.
func (g *globals) exporter() Exporter {
	if g.json {
		return exportJSON
	}
	return nil
}
