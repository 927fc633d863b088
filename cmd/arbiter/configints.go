package main

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/spf13/viper"
)

// intSetting is an integer key of the configuration and the bounds of its
// value.
type intSetting struct {
	key      string
	min, max int64
}

// Bounds shared by several keys: far above any real endpoint's or model's,
// low enough that a value past them is a typo, never a plan.
const (
	maxTokensBound = session.MaxTokensBound // a model's output, in tokens
	maxRPM         = 1_000_000_000          // requests per minute
	maxTPM         = 1_000_000_000_000      // tokens per minute
	maxContext     = 100_000_000            // a model's context, in tokens
)

// intSettings are the shared integer keys of the configuration with
// their bounds (a kind's section has its own, allIntSettings): each value must be a whole number within them, wherever it comes
// from (the config file, an ARBITER_* variable, a flag). A test keeps the
// list equal to Config's integer fields.
var intSettings = []intSetting{
	{"llm.max_attempts", 1, 100},
	{"llm.rate_limit_waits", 0, 1000},
	{"llm.repair_attempts", 0, 100},
	{"llm.concurrency", 1, session.MaxConcurrency},
	{"llm.depth", 0, 1000},
	{"llm.rpm", 0, maxRPM},
	{"llm.tpm", 0, maxTPM},
	{"llm.max_response_bytes", 0, 1 << 30},
	{"llm.context_tokens", 0, maxContext},
	{"llm.max_output_tokens", 1, maxTokensBound},
	{"run.token_budget", 0, 1_000_000_000_000_000},
	{"otel.queue_size", 1, 10_000_000}, // spans held for export: past this much memory, a collector is too slow to keep
}

// endpointInts are the integer keys of an entry of an endpoints list (0:
// the llm.* value).
var endpointInts = []intSetting{{"concurrency", 0, session.MaxConcurrency}, {"rpm", 0, maxRPM}, {"tpm", 0, maxTPM}, {"context_tokens", 0, maxContext}}

// checkIntegers checks every integer setting of v before it is decoded,
// which would read 1.5 as 1 and 2^63 as -2^63 without a word: each must be
// a whole number within its bounds. Each key that is not is one error
// naming it and its bounds, and is set back to its default, so that the
// checks after say nothing more about it.
func checkIntegers(v *viper.Viper) []error {
	var errs []error
	all := allDefaults()
	for _, s := range allIntSettings() {
		if err := s.check(s.key, v.Get(s.key)); err != nil {
			errs = append(errs, err)
			v.Set(s.key, all[s.key])
		}
	}
	for _, key := range endpointListKeys() {
		list, ok := v.Get(key).([]any)
		if !ok {
			continue // not a list: decoding says so
		}
		list, bad := slices.Clone(list), false
		for i, item := range list {
			entry, ok := item.(map[string]any)
			if !ok {
				continue
			}
			for k, val := range entry {
				for _, s := range endpointInts {
					if strings.EqualFold(k, s.key) {
						if err := s.check(fmt.Sprintf("%s[%d].%s", key, i, s.key), val); err != nil {
							errs = append(errs, err)
							entry = maps.Clone(entry)
							delete(entry, k)
							list[i], bad = entry, true
						}
					}
				}
			}
		}
		if bad {
			v.Set(key, list)
		}
	}
	return errs
}

// check reports whether value, the value of key, is a whole number within
// s's bounds; nil (no value) is left to the default.
func (s intSetting) check(key string, value any) error {
	if value == nil {
		return nil
	}
	if n, ok := wholeNumber(value); ok && n >= s.min && n <= s.max {
		return nil
	}
	got := fmt.Sprint(value)
	if str, ok := value.(string); ok {
		if _, err := strconv.ParseFloat(strings.TrimSpace(str), 64); err != nil {
			got = strconv.Quote(str) // a word: quoted, so that "" and spaces show
		}
	}
	return fmt.Errorf("config %s: must be a whole number from %d to %d, got %s", key, s.min, s.max, got)
}

// wholeNumber reads value (an int, a uint or a float of YAML, or the text
// of a variable) as an int64; ok is false when it is not a whole number or
// lies past int64.
func wholeNumber(value any) (n int64, ok bool) {
	rv := reflect.ValueOf(value)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		return int64(u), u <= math.MaxInt64
	case reflect.Float32, reflect.Float64:
		return wholeFloat(rv.Float())
	case reflect.String:
		text := strings.TrimSpace(rv.String())
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, true
		}
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			return wholeFloat(f)
		}
	}
	return 0, false
}

// wholeFloat is f as an int64 when it is a whole number within int64.
func wholeFloat(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 { // NaN and the infinities fail too
		return 0, false
	}
	return int64(f), true
}
