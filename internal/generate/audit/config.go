package audit

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
)

// DefaultConfigPath is where `debugflow audit` looks for its config file, relative to the
// directory it runs in (the repository's root).
const DefaultConfigPath = ".github/debugflow-audit.yml"

// maxConfigBytes bounds the config file: a few lines.
const maxConfigBytes = 64 << 10

// Config is the audit's config file: what a repository accepts once, instead of flags on
// every run.
//
//	allow-write:                     # scope: the workflows (globs) whose jobs may write it
//	  contents: [.github/workflows/release.yml]
//	  id-token: ["*"]                # "*" or an empty list: every workflow
//	self-hosted-labels: [gpu-box]    # runners that are machines you keep
//	hosted-labels: [big-linux]       # GitHub larger runners named without a core count
type Config struct {
	AllowWrite       map[string][]string `yaml:"allow-write"`
	SelfHostedLabels []string            `yaml:"self-hosted-labels"`
	HostedLabels     []string            `yaml:"hosted-labels"`
}

// ParseConfig reads a config file's content; unknown keys are errors (a misspelt key must
// not silently allow nothing).
func ParseConfig(data []byte) (*Config, error) {
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("larger than %d KiB: not an audit config", maxConfigBytes>>10)
	}
	var c Config
	if err := yaml.UnmarshalWithOptions(data, &c, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("parse: %s", strings.TrimSpace(yaml.FormatError(err, false, false)))
	}
	for scope, files := range c.AllowWrite {
		if scope == "" {
			return nil, fmt.Errorf("allow-write: an empty scope")
		}
		for _, f := range files {
			if _, err := path.Match(f, ""); err != nil {
				return nil, fmt.Errorf("allow-write: %s: bad pattern %q: %w", scope, f, err)
			}
		}
	}
	return &c, nil
}

// Options returns the options the config gives the audit of the file at path (as given on
// the command line, relative to the repository's root or absolute).
func (c *Config) Options(file string) []Option {
	if c == nil {
		return nil
	}
	var opts []Option
	clean := filepath.ToSlash(filepath.Clean(file))
	for scope, files := range c.AllowWrite {
		if len(files) == 0 || slices.ContainsFunc(files, func(pattern string) bool {
			if pattern == "*" {
				return true
			}
			ok, _ := path.Match(pattern, clean)
			ok2, _ := path.Match(pattern, path.Base(clean))
			return ok || ok2 || strings.HasSuffix(clean, "/"+pattern)
		}) {
			opts = append(opts, WithAllowedWriteScopes(scope))
		}
	}
	if len(c.SelfHostedLabels) > 0 {
		opts = append(opts, WithSelfHostedLabels(c.SelfHostedLabels...))
	}
	if len(c.HostedLabels) > 0 {
		opts = append(opts, WithHostedLabels(c.HostedLabels...))
	}
	return opts
}
