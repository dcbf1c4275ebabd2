package tmate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkPollRound measures one round of the wait loop's end-condition
// checks against the tmate double: three continue files, the socket,
// has-session and #{tmate_num_clients} (two tmate processes). It bounds how
// cheap the default 1 s poll interval is.
func BenchmarkPollRound(b *testing.B) {
	dir := b.TempDir()
	sess := session{runner: ExecRunner{}, tmate: tmateDouble(), socket: filepath.Join(dir, "tmate.sock")}
	ctx := context.Background()
	if err := sess.start(ctx, "", ""); err != nil {
		b.Fatal(err)
	}
	defer os.Remove(sess.socket)
	w := newContinueWatch([]string{filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")})
	b.ResetTimer()
	for b.Loop() {
		if _, ok := w.triggered(); ok {
			b.Fatal("continue file")
		}
		if ok, why := sess.alive(ctx); !ok {
			b.Fatal(why)
		}
		if _, err := sess.numClients(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServerConfig measures rendering the self-hosted server config.
func BenchmarkServerConfig(b *testing.B) {
	o := Options{ServerHost: "tmate.example.com", ServerPort: 2222, ServerED25519Fingerprint: "SHA256:jfttvoypkHiQYUqUCwKeqd9d1fJj/ZiQlFOHVl6E9sI"}
	b.ReportAllocs()
	for b.Loop() {
		_ = serverConfig(o)
	}
}
