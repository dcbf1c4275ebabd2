package tmate

import (
	"fmt"
	"os"
	"strings"
)

// serverConfig renders the tmate configuration that points the session at a
// self-hosted tmate server. Values were validated by Options.validateServer
// (no quotes, blanks or newlines), so plain double quotes are safe.
func serverConfig(o Options) string {
	var b strings.Builder
	b.WriteString("# written by debugflow-step gate: self-hosted tmate server\n")
	fmt.Fprintf(&b, "set -g tmate-server-host \"%s\"\n", o.ServerHost)
	fmt.Fprintf(&b, "set -g tmate-server-port %d\n", o.ServerPort)
	if o.ServerRSAFingerprint != "" {
		fmt.Fprintf(&b, "set -g tmate-server-rsa-fingerprint \"%s\"\n", o.ServerRSAFingerprint)
	}
	if o.ServerED25519Fingerprint != "" {
		fmt.Fprintf(&b, "set -g tmate-server-ed25519-fingerprint \"%s\"\n", o.ServerED25519Fingerprint)
	}
	return b.String()
}

// writeServerConfig writes serverConfig to path.
func writeServerConfig(path string, o Options) error {
	if err := os.WriteFile(path, []byte(serverConfig(o)), 0o600); err != nil {
		return fmt.Errorf("writing tmate server config: %w", err)
	}
	return nil
}
