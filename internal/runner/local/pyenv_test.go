package local

import (
	"strings"
	"testing"
)

func TestPythonEnvironmentLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		environ []string
		want    string
	}{
		{[]string{"PATH=/usr/bin", "VIRTUAL_ENV=/home/u/venv"}, "install into the active environment /home/u/venv (VIRTUAL_ENV)"},
		{[]string{"CONDA_PREFIX=/opt/conda/envs/x"}, "install into the active environment /opt/conda/envs/x (CONDA_PREFIX)"},
		{[]string{"PATH=/usr/bin", "VIRTUAL_ENV="}, "no virtual environment is active: pip lines install into the python first on PATH"},
	} {
		if got := pythonEnvironmentLine(tc.environ); !strings.Contains(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.environ, got, tc.want)
		}
	}
}
