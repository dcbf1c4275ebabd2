package ghrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/google/go-github/v60/github"
)

// checkDownloadDir refuses a --download folder that cannot take the artifacts before the run
// is dispatched: found after the run, it would waste the hours of GPU the run took.
func checkDownloadDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--download %s: %w; nothing was dispatched", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("--download %s exists and is not a folder: choose another; nothing was dispatched", dir)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("--download %s already exists and is not empty: choose another folder or remove it; nothing was dispatched", dir)
	}
	return nil
}

// CheckWorkflowAtRef reads the workflow file at ref through the contents API and refuses a
// dispatch GitHub would answer with 422: the pushed workflow has no workflow_dispatch trigger,
// or lacks an input this dispatch sends (one added to the spec but not regenerated, committed
// or pushed). When the file cannot be read (not on the ref, a token without contents: read,
// an older GitHub Enterprise), it says nothing: GitHub's own answer is explained as before.
func (c *Client) CheckWorkflowAtRef(ctx context.Context, repo Repo, wf Workflow, ref string, sent []string) error {
	path := ".github/workflows/" + wf.File
	fc, _, resp, err := c.gh.Repositories.GetContents(ctx, repo.Owner, repo.Name, path, &github.RepositoryContentGetOptions{Ref: ref})
	if err != nil || fc == nil || (resp != nil && resp.StatusCode != http.StatusOK) {
		return nil
	}
	text, err := fc.GetContent()
	if err != nil {
		return nil
	}
	declared, dispatchable, ok := dispatchInputsOf([]byte(text))
	if !ok {
		return nil
	}
	command := "debugflow generate"
	if strings.HasSuffix(strings.TrimSuffix(wf.File, filepath.Ext(wf.File)), "_experiment") {
		command = "debugflow experiment workflow"
	}
	fix := fmt.Sprintf("regenerate it (%s -o %s), commit and push it to %s, then dispatch again", command, path, ref)
	if !dispatchable {
		return fmt.Errorf("%s on %s at GitHub has no workflow_dispatch trigger, so GitHub would refuse the dispatch (422): %s; nothing was dispatched", path, ref, fix)
	}
	var missing []string
	for _, name := range sent {
		if !slices.Contains(declared, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s on %s at GitHub does not declare the input(s) %s this dispatch sends, so GitHub would refuse it (422): the spec and the pushed workflow differ; %s; nothing was dispatched",
			path, ref, strings.Join(missing, ", "), fix)
	}
	return nil
}

// WorkflowDispatchInputs returns the workflow_dispatch input names of a workflow file and
// whether it has that trigger; ok is false when it does not parse as a workflow.
func WorkflowDispatchInputs(data []byte) (inputs []string, dispatchable, ok bool) {
	return dispatchInputsOf(data)
}

// dispatchInputsOf returns the workflow_dispatch input names a workflow declares; ok is false
// when the file does not parse as a workflow.
func dispatchInputsOf(data []byte) (inputs []string, dispatchable, ok bool) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil || doc == nil {
		return nil, false, false
	}
	on, found := doc["on"]
	if !found {
		on, found = doc["true"] // a YAML 1.1 reading of the key on
	}
	if !found {
		return nil, false, false
	}
	switch v := on.(type) {
	case string:
		return nil, v == "workflow_dispatch", true
	case []any:
		for _, e := range v {
			if e == "workflow_dispatch" {
				return nil, true, true
			}
		}
		return nil, false, true
	case map[string]any:
		wd, has := v["workflow_dispatch"]
		if !has {
			return nil, false, true
		}
		if m, isMap := wd.(map[string]any); isMap {
			if ins, isMap := m["inputs"].(map[string]any); isMap {
				for name := range ins {
					inputs = append(inputs, name)
				}
			}
		}
		return inputs, true, true
	}
	return nil, false, false
}
