package llm

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// decodedByEncodingJSON is what parseJSON gave before decodeValue: the
// value encoding/json's Decoder with UseNumber reads, or its error.
func decodedByEncodingJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the value")
	}
	return v, nil
}

// FuzzDecodeValue: decodeValue reads what encoding/json's Decoder reads,
// to the same value, and nothing it refuses (which parseJSON then leaves
// to it for the error).
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{
		`{"intention":"I look around."}`, ` {"a": [1, -2.5e+3, true, false, null, {}, []], "a": "last"} `,
		`"\u00e9\ud83d\ude00\ud800x\udc00\\\"\/\b\f\n\r\t"`, "\"\xff\xfe é\"", `01`, `1.`, `-`, `1e`, `[1,]`, `{"a":1,}`,
		`{"a" 1}`, `tru`, `truex`, `nul`, "\"a\x01\"", `"\x"`, `"\u12"`, `"\ud800\u12"`, `{} {}`, `[[[[]]]]`, ``, "\ufeff{}",
		`{"tick":7,"location_id":"hall","characters":{"ada":{"memory_entry":"x","location":"hall"}}}`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wantErr := decodedByEncodingJSON(s)
		got, ok := decodeValue(s)
		if ok && wantErr != nil {
			t.Fatalf("decodeValue(%q) = %#v; encoding/json refuses it: %v", s, got, wantErr)
		}
		if !ok && wantErr == nil {
			t.Fatalf("decodeValue(%q) refused what encoding/json reads as %#v", s, want)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeValue(%q) = %#v, encoding/json %#v", s, got, want)
		}
		if v, err := parseJSON(s); (err != nil) != (wantErr != nil) || !reflect.DeepEqual(v, want) {
			t.Fatalf("parseJSON(%q) = %#v, %v; want %#v, %v", s, v, err, want, wantErr)
		}
	})
}
