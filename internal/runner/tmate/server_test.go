package tmate

import (
	"github.com/debugflow/debugflow/internal/testenv/golden"
	"path/filepath"
	"testing"
)

func TestServerConfigGolden(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"both_fingerprints", Options{ServerHost: "tmate.example.com", ServerPort: 2222,
			ServerRSAFingerprint:     "SHA256:Hthk2T/M/Ivqfk1YYUn5ijC2Att3+UPzD7Rn72P5VWs",
			ServerED25519Fingerprint: "SHA256:jfttvoypkHiQYUqUCwKeqd9d1fJj/ZiQlFOHVl6E9sI"}},
		{"ed25519_only_default_port", Options{ServerHost: "10.1.2.3", ServerPort: 22,
			ServerED25519Fingerprint: "SHA256:jfttvoypkHiQYUqUCwKeqd9d1fJj/ZiQlFOHVl6E9sI"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.o.validateServer(); err != nil {
				t.Fatal(err)
			}
			got := serverConfig(tc.o)
			golden.CheckString(t, filepath.Join("testdata", "golden", tc.name+".conf"), got)
		})
	}
}
