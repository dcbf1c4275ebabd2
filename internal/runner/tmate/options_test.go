package tmate

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseTimeoutMinutes(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr string
	}{
		{in: "30", want: 30},
		{in: "1", want: 1},
		{in: "360", want: 360},
		{in: " 45\n", want: 45}, // env: values may carry blanks
		{in: "", wantErr: "--timeout-minutes is empty: give a whole number of minutes from 1 to 360"},
		{in: "   ", wantErr: "is empty"},
		{in: "0", wantErr: "--timeout-minutes 0 is out of range: give an integer from 1 to 360"},
		{in: "361", wantErr: "361 is out of range"},
		{in: "99999999999999999999", wantErr: "is not a whole number of minutes"},
		{in: "abc", wantErr: `--timeout-minutes "abc" is not a whole number of minutes: give an integer from 1 to 360`},
		{in: "-5", wantErr: "is not a whole number"},
		{in: "+5", wantErr: "is not a whole number"},
		{in: "1.5", wantErr: "is not a whole number"},
		{in: "30m", wantErr: "is not a whole number"},
		{in: "3 0", wantErr: "is not a whole number"},
		{in: "${{ inputs.tmate_timeout_minutes }}", wantErr: "is not a whole number"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTimeoutMinutes("--timeout-minutes", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseTimeoutMinutes(%q) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				if !errors.Is(err, ErrInvalidInput) {
					t.Errorf("error does not wrap ErrInvalidInput: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseTimeoutMinutes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func FuzzParseTimeoutMinutes(f *testing.F) {
	for _, s := range []string{"30", "0", "360", "361", " 7 ", "", "abc", "-1", "+1", "1e3", "０"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseTimeoutMinutes("--timeout-minutes", s)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error does not wrap ErrInvalidInput: %v", err)
			}
			return
		}
		if n < MinTimeoutMinutes || n > MaxTimeoutMinutes {
			t.Fatalf("accepted %q as %d, out of range", s, n)
		}
		trimmed := strings.TrimSpace(s)
		for _, r := range trimmed {
			if r < '0' || r > '9' {
				t.Fatalf("accepted %q, which is not plain digits", s)
			}
		}
		if v, err := strconv.Atoi(trimmed); err != nil || v != n {
			t.Fatalf("accepted %q as %d", s, n)
		}
	})
}

func TestValidate(t *testing.T) {
	const fp = "SHA256:jfttvoypkHiQYUqUCwKeqd9d1fJj/ZiQlFOHVl6E9sI"
	tests := []struct {
		name    string
		o       Options
		wantErr string
		timeout int
		connect int
	}{
		{name: "minimal", o: Options{TimeoutMinutes: "30"}, timeout: 30},
		{name: "connect timeout", o: Options{TimeoutMinutes: "30", ConnectTimeoutMinutes: "10"}, timeout: 30, connect: 10},
		{name: "connect timeout off", o: Options{TimeoutMinutes: "30", ConnectTimeoutMinutes: "0"}, timeout: 30},
		{name: "bad connect timeout", o: Options{TimeoutMinutes: "30", ConnectTimeoutMinutes: "ten"}, wantErr: `--connect-timeout-minutes "ten"`},
		{name: "missing timeout", o: Options{}, wantErr: "--timeout-minutes is empty"},
		{name: "detach and wait", o: Options{TimeoutMinutes: "30", Detach: true, Wait: true}, wantErr: "--detach and --wait exclude each other"},
		{name: "empty continue file", o: Options{TimeoutMinutes: "30", ContinueFiles: []string{""}}, wantErr: "--continue-file must not be empty"},
		{name: "server", o: Options{TimeoutMinutes: "30", ServerHost: "tmate.example.com", ServerPort: 22, ServerED25519Fingerprint: fp}, timeout: 30},
		{name: "server md5 fingerprint", o: Options{TimeoutMinutes: "30", ServerHost: "10.0.0.1", ServerPort: 22, ServerRSAFingerprint: "MD5:aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99"}, timeout: 30},
		{name: "server without fingerprint", o: Options{TimeoutMinutes: "30", ServerHost: "tmate.example.com", ServerPort: 22}, wantErr: "needs the server's --server-rsa-fingerprint and/or --server-ed25519-fingerprint"},
		{name: "port without host", o: Options{TimeoutMinutes: "30", ServerPort: 2222}, wantErr: "need --server-host"},
		{name: "fingerprint without host", o: Options{TimeoutMinutes: "30", ServerRSAFingerprint: fp}, wantErr: "need --server-host"},
		{name: "bad host", o: Options{TimeoutMinutes: "30", ServerHost: `evil" ; run-shell "x`, ServerPort: 22, ServerRSAFingerprint: fp}, wantErr: "is not a host name"},
		{name: "bad port", o: Options{TimeoutMinutes: "30", ServerHost: "h", ServerPort: 70000, ServerRSAFingerprint: fp}, wantErr: "--server-port 70000 is out of range"},
		{name: "bad fingerprint", o: Options{TimeoutMinutes: "30", ServerHost: "h", ServerPort: 22, ServerED25519Fingerprint: `SHA256:x"`}, wantErr: `--server-ed25519-fingerprint "SHA256:x\"" is not an SSH fingerprint`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			timeout, connect, err := tc.o.validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("validate() error = %v, want %q", err, tc.wantErr)
				}
				if !errors.Is(err, ErrInvalidInput) {
					t.Errorf("error does not wrap ErrInvalidInput: %v", err)
				}
				return
			}
			if err != nil || timeout != tc.timeout || connect != tc.connect {
				t.Fatalf("validate() = %d, %d, %v; want %d, %d", timeout, connect, err, tc.timeout, tc.connect)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	env := map[string]string{
		"GITHUB_ACTOR":     "octocat",
		"GITHUB_TOKEN":     "tok",
		"GITHUB_API_URL":   "https://ghe.example.com/api/v3",
		"GITHUB_WORKSPACE": "/ws",
	}
	o := Options{Getenv: func(k string) string { return env[k] }, ServerHost: "h"}.withDefaults()
	if o.Actor != "octocat" || o.Token != "tok" || o.APIURL != "https://ghe.example.com/api/v3" || o.Workspace != "/ws" {
		t.Errorf("environment defaults not applied: %+v", o)
	}
	if o.Out != DefaultOut || len(o.ContinueFiles) != 1 || o.ContinueFiles[0] != DefaultContinueFile {
		t.Errorf("Out %q, ContinueFiles %q", o.Out, o.ContinueFiles)
	}
	if o.ServerPort != DefaultServerPort || o.PollInterval != DefaultPollInterval || o.AnnounceInterval != DefaultAnnounceInterval {
		t.Errorf("port %d poll %v announce %v", o.ServerPort, o.PollInterval, o.AnnounceInterval)
	}
	if o.Now == nil || o.Runner == nil || o.Action == nil || o.HTTPClient == nil || o.Stdout == nil || o.Stderr == nil {
		t.Error("a seam was left nil")
	}

	// Explicit values win over the environment; no API URL means github.com.
	o = Options{Getenv: func(string) string { return "" }, Actor: "me"}.withDefaults()
	if o.Actor != "me" || o.APIURL != defaultAPIURL {
		t.Errorf("Actor %q APIURL %q", o.Actor, o.APIURL)
	}
}
