package main

import (
	"bufio"
	"context"
	"io"
)

// lines reads the terminal line by line without blocking a canceled context.
type lines struct {
	ch   chan string
	done chan struct{}
}

func newLines(r io.Reader) *lines {
	l := &lines{ch: make(chan string), done: make(chan struct{})}
	go func() {
		defer close(l.ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			select {
			case l.ch <- sc.Text():
			case <-l.done:
				return
			}
		}
	}()
	return l
}

// next returns the next line; ok is false at the end of the input.
func (l *lines) next(ctx context.Context) (line string, ok bool, err error) {
	select {
	case <-ctx.Done():
		return "", false, ctx.Err()
	case line, ok = <-l.ch:
		return line, ok, nil
	}
}

func (l *lines) close() { close(l.done) }
