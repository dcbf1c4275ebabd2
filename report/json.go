package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes the verdict in the `debugflow report --json` shape, indented, with a final
// newline.
func (v *Verdict) WriteJSON(w io.Writer) error {
	return writeJSON(w, v)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
