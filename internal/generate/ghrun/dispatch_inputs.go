package ghrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// maxInputBytes bounds one value read with -F NAME=@FILE and the JSON read
// from stdin. GitHub takes at most 65,535 characters of inputs in all.
const maxInputBytes = 64 << 10

// inputSources are the ways dispatch takes inputs, as gh workflow run does:
// -f raw values, -F values that may be read from a file, or, with neither, a
// JSON object on stdin when stdin is not a terminal.
type inputSources struct {
	Raw   []string // -f NAME=VALUE: VALUE as written
	Magic []string // -F NAME=VALUE: VALUE, or the content of FILE for @FILE (@- is stdin)

	Stdin      io.Reader
	StdinIsTTY bool
	// Hint receives one line when stdin has given nothing after HintAfter,
	// so a forgotten open pipe is not a silent hang.
	Hint      io.Writer
	HintAfter time.Duration
}

// gather returns the inputs as name -> value strings, still to be checked
// against the workflow. Every problem is a usage error; all of them are
// reported together where they are independent.
func (s inputSources) gather(ctx context.Context) (map[string]string, error) {
	if len(s.Raw)+len(s.Magic) == 0 {
		if s.Stdin == nil || s.StdinIsTTY {
			return map[string]string{}, nil
		}
		return s.fromStdin(ctx)
	}
	out := map[string]string{}
	var problems []string
	add := func(flag, f string, read bool) {
		name, value, ok := strings.Cut(f, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s %q: expected name=value", flag, f))
			return
		case name == "":
			problems = append(problems, fmt.Sprintf("%s %q: the input name is empty", flag, f))
			return
		}
		if _, dup := out[name]; dup {
			problems = append(problems, fmt.Sprintf("input %q is given twice", name))
			return
		}
		if read && strings.HasPrefix(value, "@") {
			v, err := s.readAt(ctx, value[1:])
			if err != nil {
				if ctx.Err() != nil {
					problems = append(problems, ctx.Err().Error())
				} else {
					problems = append(problems, fmt.Sprintf("-F %s=%s: %v", name, value, err))
				}
				return
			}
			value = v
		}
		out[name] = value
	}
	stdinUsed := false
	for _, f := range s.Raw {
		add("-f", f, false)
	}
	for _, f := range s.Magic {
		if _, v, _ := strings.Cut(f, "="); v == "@-" {
			if stdinUsed {
				problems = append(problems, fmt.Sprintf("-F %q: stdin can be read for one input only", f))
				continue
			}
			stdinUsed = true
		}
		add("-F", f, true)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	return out, nil
}

// readAt reads the value of -F NAME=@PATH: the file at PATH, or stdin for "-".
func (s inputSources) readAt(ctx context.Context, path string) (string, error) {
	var open func() (io.ReadCloser, error)
	switch path {
	case "":
		return "", errors.New("@ must be followed by a file name (or - for stdin)")
	case "-":
		if s.Stdin == nil {
			return "", errors.New("there is no stdin to read")
		}
		open = func() (io.ReadCloser, error) { return io.NopCloser(s.Stdin), nil }
	default:
		open = func() (io.ReadCloser, error) { return os.Open(path) }
	}
	b, err := readBounded(ctx, open, nil, 0)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// fromStdin reads the inputs as one JSON object from stdin.
func (s inputSources) fromStdin(ctx context.Context) (map[string]string, error) {
	hint := func() {
		if s.Hint != nil {
			fmt.Fprintln(s.Hint, "waiting for the inputs as a JSON object on stdin (no -f or -F was given and stdin is not a terminal); "+
				"end it with Ctrl-D, or dispatch with the defaults with </dev/null")
		}
	}
	data, err := readBounded(ctx, func() (io.ReadCloser, error) { return io.NopCloser(s.Stdin), nil }, hint, s.HintAfter)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("read the inputs from stdin: %w", err)
	}
	inputs, err := parseInputsJSON(data)
	if err != nil {
		return nil, fmt.Errorf("stdin: %w (with no -f or -F, the inputs are read from stdin as a JSON object like "+
			`{"reproduce_count": 200}; to dispatch with the workflow's defaults, give it nothing: </dev/null)`, err)
	}
	return inputs, nil
}

// readBounded reads at most maxInputBytes from what open returns, and stops
// waiting when ctx is cancelled (a pipe nobody writes to, a FIFO nobody
// opens). hint, when not nil, is called once if nothing came after hintAfter.
func readBounded(ctx context.Context, open func() (io.ReadCloser, error), hint func(), hintAfter time.Duration) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		rc, err := open()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, maxInputBytes+1))
		done <- result{b, err}
	}()
	var hintC <-chan time.Time
	if hint != nil {
		t := time.NewTimer(hintAfter)
		defer t.Stop()
		hintC = t.C
	}
	for {
		select {
		case r := <-done:
			if r.err != nil {
				return nil, r.err
			}
			if len(r.data) > maxInputBytes {
				return nil, fmt.Errorf("more than %s (GitHub takes at most 65,535 characters of inputs)", formatBytes(maxInputBytes))
			}
			return r.data, nil
		case <-hintC:
			hint()
			hintC = nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// parseInputsJSON reads {"name": value, ...}. Values may be strings, numbers
// or booleans (a number keeps its JSON spelling); empty input is no inputs.
// Duplicate names, null, arrays, objects and trailing data are errors.
func parseInputsJSON(data []byte) (map[string]string, error) {
	out := map[string]string{}
	if len(bytes.TrimSpace(data)) == 0 {
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var problems []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		if _, dup := out[name]; dup {
			problems = append(problems, fmt.Sprintf("input %q is given twice", name))
			continue
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		switch x := v.(type) {
		case string:
			out[name] = x
		case json.Number:
			out[name] = x.String()
		case bool:
			out[name] = fmt.Sprint(x)
		case nil:
			problems = append(problems, fmt.Sprintf("input %q is null: leave it out to use the workflow's default", name))
		default:
			problems = append(problems, fmt.Sprintf("input %q is a JSON %s: inputs are strings, numbers or booleans", name, jsonKind(raw)))
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("invalid JSON: the object is not closed")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: more data after the object")
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	return out, nil
}

func jsonKind(raw json.RawMessage) string {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		return "array"
	}
	return "object"
}
