package pytestlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLastFailed(t *testing.T) {
	tests := []struct {
		file    string
		want    []string
		wantErr string
	}{
		// pytest >= 7 keeps insertion order, which is not sorted order.
		{"pytest7_insertion_order.json", []string{
			"tests/python/test_ad_ndarray.py::test_ad_fill[cuda-3-50]",
			"tests/python/test_ad_ndarray.py::test_ad_fill[cuda-17-50]",
			"tests/python/test_a.py::TestK::test_b[x-1-50]",
		}, ""},
		{"py2_true_trailing_space.json", []string{"test_a.py::test_z", "test_b.py::test_a", "test_b.py::test_b"}, ""},
		{"pytest3_instance_ids.json", []string{"vulcanai2/tests/models/test_layers.py::TestBaseLayer::()::test_update_batch_size"}, ""},
		{"module_path_and_duplicate.json", []string{"tests/test_broken_import.py", "tests/test_ok.py::test_one"}, ""},
		{"unicode_ids.json", []string{"test_a.py::test_ünïcode[é]"}, ""},
		{"empty_object.json", []string{}, ""},
		{"empty_file.json", nil, ""},
		{"err_array.json", nil, "want a JSON object"},
		{"err_truncated.json", nil, "lastfailed"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "lastfailed", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ParseLastFailed(f)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseLastFailed: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ids mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
