package pytestlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ParseLastFailed reads pytest's .pytest_cache/v/cache/lastfailed JSON
// object and returns its keys (node ids, or bare module paths after a
// collection error) in file order, deduplicated. Old "::()::" ids are kept
// as written. An empty file yields no ids. At most MaxEntries ids are kept.
func ParseLastFailed(r io.Reader) ([]string, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lastfailed: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("lastfailed: want a JSON object, got %v", tok)
	}
	ids := []string{}
	seen := map[string]struct{}{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("lastfailed: reading key: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("lastfailed: want a string key, got %v", tok)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("lastfailed: value of %q: %w", key, err)
		}
		if _, dup := seen[key]; dup || len(ids) >= MaxEntries {
			continue
		}
		seen[key] = struct{}{}
		ids = append(ids, key)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("lastfailed: closing the object: %w", err)
	}
	return ids, nil
}
