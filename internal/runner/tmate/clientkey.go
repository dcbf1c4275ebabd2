package tmate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// clientKeyNames are the key files tmate's SSH client (libssh) looks for in ~/.ssh. A fresh
// runner has none, and tmate cannot reach its server without one: the off-the-shelf tmate
// action creates them too.
var clientKeyNames = []string{"id_rsa", "id_ed25519", "id_ecdsa"}

// ensureClientKey creates ~/.ssh/id_rsa and ~/.ssh/id_ed25519 (no passphrase) when the user has
// no SSH key yet. It never fails the gate: when a key cannot be made it says so and tmate's
// own error, if any, follows.
func (g *gate) ensureClientKey(ctx context.Context) {
	home := g.o.Home
	if home == "" {
		g.logf("tmate: HOME is not set; not creating a client SSH key")
		return
	}
	dir := filepath.Join(home, ".ssh")
	for _, name := range clientKeyNames {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return
		}
	}
	keygen, err := g.o.Runner.LookPath("ssh-keygen")
	if err != nil {
		g.logf("tmate: no SSH key in %s and ssh-keygen is not installed (apt-get install openssh-client): tmate may fail to connect", dir)
		return
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		g.logf("tmate: cannot create %s: %v", dir, err)
		return
	}
	for _, kind := range []string{"rsa", "ed25519"} {
		path := filepath.Join(dir, "id_"+kind)
		if _, err := output(ctx, g.o.Runner, keygen, "-q", "-t", kind, "-N", "", "-C", "debugflow tmate gate", "-f", path); err != nil {
			g.logf("tmate: creating %s: %v", path, err)
			return
		}
	}
	g.logf("tmate: created the client SSH keys %s (tmate needs one to reach its server)", fmt.Sprintf("%s/id_{rsa,ed25519}", dir))
}
