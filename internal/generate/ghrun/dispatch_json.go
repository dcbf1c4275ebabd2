package ghrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ParseInterval reads a poll interval given as whole seconds, like gh run watch -i 5, or as
// a Go duration (500ms, 1m30s); it is positive and at most a day.
func ParseInterval(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n <= 0 || n > int64(24*time.Hour/time.Second) {
			return 0, fmt.Errorf("%q: the interval must be from 1 second to a day", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither whole seconds (5) nor a duration (500ms, 1m30s)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: the interval must be positive", s)
	}
	return d, nil
}

// Fields dispatch --json can print, with gh's camelCase names; run_id and
// html_url are the names bare --json has always printed.
var dispatchJSONFields = map[string]func(dispatchResult) any{
	"runId":      func(r dispatchResult) any { return r.Run.ID },
	"url":        func(r dispatchResult) any { return r.Run.HTMLURL },
	"workflow":   func(r dispatchResult) any { return r.Workflow },
	"ref":        func(r dispatchResult) any { return r.Ref },
	"repository": func(r dispatchResult) any { return r.Repo.String() },
	"dispatchId": func(r dispatchResult) any { return r.Run.DispatchID },
	"foundBy":    func(r dispatchResult) any { return r.Run.Found },
	"run_id":     func(r dispatchResult) any { return r.Run.ID },
	"html_url":   func(r dispatchResult) any { return r.Run.HTMLURL },
}

// BareJSONFields is what --json without a field list prints.
const BareJSONFields = "run_id,html_url"

// dispatchResult is what --json fields are taken from.
type dispatchResult struct {
	Run      RunRef
	Workflow string
	Ref      string
	Repo     Repo
}

// jsonFieldNames lists the fields, sorted, one per line as gh does.
func jsonFieldNames() string {
	names := make([]string, 0, len(dispatchJSONFields))
	for n := range dispatchJSONFields {
		names = append(names, n)
	}
	sort.Strings(names)
	return "  " + strings.Join(names, "\n  ")
}

// parseJSONFields checks a --json field list.
func parseJSONFields(list string) ([]string, error) {
	var fields, unknown []string
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if _, ok := dispatchJSONFields[f]; !ok {
			unknown = append(unknown, strconv.Quote(f))
			continue
		}
		fields = append(fields, f)
	}
	if len(unknown) > 0 || len(fields) == 0 {
		what := "no field given"
		if len(unknown) > 0 {
			what = "unknown field " + strings.Join(unknown, ", ")
		}
		return nil, fmt.Errorf("--json: %s; the fields are:\n%s", what, jsonFieldNames())
	}
	return fields, nil
}

// jsonObject renders the --json output: the chosen fields in the order
// given (so bare --json prints exactly what it always has), one line.
func jsonObject(fields []string, r dispatchResult) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f] {
			continue
		}
		seen[f] = true
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f)
		v, err := json.Marshal(dispatchJSONFields[f](r))
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}
