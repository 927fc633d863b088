package store

import (
	"bytes"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/s2"
)

// A prepared request's new texts wait in memory for their commit, a whole
// tick of them: at 10,000 characters they were the largest part of the
// live heap. The texts of one template are alike (an intention's system
// prompt shares nine tenths of its bytes with every other character's), so
// each is compressed against a dictionary: the first text seen that starts
// as it does (heldDicts). A text packed alone kept about half its bytes.

// heldText is a text until its commit: its body, compressed against dict
// (S2's block format), or in pack's form when dict is nil.
type heldText struct {
	dict *s2.Dict
	body []byte
}

// text is the text back.
func (h heldText) text() (string, error) {
	if h.dict == nil {
		return unpack(h.body)
	}
	b, err := h.dict.Decode(nil, h.body)
	return string(b), err
}

// dictKey is how much of a text's start picks its dictionary: the first
// words of a template ("Tick 12.", "You play"), before any name.
const dictKey = 8

// maxDicts bounds the dictionaries held for new texts; past it they start
// over (a text keeps the dictionary it was packed with).
const maxDicts = 16

// minHeld is the shortest text compressed against a dictionary.
const minHeld = 256

// heldDicts are the dictionaries of the texts a store prepares, by the
// start of the text they were made of.
type heldDicts struct {
	mu sync.Mutex
	m  map[string]*s2.Dict
}

// of returns the dictionary of texts starting as text does, made of text
// if there is none; nil when text is too short or too long for one.
func (d *heldDicts) of(text string) *s2.Dict {
	if len(text) < minHeld || len(text) > s2.MaxDictSize {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if dict, ok := d.m[text[:dictKey]]; ok {
		return dict
	}
	if d.m == nil || len(d.m) >= maxDicts {
		d.m = make(map[string]*s2.Dict, maxDicts)
	}
	dict := s2.MakeDict([]byte(text), nil)
	d.m[strings.Clone(text[:dictKey])] = dict
	return dict
}

// hold packs text to wait for its commit.
func (d *heldDicts) hold(text string) heldText {
	dict := d.of(text)
	if dict == nil {
		return heldText{body: pack(text)}
	}
	p := packers.Get().(*packer)
	defer packers.Put(p)
	p.in = append(p.in[:0], text...) // s2 takes bytes
	size := s2.MaxEncodedLen(len(p.in))
	p.out = slices.Grow(p.out[:0], size)[:size]
	return heldText{dict: dict, body: bytes.Clone(dict.Encode(p.out, p.in))}
}
