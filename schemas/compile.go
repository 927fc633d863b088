package schemas

import (
	"bytes"
	"fmt"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// Compile compiles the JSON Schema document raw, known as url in errors
// and $refs, for validating answers. It is the one place schemas are
// compiled. A $ref to a file or to the network is refused: a schema sent
// with a request is self-contained.
func Compile(url string, raw []byte) (*sjs.Schema, error) {
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	c := sjs.NewCompiler()
	c.UseLoader(sjs.SchemeURLLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	return c.Compile(url)
}
